// The plugin proof's verification runs, played through a scenario and judged against the ground truth.

package kargoverify

import (
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// Verification follows one verification run through a scenario.
type Verification struct {
	Name  string
	Stage string
	// Healthy reports whether Kargo would start the verification now.
	Healthy func(ro *v1alpha1.Rollout) (bool, error)
	Run     string
	Started int // tick, -1 until created
	// Hash is the revision it verifies: the released one for the verification at release, the current
	// one when Kargo starts it; want the outcome the scenario declares.
	Hash   string
	Want   string
	phases []string
	// Violations of the rules the plugin must keep; prevFailed the runs of its revision failed at the
	// previous tick.
	Violations []string
	PrevFailed []string
}

func (v *Verification) Note(phase string) {
	if phase == "" {
		phase = string(v1alpha1.AnalysisPhasePending)
	}
	if len(v.phases) == 0 || v.phases[len(v.phases)-1] != phase {
		v.phases = append(v.phases, phase)
	}
}

func (v *Verification) Sequence() string {
	if v.Started < 0 {
		return NotStarted
	}
	return strings.Join(v.phases, " → ")
}

func (v *Verification) Final() string {
	if len(v.phases) == 0 {
		return NotStarted
	}
	return v.phases[len(v.phases)-1]
}

// analysisState is the ground truth at a frame for one revision, from the Rollout's own runs of it as
// analysisruns selects them (the newest attempt of each analysis, and the runs its experiments own).
type analysisState struct {
	Passed bool // the revision is current and stable, and every run and experiment of it Successful
	// done: the revision is current and stable, and the release waits on none of its runs: each is
	// Successful or, still measuring, ended by the controller without a verdict
	// (analysisruns.EndedWithoutVerdict; such a run may still fail, so done is not passed)
	Done   bool
	Failed []string // runs Failed or Error
}

func GroundTruth(w *harness.World, ro *v1alpha1.Rollout, hash string) (analysisState, error) {
	promoted := hash != "" && ro.Status.StableRS == hash && ro.Status.CurrentPodHash == hash
	st := analysisState{Passed: promoted, Done: promoted}
	rollout, runs, exps, err := w.UnstructuredState()
	if err != nil {
		return st, err
	}
	rv := analysisruns.Of(rollout, runs, exps, hash)
	judge := func(o map[string]any) string {
		phase, _, _ := unstructured.NestedString(o, "status", "phase")
		switch v1alpha1.AnalysisPhase(phase) {
		case v1alpha1.AnalysisPhaseSuccessful:
		case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
			st.Passed, st.Done = false, false
		default:
			st.Passed = false
			if !analysisruns.EndedWithoutVerdict(rollout, o) {
				st.Done = false
			}
		}
		return phase
	}
	for _, e := range rv.Experiments {
		judge(e)
	}
	for _, r := range rv.Runs {
		if phase := judge(r.Object); phase == string(v1alpha1.AnalysisPhaseFailed) || phase == string(v1alpha1.AnalysisPhaseError) {
			st.Failed = append(st.Failed, r.Name+" "+phase)
		}
	}
	sort.Strings(st.Failed)
	return st, nil
}

func Note(seq []string, s string) []string {
	if len(seq) == 0 || seq[len(seq)-1] != s {
		return append(seq, s)
	}
	return seq
}
