// The one rule for "the runs of a revision, and the newest of each": a module of its own without
// dependencies, so that the main module (the plugin, the scripts' tests, the e2e replay) and the recorder
// modules (which pin other Kubernetes libraries for their Argo Rollouts controllers) share it.
module github.com/analysis-health/analysis-health/analysisruns

go 1.26
