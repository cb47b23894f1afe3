// Kargo's rules for a Stage promoted by argocd-update (Stage health from the Argo CD Application, the
// step's outcome, Freight verification): a module of its own without dependencies, so that the e2e replay
// (main module) and the live suite's Kargo driver (the recorder modules, which pin other Kubernetes
// libraries for their Argo Rollouts controllers) share one copy of them.
module github.com/analysis-health/analysis-health/e2e/kargo/stage

go 1.26
