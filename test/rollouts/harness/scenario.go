package harness

import (
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
	Step       = v1alpha1.RolloutTypeStepLabel
	Background = v1alpha1.RolloutTypeBackgroundRunLabel
	pre        = v1alpha1.RolloutTypePrePromotionLabel
	Post       = v1alpha1.RolloutTypePostPromotionLabel
)

func phase(p v1alpha1.AnalysisPhase) func(*v1alpha1.AnalysisRun) bool {
	return func(ar *v1alpha1.AnalysisRun) bool { return ar.Status.Phase == p }
}

// Catalogue is what the proofs play: the recorded scenarios and the no-analysis ones. Package scenarios
// holds it and the version modules hand it to each proof, so that no proof imports the catalogue.
type Catalogue struct {
	Scenarios  []Scenario
	NoAnalysis []NoAnalysisScenario
}

// Named is the scenario of that name; a no-analysis one as the live suite plays it.
func (c Catalogue) Named(name string) (Scenario, bool) {
	for _, sc := range c.Scenarios {
		if sc.Name == name {
			return sc, true
		}
	}
	for _, sc := range c.NoAnalysis {
		if sc.Name == name {
			return sc.liveScenario(), true
		}
	}
	return Scenario{}, false
}
