package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// timeline mirrors recorder.Timeline (e2e/recorder/scenarios.go); the two modules share only the YAML.
type timeline struct {
	Name            string  `json:"name"`
	Strategy        string  `json:"strategy"`
	Summary         string  `json:"summary"`
	Outcome         string  `json:"outcome"`
	Verdict         string  `json:"verdict"`
	Controller      string  `json:"controller"`
	Revision        string  `json:"revision"`
	PodTemplateHash string  `json:"podTemplateHash"`
	Frames          []frame `json:"frames"`
}

type frame struct {
	Frame        int              `json:"frame"`
	Time         string           `json:"time"`
	Reconcile    int              `json:"reconcile"`
	Events       []string         `json:"events"`
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns"`
	Experiments  []map[string]any `json:"experiments"`
}

const timelineDir = "testdata/timelines"

// versions are the Argo Rollouts releases the recorder modules record with (e2e/recorder: v1.8.5,
// e2e/recorder/v1.10: v1.10.2), one directory of timelines each.
var versions = []string{"v1.8.5", "v1.10.2"}

// loadTimelines reads every timeline recorded with a Rollouts version, canary before blue-green.
func loadTimelines(t testing.TB, version string) []*timeline {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(timelineDir, version, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*timeline
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tl timeline
		if err := yaml.UnmarshalStrict(raw, &tl); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if tl.Name+".yaml" != filepath.Base(p) || len(tl.Frames) == 0 || tl.Revision == "" || tl.PodTemplateHash == "" ||
			!strings.Contains(tl.Controller, "argo-rollouts "+version+",") {
			t.Fatalf("%s: not a complete timeline", p)
		}
		out = append(out, &tl)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Strategy != out[j].Strategy {
			return out[i].Strategy == "canary"
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func (f *frame) rollout() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: f.Rollout}
}

func (f *frame) runs() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, m := range f.AnalysisRuns {
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// offset is the frame's time relative to frame 0 (Argo CD applying the new revision).
func (tl *timeline) offset(i int) string {
	t0, err0 := time.Parse(time.RFC3339, tl.Frames[0].Time)
	ti, erri := time.Parse(time.RFC3339, tl.Frames[i].Time)
	if err0 != nil || erri != nil {
		return "?"
	}
	return fmt.Sprintf("+%ds", int(ti.Sub(t0).Seconds()))
}

func str(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// analysisRef identifies one analysis the revision has to pass: its rollout-type label and, for canary
// step analyses, the step index.
type analysisRef struct {
	Kind string // Step, Background, PrePromotion, PostPromotion (the rollout-type label); Experiment
	Step string
}

func (a analysisRef) String() string {
	if a.Kind == "Step" {
		return "step " + a.Step + " analysis"
	}
	if a.Kind == "Experiment" {
		return "step " + a.Step + " experiment"
	}
	return map[string]string{"Background": "background analysis", "PrePromotion": "pre-promotion analysis", "PostPromotion": "post-promotion analysis"}[a.Kind]
}

// expectedAnalyses are the analyses the Rollout spec asks of every revision (except the first, and a
// rollback to the stable revision, which the controller promotes without analysis). An experiment step
// counts as one analysis: the Experiment's phase is the verdict of its analyses
// (experiments/experiment.go assessAnalysisRuns).
func (tl *timeline) expectedAnalyses() []analysisRef {
	if tl.Outcome == "rolled-back" {
		return nil
	}
	ro := tl.Frames[len(tl.Frames)-1].Rollout
	var out []analysisRef
	steps, _, _ := unstructured.NestedSlice(ro, "spec", "strategy", "canary", "steps")
	for i, s := range steps {
		if m, ok := s.(map[string]any); ok && m["analysis"] != nil {
			out = append(out, analysisRef{Kind: "Step", Step: strconv.Itoa(i)})
		}
		if m, ok := s.(map[string]any); ok && m["experiment"] != nil {
			if ex, _ := m["experiment"].(map[string]any); ex != nil && ex["analyses"] != nil {
				out = append(out, analysisRef{Kind: "Experiment", Step: strconv.Itoa(i)})
			}
		}
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "canary", "analysis"); ok {
		out = append(out, analysisRef{Kind: "Background"})
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "blueGreen", "prePromotionAnalysis"); ok {
		out = append(out, analysisRef{Kind: "PrePromotion"})
	}
	if _, ok, _ := unstructured.NestedMap(ro, "spec", "strategy", "blueGreen", "postPromotionAnalysis"); ok {
		out = append(out, analysisRef{Kind: "PostPromotion"})
	}
	return out
}

// attempt is the collision counter of a run's name (utils/analysis CreateWithCollisionCounter names a
// re-run "<name>.1", "<name>.2", ...): a retry or a resume after an inconclusive result.
func attempt(name string) int {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return 0
	}
	return n
}

// latestRun is the newest attempt of an analysis for the delivered revision, or nil if none was created.
func (tl *timeline) latestRun(f *frame, a analysisRef) map[string]any {
	var best map[string]any
	if a.Kind == "Experiment" {
		// rollout/experiment.go GetExperimentFromTemplate: <rollout>-<podHash>-<revision>-<stepIndex>
		want := str(f.Rollout, "metadata", "name") + "-" + tl.PodTemplateHash + "-" + tl.Revision + "-" + a.Step
		for _, ex := range f.Experiments {
			if n := str(ex, "metadata", "name"); n == want || strings.HasPrefix(n, want+"-") {
				best = ex
			}
		}
		return best
	}
	for _, ar := range f.AnalysisRuns {
		if str(ar, "metadata", "annotations", "rollout.argoproj.io/revision") != tl.Revision ||
			str(ar, "metadata", "labels", "rollouts-pod-template-hash") != tl.PodTemplateHash ||
			str(ar, "metadata", "labels", "rollout-type") != a.Kind {
			continue
		}
		if a.Kind == "Step" && str(ar, "metadata", "labels", "step-index") != a.Step {
			continue
		}
		if best == nil || attempt(str(ar, "metadata", "name")) > attempt(str(best, "metadata", "name")) {
			best = ar
		}
	}
	return best
}

// released: the Rollout is fully promoted and no longer names the run as a current one.
func released(ro map[string]any, run string) bool {
	status, _ := ro["status"].(map[string]any)
	if str(status, "stableRS") == "" || str(status, "stableRS") != str(status, "currentPodHash") {
		return false
	}
	for _, path := range [][]string{
		{"canary", "currentStepAnalysisRunStatus", "name"},
		{"canary", "currentBackgroundAnalysisRunStatus", "name"},
		{"blueGreen", "prePromotionAnalysisRunStatus", "name"},
		{"blueGreen", "postPromotionAnalysisRunStatus", "name"},
		{"canary", "currentExperiment"},
	} {
		if str(status, path...) == run {
			return false
		}
	}
	return true
}

// verdicts is the ground truth of a frame, from the AnalysisRuns themselves (which Argo CD never
// aggregates into the Application): which of the revision's analyses passed, failed, were inconclusive.
type verdicts struct {
	// AllPassed: every analysis of the revision has a latest run that is Successful, or that the rollout
	// controller ended without a verdict: it terminated the run (spec.terminate; the analysis controller
	// then ends it Successful "Run Terminated" unless a metric already exceeded its limit,
	// analysis/analysis.go assessRunStatus), or it released the run because the revision is fully
	// promoted (rollout/analysis.go reconcileBackgroundAnalysisRun returns no current background run once
	// rolloututil.IsFullyPromoted, so the Rollout stops referencing it, and the next reconcile terminates
	// it with the other non-current runs in cancelAnalysisRuns). A run that is Failed, Errored or
	// Inconclusive never counts as passed, whatever the controller did with it.
	AllPassed bool
	Pending   []string // analyses not passed yet, with their run's phase
	Failed    []string // latest runs Failed or Error
	Incon     []string // latest runs Inconclusive
}

func (tl *timeline) verdicts(i int) verdicts {
	f := &tl.Frames[i]
	v := verdicts{AllPassed: true}
	for _, a := range tl.expectedAnalyses() {
		ar := tl.latestRun(f, a)
		if ar == nil {
			v.AllPassed = false
			v.Pending = append(v.Pending, a.String()+" not started")
			continue
		}
		name, phase := str(ar, "metadata", "name"), str(ar, "status", "phase")
		terminated := str(ar, "spec", "terminate") == "true" || released(f.Rollout, name)
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

// promotedAfter reports whether a user promoted the Rollout after the run reached its verdict.
func (tl *timeline) promotedAfter(run string, i int) bool {
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
func (tl *timeline) decidedAt(run string, i int) int {
	for j := 0; j <= i; j++ {
		for _, ar := range append(append([]map[string]any{}, tl.Frames[j].AnalysisRuns...), tl.Frames[j].Experiments...) {
			if str(ar, "metadata", "name") == run {
				switch str(ar, "status", "phase") {
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
func (tl *timeline) retriedAfter(run string, i int) bool {
	decided := tl.decidedAt(run, i)
	if decided < 0 {
		return false
	}
	for j := decided + 1; j <= i; j++ {
		if str(tl.Frames[j-1].Rollout, "status", "abort") == "true" && str(tl.Frames[j].Rollout, "status", "abort") != "true" {
			return true
		}
	}
	return false
}
