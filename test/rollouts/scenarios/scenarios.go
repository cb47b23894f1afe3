// Package scenarios is the catalogue the proofs play: the recorded canary and blue-green scenarios, each
// with the analysis verdict, Kargo verification and outcome it declares, and the no-analysis ones
// (Catalogue). RunRecord records them in the version's controllers and holds the committed timelines to
// what they record now.
package scenarios

import (
	"slices"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// Scripted measurements (thresholds in objects.go Templates).
var (
	good  = harness.OK(0.99)  // success-rate passes
	bad   = harness.OK(0.5)   // success-rate fails
	meh   = harness.OK(0.9)   // success-rate neither passes nor fails: Inconclusive
	low   = harness.OK(0.002) // error-rate passes
	high  = harness.OK(0.2)   // error-rate fails
	fuzzy = harness.OK(0.03)  // error-rate Inconclusive
	e500  = harness.HTTPError(500)
)

// stepAnalysisCanary: one canary pod, a step analysis (step index 1), half the pods, a 30 s pause.
func stepAnalysisCanary(template string) *v1alpha1.Rollout {
	return harness.CanaryRollout("", harness.SetWeight(25), harness.AnalysisStep(template), harness.SetWeight(50), harness.Pause(30))
}

func isAnalysisRun(s *harness.S, name string, cond func(*v1alpha1.AnalysisRun) bool) func(*v1alpha1.Rollout) bool {
	return func(*v1alpha1.Rollout) bool {
		for _, ar := range s.World.AnalysisRuns() {
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

// Catalogue is every scenario a proof plays: the recorded ones and the no-analysis ones, handed to the
// Plugin proof and the live suite by the version modules.
func Catalogue() harness.Catalogue {
	return harness.Catalogue{Scenarios: Scenarios, NoAnalysis: noAnalysisScenarios}
}
