// The plugin proof's verification runs, played through a scenario and judged against the ground truth.

package recorder

import (
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
)

// verification follows one verification run through a scenario.
type verification struct {
	name  string
	stage string
	// healthy reports whether Kargo would start the verification now.
	healthy func(ro *v1alpha1.Rollout) (bool, error)
	run     string
	started int // tick, -1 until created
	// hash is the revision it verifies: the released one for the verification at release, the current
	// one when Kargo starts it; want the outcome the scenario declares.
	hash   string
	want   string
	phases []string
	// violations of the rules the plugin must keep; prevFailed the runs of its revision failed at the
	// previous tick.
	violations []string
	prevFailed []string
}

func (v *verification) note(phase string) {
	if phase == "" {
		phase = string(v1alpha1.AnalysisPhasePending)
	}
	if len(v.phases) == 0 || v.phases[len(v.phases)-1] != phase {
		v.phases = append(v.phases, phase)
	}
}

func (v *verification) sequence() string {
	if v.started < 0 {
		return notStarted
	}
	return strings.Join(v.phases, " → ")
}

func (v *verification) final() string {
	if len(v.phases) == 0 {
		return notStarted
	}
	return v.phases[len(v.phases)-1]
}

// analysisState is the ground truth at a frame for one revision, from the Rollout's own runs of it as
// analysisruns selects them (the newest attempt of each analysis, and the runs its experiments own).
type analysisState struct {
	passed bool // the revision is current and stable, and every run and experiment of it Successful
	// done: the revision is current and stable, and the release waits on none of its runs: each is
	// Successful or, still measuring, ended by the controller without a verdict
	// (analysisruns.EndedWithoutVerdict; such a run may still fail, so done is not passed)
	done   bool
	failed []string // runs Failed or Error
}

func groundTruth(w *World, ro *v1alpha1.Rollout, hash string) (analysisState, error) {
	promoted := hash != "" && ro.Status.StableRS == hash && ro.Status.CurrentPodHash == hash
	st := analysisState{passed: promoted, done: promoted}
	rollout, runs, exps, err := w.unstructuredState()
	if err != nil {
		return st, err
	}
	rv := analysisruns.Of(rollout, runs, exps, hash)
	judge := func(o map[string]any) string {
		phase, _, _ := unstructured.NestedString(o, "status", "phase")
		switch v1alpha1.AnalysisPhase(phase) {
		case v1alpha1.AnalysisPhaseSuccessful:
		case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
			st.passed, st.done = false, false
		default:
			st.passed = false
			if !analysisruns.EndedWithoutVerdict(rollout, o) {
				st.done = false
			}
		}
		return phase
	}
	for _, e := range rv.Experiments {
		judge(e)
	}
	for _, r := range rv.Runs {
		if phase := judge(r.Object); phase == string(v1alpha1.AnalysisPhaseFailed) || phase == string(v1alpha1.AnalysisPhaseError) {
			st.failed = append(st.failed, r.Name+" "+phase)
		}
	}
	sort.Strings(st.failed)
	return st, nil
}

func note(seq []string, s string) []string {
	if len(seq) == 0 || seq[len(seq)-1] != s {
		return append(seq, s)
	}
	return seq
}
