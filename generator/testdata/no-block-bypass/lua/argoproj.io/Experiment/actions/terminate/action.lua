-- analysis-health: terminate an Experiment (spec.terminate = true): the Rollouts controller scales its
-- ReplicaSets down, terminates its analysis runs and completes it. A Rollout whose canary step runs the
-- experiment then acts on its final phase (Failed or Error abort it, Inconclusive pauses it; argo-rollouts
-- rollout/experiment.go). See docs/actions.md.
if type(obj.spec) ~= "table" then
  error("terminate: the Experiment has no spec", 0)
end
obj.spec.terminate = true
return obj
