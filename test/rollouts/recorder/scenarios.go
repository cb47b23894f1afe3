package recorder

import (
	"slices"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Scripted measurements (thresholds in objects.go Templates).
var (
	good  = OK(0.99)  // success-rate passes
	bad   = OK(0.5)   // success-rate fails
	meh   = OK(0.9)   // success-rate neither passes nor fails: Inconclusive
	low   = OK(0.002) // error-rate passes
	high  = OK(0.2)   // error-rate fails
	fuzzy = OK(0.03)  // error-rate Inconclusive
	e500  = HTTPError(500)
)

// stepAnalysisCanary: one canary pod, a step analysis (step index 1), half the pods, a 30 s pause.
func stepAnalysisCanary(template string) *v1alpha1.Rollout {
	return CanaryRollout("", SetWeight(25), AnalysisStep(template), SetWeight(50), Pause(30))
}

func isAnalysisRun(s *S, name string, cond func(*v1alpha1.AnalysisRun) bool) func(*v1alpha1.Rollout) bool {
	return func(*v1alpha1.Rollout) bool {
		for _, ar := range s.w.AnalysisRuns() {
			if ar.Name == name {
				return cond(&ar)
			}
		}
		return false
	}
}

func errorsMeasured(n int32) func(*v1alpha1.AnalysisRun) bool {
	return func(ar *v1alpha1.AnalysisRun) bool {
		return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Error >= n
	}
}

// Scenarios are every recorded timeline, canary first.
var Scenarios = slices.Concat(canaryScenarios, blueGreenScenarios)
