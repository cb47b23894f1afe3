package argocdcm

// madeBy maps a kind to the kinds its controller creates from it. Rendered manifests (helm template,
// kustomize build, a folder of YAML) hold what a user deploys, never these: the Rollouts controller makes
// the AnalysisRuns and Experiments of a Rollout's steps (rollout/analysis.go, rollout/experiment.go), the
// Experiment controller its AnalysisRuns, and Kargo a Stage's verification run from an AnalysisTemplate.
var madeBy = map[string][]string{
	"argoproj.io/Rollout":                 {"argoproj.io/AnalysisRun", "argoproj.io/Experiment"},
	"argoproj.io/Experiment":              {"argoproj.io/AnalysisRun"},
	"argoproj.io/AnalysisTemplate":        {"argoproj.io/AnalysisRun"},
	"argoproj.io/ClusterAnalysisTemplate": {"argoproj.io/AnalysisRun"},
}

// WithControllerMade is present (ConfigMapKey keys of deployed objects) with the kinds controllers make
// from them, so an argocd-cm key for an AnalysisRun counts as matched when a Rollout is deployed.
func WithControllerMade(present map[string]bool) map[string]bool {
	if present == nil {
		return nil
	}
	out := make(map[string]bool, len(present))
	for k := range present {
		out[k] = true
	}
	for changed := true; changed; {
		changed = false
		for k := range out {
			for _, m := range madeBy[k] {
				if !out[m] {
					out[m], changed = true, true
				}
			}
		}
	}
	return out
}
