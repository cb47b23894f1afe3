package timeline

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
)

// AnalysisRef identifies one analysis the revision has to pass: its rollout-type label and, for canary
// step analyses, the step index.
type AnalysisRef struct {
	Kind string // Step, Background, PrePromotion, PostPromotion (the rollout-type label); Experiment
	Step string
}

func (a AnalysisRef) String() string {
	if a.Kind == "Step" {
		return "step " + a.Step + " analysis"
	}
	if a.Kind == "Experiment" {
		return "step " + a.Step + " experiment"
	}
	return map[string]string{"Background": "background analysis", "PrePromotion": "pre-promotion analysis", "PostPromotion": "post-promotion analysis"}[a.Kind]
}

// ExpectedAnalyses are the analyses the Rollout spec asks of every revision (except the first, and a
// rollback to the stable revision, which the controller promotes without analysis). An experiment step
// counts as one analysis: the Experiment's phase is the verdict of its analyses
// (experiments/experiment.go assessAnalysisRuns).
func (tl *Timeline) ExpectedAnalyses() []AnalysisRef {
	if tl.Outcome == "rolled-back" {
		return nil
	}
	ro := tl.Frames[len(tl.Frames)-1].Rollout
	var out []AnalysisRef
	steps, _, _ := unstructured.NestedSlice(ro, "spec", "strategy", "canary", "steps")
	for i, s := range steps {
		m, _ := s.(map[string]any)
		if m["analysis"] != nil {
			out = append(out, AnalysisRef{Kind: "Step", Step: strconv.Itoa(i)})
		}
		if ex, _ := m["experiment"].(map[string]any); ex != nil && ex["analyses"] != nil {
			out = append(out, AnalysisRef{Kind: "Experiment", Step: strconv.Itoa(i)})
		}
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "canary", "analysis"); ok {
		out = append(out, AnalysisRef{Kind: "Background"})
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "blueGreen", "prePromotionAnalysis"); ok {
		out = append(out, AnalysisRef{Kind: "PrePromotion"})
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "blueGreen", "postPromotionAnalysis"); ok {
		out = append(out, AnalysisRef{Kind: "PostPromotion"})
	}
	return out
}

// LatestRun is the newest attempt of an analysis for the delivered revision in frame f (an Experiment for
// an experiment step), or nil if none was created: analysisruns decides which run is the newest.
func (tl *Timeline) LatestRun(f *Frame, a AnalysisRef) map[string]any {
	rv := analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, tl.PodTemplateHash)
	if a.Kind == "Experiment" {
		// rollout/experiment.go GetExperimentFromTemplate: <rollout>-<podHash>-<revision>-<stepIndex>
		want := Str(f.Rollout, "metadata", "name") + "-" + tl.PodTemplateHash + "-" + tl.Revision + "-" + a.Step
		for _, ex := range rv.Experiments {
			if n := Str(ex, "metadata", "name"); n == want || strings.HasPrefix(n, want+"-") {
				return ex
			}
		}
		return nil
	}
	key := a.Kind
	if a.Kind == "Step" {
		key += "/" + a.Step
	}
	r, ok := rv.Newest(key)
	if !ok || strconv.Itoa(r.Revision) != tl.Revision {
		return nil
	}
	return r.Object
}

// Verdicts is the ground truth of a frame, from the AnalysisRuns themselves (which Argo CD never
// aggregates into the Application): which of the revision's analyses passed, failed, were inconclusive.
type Verdicts struct {
	// AllPassed: every analysis of the revision has a latest run that is Successful, or that the rollout
	// controller ended without a verdict (analysisruns.EndedWithoutVerdict: it terminated the run, or
	// released it because the revision is fully promoted). A run that is Failed, Errored or Inconclusive
	// never counts as passed, whatever the controller did with it.
	AllPassed bool
	Pending   []string // analyses not passed yet, with their run's phase
	Failed    []string // latest runs Failed or Error
	Incon     []string // latest runs Inconclusive
}

// Verdicts are frame i's verdicts.
func (tl *Timeline) Verdicts(i int) Verdicts {
	f := &tl.Frames[i]
	v := Verdicts{AllPassed: true}
	for _, a := range tl.ExpectedAnalyses() {
		ar := tl.LatestRun(f, a)
		if ar == nil {
			v.AllPassed = false
			v.Pending = append(v.Pending, a.String()+" not started")
			continue
		}
		name, phase := Str(ar, "metadata", "name"), Str(ar, "status", "phase")
		terminated := analysisruns.EndedWithoutVerdict(f.Rollout, ar)
		switch phase {
		case "Successful":
		case "Failed", "Error", "Inconclusive":
			if phase == "Inconclusive" && tl.promotedAfter(name, i) {
				// the user promoted past the inconclusive analysis (kubectl argo rollouts promote): the
				// user's verdict replaces the analysis controller's
				break
			}
			v.AllPassed = false
			switch {
			case tl.retriedAfter(name, i):
				// the user retried the update after this run's verdict: the controller will run the
				// analysis again, so it is pending until the new run exists
				v.Pending = append(v.Pending, fmt.Sprintf("%s %s, retried", name, phase))
			case phase == "Inconclusive":
				v.Incon = append(v.Incon, name+" Inconclusive")
			default:
				v.Failed = append(v.Failed, fmt.Sprintf("%s %s", name, phase))
			}
		default:
			if !terminated {
				v.AllPassed = false
				if phase == "" {
					phase = "Pending"
				}
				v.Pending = append(v.Pending, fmt.Sprintf("%s %s", name, phase))
			}
		}
	}
	return v
}

// AllVerdicts are the verdicts of every frame.
func (tl *Timeline) AllVerdicts() []Verdicts {
	out := make([]Verdicts, len(tl.Frames))
	for i := range tl.Frames {
		out[i] = tl.Verdicts(i)
	}
	return out
}

// promotedAfter reports whether a user promoted the Rollout after the run reached its verdict.
func (tl *Timeline) promotedAfter(run string, i int) bool {
	decided := tl.decidedAt(run, i)
	if decided < 0 {
		return false
	}
	for j := decided + 1; j <= i; j++ {
		for _, ev := range tl.Frames[j].Events {
			if strings.HasPrefix(ev, "user runs kubectl argo rollouts promote") {
				return true
			}
		}
	}
	return false
}

// decidedAt is the first frame at or before i in which the run (or experiment) has a verdict.
func (tl *Timeline) decidedAt(run string, i int) int {
	for j := 0; j <= i; j++ {
		for _, ar := range append(append([]map[string]any{}, tl.Frames[j].AnalysisRuns...), tl.Frames[j].Experiments...) {
			if Str(ar, "metadata", "name") == run {
				switch Str(ar, "status", "phase") {
				case "Failed", "Error", "Inconclusive":
					return j
				}
			}
		}
	}
	return -1
}

// retriedAfter reports whether, by frame i, a user retried the aborted update after the run reached its
// verdict: status.abort went from true to unset between two frames at or after the verdict's frame
// (the Argo CD retry action, or `kubectl argo rollouts retry`; the controller then creates a new run,
// utils/analysis CreateWithCollisionCounter "<name>.1").
func (tl *Timeline) retriedAfter(run string, i int) bool {
	decided := tl.decidedAt(run, i)
	if decided < 0 {
		return false
	}
	for j := decided + 1; j <= i; j++ {
		if Str(tl.Frames[j-1].Rollout, "status", "abort") == "true" && Str(tl.Frames[j].Rollout, "status", "abort") != "true" {
			return true
		}
	}
	return false
}
