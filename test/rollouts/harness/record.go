// Recording a scenario: its timeline and the verdict of its analysis.

package harness

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// Timeline is what gets written to ../testdata/timelines/<name>.yaml.
type Timeline struct {
	Name     string  `json:"name"`
	Strategy string  `json:"strategy"`
	Summary  string  `json:"summary"`
	Outcome  Outcome `json:"outcome"`
	Verdict  string  `json:"verdict"`
	// Verification is Scenario.Verification.
	Verification string `json:"verification"`
	Controller   string `json:"controller"`
	// Revision and PodTemplateHash identify the revision being delivered (the new Freight).
	Revision        string  `json:"revision"`
	PodTemplateHash string  `json:"podTemplateHash"`
	Frames          []Frame `json:"frames"`
}

// ControllerVersion describes the controllers the timelines come from.
func ControllerVersion() string {
	return "github.com/argoproj/argo-rollouts " + RolloutsVersion() +
		", packages rollout, analysis and experiments, on kube-apiserver v1.34.5 (see test/rollouts/harness/harness.go)"
}

// Record plays a scenario on a fresh World of env.
func Record(env *Env, sc Scenario) (tl *Timeline, err error) {
	w, err := env.NewWorld(sc.Options)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(ScriptError)
			if !ok {
				panic(r)
			}
			tl, err = nil, se.Err
		}
	}()
	sc.Play(&S{World: w})
	if n := w.RefusedWrites(); n > 0 {
		return nil, fmt.Errorf("the scenario tried to write %d AnalysisRun/Experiment objects; only the controllers may", n)
	}
	if errs := w.SyncErrors(); len(errs) > 0 {
		return nil, fmt.Errorf("the controllers failed to reconcile: %v", errs)
	}
	ro := w.Rollout()
	switch sc.Outcome {
	case OutcomePromoted, OutcomeRolledBack:
		if !Promoted(ro) || ro.Status.Phase != v1alpha1.RolloutPhaseHealthy {
			var exps []string
			for _, ex := range w.Experiments() {
				exps = append(exps, fmt.Sprintf("%s %s %q terminate=%v", ex.Name, ex.Status.Phase, ex.Status.Message, ex.Spec.Terminate))
			}
			return nil, fmt.Errorf("expected the new revision promoted and Healthy, ended %s %q (stable %s, current %s; experiments %v)", ro.Status.Phase, ro.Status.Message, ro.Status.StableRS, ro.Status.CurrentPodHash, exps)
		}
	case OutcomeAborted:
		if !Aborted(ro) {
			return nil, fmt.Errorf("expected the update aborted, ended %s %q", ro.Status.Phase, ro.Status.Message)
		}
	}
	if got := w.Verdict(); got != sc.Verdict {
		return nil, fmt.Errorf("analysis verdict %q, the scenario expects %q", got, sc.Verdict)
	}
	return &Timeline{
		Name: sc.Name, Strategy: sc.Strategy, Summary: sc.Summary, Outcome: sc.Outcome, Verdict: sc.Verdict,
		Verification:    sc.Verification,
		Controller:      ControllerVersion(),
		Revision:        RevisionOf(ro),
		PodTemplateHash: ro.Status.CurrentPodHash,
		Frames:          w.Frames(),
	}, nil
}

// Verdict is the final phase of every analysis of the Rollout's current revision, as the analysis
// controller left it (see Scenario.Verdict): every attempt of every analysis of the revision, as
// analysisruns selects them, by name.
func (w *World) Verdict() string {
	ro := w.Rollout()
	rev, hash := RevisionOf(ro), ro.Status.CurrentPodHash
	rollout, runs, exps, err := w.UnstructuredState()
	if err != nil {
		return "cannot convert the objects: " + err.Error()
	}
	rv := analysisruns.Of(rollout, runs, exps, hash)
	all := append(append([]analysisruns.Run{}, rv.Runs...), rv.Superseded...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var out []string
	for _, r := range all {
		if r.Type != analysisruns.Experiment && strconv.Itoa(r.Revision) != rev {
			continue
		}
		suffix := ""
		if i := strings.LastIndex(r.Name, "."); i >= 0 {
			suffix = r.Name[i:]
		}
		var which string
		switch r.Type {
		case analysisruns.Experiment:
			which = "experiment " + strings.TrimPrefix(strings.TrimSuffix(r.Name, suffix), r.Experiment+"-")
		case analysisruns.Step:
			which = "step " + strconv.Itoa(r.Step)
		case analysisruns.Background:
			which = "background"
		case analysisruns.PrePromotion:
			which = "pre"
		case analysisruns.PostPromotion:
			which = "post"
		}
		phase, _, _ := unstructured.NestedString(r.Object, "status", "phase")
		out = append(out, fmt.Sprintf("%s%s %s", which, suffix, phase))
	}
	return strings.Join(out, "; ")
}

// UnstructuredState is the Rollout and the Rollout's namespace's AnalysisRuns (but Kargo's verification
// runs) and Experiments as decoded objects, as analysisruns reads them.
func (w *World) UnstructuredState() (map[string]any, []map[string]any, []map[string]any, error) {
	rollout, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w.Rollout())
	if err != nil {
		return nil, nil, nil, err
	}
	var runs, exps []map[string]any
	for _, ar := range w.AnalysisRuns() {
		if ar.Labels[KargoStageLabel] != "" {
			continue
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ar)
		if err != nil {
			return nil, nil, nil, err
		}
		runs = append(runs, u)
	}
	for _, ex := range w.Experiments() {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ex)
		if err != nil {
			return nil, nil, nil, err
		}
		exps = append(exps, u)
	}
	return rollout, runs, exps, nil
}

// TimelineDir is where the timelines of this build's Rollouts version live.
func TimelineDir() string {
	return filepath.Join(cluster.TestdataDir(), "timelines", RolloutsVersion())
}

// KargoStageLabel is the label Kargo puts on a verification run, naming the Stage (kargo.md §2.6): a run
// with it is Kargo's, never one of the Rollout's own.
const KargoStageLabel = "kargo.akuity.io/stage"
