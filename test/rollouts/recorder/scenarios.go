package recorder

import (
	"slices"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Outcome is how a scenario ends for the revision being delivered.
type Outcome string

const (
	// Promoted: the new revision became the stable one.
	OutcomePromoted Outcome = "promoted"
	// Aborted: the controller aborted the update (Degraded).
	OutcomeAborted Outcome = "aborted"
)

// OutcomeRolledBack: the delivered revision was the stable one again (a rollback), which the controller
// promotes without analysis.
const OutcomeRolledBack Outcome = "rolled-back"

// Scenario is one recorded timeline.
type Scenario struct {
	Name     string
	Strategy string
	Summary  string
	Outcome  Outcome
	// Verdict is the analysis verdict the scenario expects: the phase each analysis of the delivered
	// revision ends in, as "<which> <phase>" in the order of the runs' names (which: step N, background,
	// pre, post, experiment <analysis>; a re-run gets the name's collision counter, e.g. step 1.1).
	// Record fails if the analysis controller's runs end otherwise.
	Verdict string
	// Verification is the outcome a Kargo verification of the released Freight must end in when it starts
	// at the release (the plugin pins the released revision); Kargo the outcome of the verifications
	// started in Kargo's order, at the first Healthy Stage (with the built-in health and with ours), or
	// "not started" when the Stage never becomes Healthy. A rolled-back, bypassed or replaced revision is
	// never Successful.
	Verification string
	Kargo        string
	Options      Options
	Play         func(s *S)
}

const (
	step       = v1alpha1.RolloutTypeStepLabel
	background = v1alpha1.RolloutTypeBackgroundRunLabel
	pre        = v1alpha1.RolloutTypePrePromotionLabel
	post       = v1alpha1.RolloutTypePostPromotionLabel
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

func phase(p v1alpha1.AnalysisPhase) func(*v1alpha1.AnalysisRun) bool {
	return func(ar *v1alpha1.AnalysisRun) bool { return ar.Status.Phase == p }
}

func errorsMeasured(n int32) func(*v1alpha1.AnalysisRun) bool {
	return func(ar *v1alpha1.AnalysisRun) bool {
		return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Error >= n
	}
}

// Scenarios are every recorded timeline, canary first.
var Scenarios = slices.Concat(canaryScenarios, blueGreenScenarios)
