package reliabilitydoc

// notes are what the figures above do not say by themselves: the behaviour of the faults that the
// Rollouts controller decides, with the upstream code that decides it (paths relative to
// github.com/argoproj/argo-rollouts@v1.8.5).
const notes = `## What the faults showed

`
