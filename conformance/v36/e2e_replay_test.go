package v36

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
)

// The end-to-end replay of e2e/ (Argo CD v2.14, main module) through Argo CD v3.6.1: the same committed
// Rollouts v1.8.5 and v1.10.2 controller timelines, the same Kargo rules. e2e's package cannot be imported
// (it builds Argo CD v2), so the timeline format and the verdict and Kargo rules below follow
// e2e/timeline_test.go and e2e/kargo_test.go; keep them in step.

const e2eDir = "../../e2e/testdata"

var replayVersions = []string{"v1.8.5", "v1.10.2"}

type replayTimeline struct {
	Name            string        `json:"name"`
	Strategy        string        `json:"strategy"`
	Summary         string        `json:"summary"`
	Outcome         string        `json:"outcome"`
	Verdict         string        `json:"verdict"`
	Controller      string        `json:"controller"`
	Revision        string        `json:"revision"`
	PodTemplateHash string        `json:"podTemplateHash"`
	Frames          []replayFrame `json:"frames"`
}

type replayFrame struct {
	Frame        int              `json:"frame"`
	Time         string           `json:"time"`
	Reconcile    int              `json:"reconcile"`
	Events       []string         `json:"events"`
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns"`
	Experiments  []map[string]any `json:"experiments"`
}

func loadReplayTimelines(t *testing.T, version string) []*replayTimeline {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(e2eDir, "timelines", version, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*replayTimeline
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tl replayTimeline
		if err := yaml.UnmarshalStrict(raw, &tl); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if tl.Name+".yaml" != filepath.Base(p) || len(tl.Frames) == 0 || tl.Revision == "" || tl.PodTemplateHash == "" ||
			!strings.Contains(tl.Controller, "argo-rollouts "+version+",") {
			t.Fatalf("%s: not a complete timeline", p)
		}
		out = append(out, &tl)
	}
	return out
}

func field(obj map[string]any, path ...string) string {
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

type analysisRef struct{ Kind, Step string }

// expectedAnalyses: e2e/timeline_test.go expectedAnalyses (an experiment step counts as one analysis).
func (tl *replayTimeline) expectedAnalyses() []analysisRef {
	if tl.Outcome == "rolled-back" {
		return nil
	}
	ro := tl.Frames[len(tl.Frames)-1].Rollout
	var out []analysisRef
	steps, _, _ := unstructured.NestedSlice(ro, "spec", "strategy", "canary", "steps")
	for i, s := range steps {
		m, _ := s.(map[string]any)
		if m["analysis"] != nil {
			out = append(out, analysisRef{"Step", strconv.Itoa(i)})
		}
		if ex, _ := m["experiment"].(map[string]any); ex != nil && ex["analyses"] != nil {
			out = append(out, analysisRef{"Experiment", strconv.Itoa(i)})
		}
	}
	for kind, path := range map[string][]string{
		"Background":    {"canary", "analysis"},
		"PrePromotion":  {"blueGreen", "prePromotionAnalysis"},
		"PostPromotion": {"blueGreen", "postPromotionAnalysis"},
	} {
		if _, ok, _ := unstructured.NestedMap(ro, append([]string{"spec", "strategy"}, path...)...); ok {
			out = append(out, analysisRef{Kind: kind})
		}
	}
	return out
}

// attempt is the collision counter of a run's name ("<name>.1", utils/analysis CreateWithCollisionCounter).
func attempt(name string) int {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(name[i+1:])
	return n
}

func (tl *replayTimeline) latestRun(f *replayFrame, a analysisRef) map[string]any {
	var best map[string]any
	if a.Kind == "Experiment" {
		want := field(f.Rollout, "metadata", "name") + "-" + tl.PodTemplateHash + "-" + tl.Revision + "-" + a.Step
		for _, ex := range f.Experiments {
			if n := field(ex, "metadata", "name"); n == want || strings.HasPrefix(n, want+"-") {
				best = ex
			}
		}
		return best
	}
	for _, ar := range f.AnalysisRuns {
		if field(ar, "metadata", "annotations", "rollout.argoproj.io/revision") != tl.Revision ||
			field(ar, "metadata", "labels", "rollouts-pod-template-hash") != tl.PodTemplateHash ||
			field(ar, "metadata", "labels", "rollout-type") != a.Kind ||
			(a.Kind == "Step" && field(ar, "metadata", "labels", "step-index") != a.Step) {
			continue
		}
		if best == nil || attempt(field(ar, "metadata", "name")) > attempt(field(best, "metadata", "name")) {
			best = ar
		}
	}
	return best
}

func released(ro map[string]any, run string) bool {
	status, _ := ro["status"].(map[string]any)
	if field(status, "stableRS") == "" || field(status, "stableRS") != field(status, "currentPodHash") {
		return false
	}
	for _, path := range [][]string{
		{"canary", "currentStepAnalysisRunStatus", "name"},
		{"canary", "currentBackgroundAnalysisRunStatus", "name"},
		{"blueGreen", "prePromotionAnalysisRunStatus", "name"},
		{"blueGreen", "postPromotionAnalysisRunStatus", "name"},
		{"canary", "currentExperiment"},
	} {
		if field(status, path...) == run {
			return false
		}
	}
	return true
}

// replayVerdicts is a frame's ground truth from the AnalysisRuns (e2e/timeline_test.go verdicts).
type replayVerdicts struct {
	AllPassed      bool
	Failed, Incon  []string
	pendingReasons []string
}

func (tl *replayTimeline) verdicts(i int) replayVerdicts {
	f := &tl.Frames[i]
	v := replayVerdicts{AllPassed: true}
	for _, a := range tl.expectedAnalyses() {
		ar := tl.latestRun(f, a)
		if ar == nil {
			v.AllPassed = false
			v.pendingReasons = append(v.pendingReasons, a.Kind+a.Step+" not started")
			continue
		}
		name, phase := field(ar, "metadata", "name"), field(ar, "status", "phase")
		switch phase {
		case "Successful":
		case "Failed", "Error", "Inconclusive":
			if phase == "Inconclusive" && tl.eventAfter(name, i, func(j int) bool {
				for _, ev := range tl.Frames[j].Events {
					if strings.HasPrefix(ev, "user runs kubectl argo rollouts promote") {
						return true
					}
				}
				return false
			}) {
				break // the user promoted past it: the user's verdict replaces the analysis controller's
			}
			v.AllPassed = false
			switch {
			case tl.eventAfter(name, i, func(j int) bool {
				return field(tl.Frames[j-1].Rollout, "status", "abort") == "true" && field(tl.Frames[j].Rollout, "status", "abort") != "true"
			}):
				v.pendingReasons = append(v.pendingReasons, name+" "+phase+", retried")
			case phase == "Inconclusive":
				v.Incon = append(v.Incon, name+" Inconclusive")
			default:
				v.Failed = append(v.Failed, name+" "+phase)
			}
		default:
			if field(ar, "spec", "terminate") != "true" && !released(f.Rollout, name) {
				v.AllPassed = false
				v.pendingReasons = append(v.pendingReasons, name+" "+phase)
			}
		}
	}
	return v
}

// eventAfter reports whether happened(j) holds for a frame j after the run's verdict and at or before i.
func (tl *replayTimeline) eventAfter(run string, i int, happened func(j int) bool) bool {
	decided := -1
	for j := 0; j <= i && decided < 0; j++ {
		for _, ar := range append(append([]map[string]any{}, tl.Frames[j].AnalysisRuns...), tl.Frames[j].Experiments...) {
			if p := field(ar, "status", "phase"); field(ar, "metadata", "name") == run && (p == "Failed" || p == "Error" || p == "Inconclusive") {
				decided = j
			}
		}
	}
	if decided < 0 {
		return false
	}
	for j := decided + 1; j <= i; j++ {
		if happened(j) {
			return true
		}
	}
	return false
}

// stageHealthFor is Kargo v1.11.2's stageHealthForAppHealth (e2e/kargo_test.go, shared/reference/kargo.md).
func stageHealthFor(app health.HealthStatusCode) string {
	switch app {
	case health.HealthStatusHealthy:
		return "Healthy"
	case health.HealthStatusProgressing, "", health.HealthStatusSuspended:
		return "Progressing"
	default:
		return "Unhealthy"
	}
}

// appHealth aggregates the Application's health over its managed resources. v3.6.1's controller/health.go
// setApplicationHealth is unexported and only reachable through CompareAppState (a live-state cache and
// repo plumbing), so this follows its loop: start Healthy, take each managed resource's GetResourceHealth
// with the argocd-cm overrides, keep the worse (health.IsWorse). The only managed resource is the Rollout:
// gitops-engine drops objects with ownerReferences (the AnalysisRuns) from the managed set, as e2e's
// TestAnalysisRunsAreNotManaged shows on v2.14 and gitops-engine/v3 pkg/cache GetManagedLiveObjs still does.
func appHealth(managed []*health.HealthStatus) health.HealthStatusCode {
	app := health.HealthStatusHealthy
	for _, hs := range managed {
		if hs != nil && health.IsWorse(app, hs.Status) {
			app = hs.Status
		}
	}
	return app
}

// replayProblems are the Kargo-rule violations of one installation's view of a timeline, worded as in
// e2e/e2e_test.go problems (without the barrier-sync rule, which this replay does not run).
func replayProblems(tl *replayTimeline, vs []replayVerdicts, app []health.HealthStatusCode) []string {
	var out []string
	verified := -1
	stages := make([]string, len(app))
	for i, a := range app {
		stages[i] = stageHealthFor(a)
		if stages[i] == "Healthy" && verified < 0 {
			verified = i // Kargo verifies at the first Healthy assessment and never un-verifies
		}
	}
	if verified >= 0 && !vs[verified].AllPassed {
		why := append(append(append([]string{}, vs[verified].Failed...), vs[verified].Incon...), vs[verified].pendingReasons...)
		out = append(out, fmt.Sprintf("verified at frame %d although not every analysis passed (%s)", verified, strings.Join(why, ", ")))
	}
	for i := range app {
		if len(vs[i].Failed) > 0 && stages[i] != "Unhealthy" {
			out = append(out, fmt.Sprintf("Stage %s, not Unhealthy, at frame %d while %s", stages[i], i, strings.Join(vs[i].Failed, ", ")))
		}
		if len(vs[i].Incon) > 0 && stages[i] == "Healthy" {
			out = append(out, fmt.Sprintf("Stage Healthy at frame %d while %s", i, strings.Join(vs[i].Incon, ", ")))
		}
	}
	if last := len(app) - 1; tl.Outcome == "promoted" && vs[last].AllPassed && verified < 0 {
		out = append(out, "never verified although every analysis passed and the update was promoted")
	}
	return out
}

// replayKnownLimits are e2e's knownLimits (docs/why.md "What no Rollout script can see"), per frame and
// without the barrier rule: the background run fails after the controller wrote the promotion, and no
// field of the Rollout shows it.
var replayKnownLimits = map[string][]string{
	"v1.8.5/canary-background-failed-after-promotion": {
		"Stage Healthy, not Unhealthy, at frame 18 while checkout-54d7c4976f-2 Failed",
	},
	"v1.10.2/canary-background-failed-after-promotion": {
		"verified at frame 19 although not every analysis passed (checkout-d75d5bf65-2 Failed)",
		"Stage Healthy, not Unhealthy, at frame 19 while checkout-d75d5bf65-2 Failed",
	},
}

// TestE2EReplayArgoCDv36 replays every recorded frame through v3.6.1's util/settings overrides and
// gitops-engine/v3 GetResourceHealth, with our argocd-cm and with the built-in scripts, and holds our
// scripts to Kargo's rules and to the Rollout health Argo CD v2.14 gives (e2e/testdata/argocd-v2.14-rollout-health.yaml,
// kept current by e2e TestRolloutHealthGolden).
func TestE2EReplayArgoCDv36(t *testing.T) {
	data := map[string]string{}
	for _, k := range lua.Kinds() {
		s, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.health."+k.ConfigMapSuffix()] = s
	}
	installs := map[string]health.HealthOverride{
		"ours":     argolua.ResourceHealthOverrides(overrides(t, data)),
		"built-in": argolua.ResourceHealthOverrides(overrides(t, nil)),
	}
	raw, err := os.ReadFile(filepath.Join(e2eDir, "argocd-v2.14-rollout-health.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v214 map[string]map[string][]string
	if err := yaml.UnmarshalStrict(raw, &v214); err != nil {
		t.Fatalf("argocd-v2.14-rollout-health.yaml: %v", err)
	}
	for _, version := range replayVersions {
		timelines := loadReplayTimelines(t, version)
		if len(timelines) < 30 {
			t.Fatalf("%s: %d timelines, want at least 30", version, len(timelines))
		}
		frames, builtinProblems := 0, 0
		for _, tl := range timelines {
			vs := make([]replayVerdicts, len(tl.Frames))
			apps := map[string][]health.HealthStatusCode{}
			var oursRollout []string
			for i := range tl.Frames {
				vs[i] = tl.verdicts(i)
				for name, ov := range installs {
					hs, err := health.GetResourceHealth(&unstructured.Unstructured{Object: tl.Frames[i].Rollout}, ov)
					if err != nil {
						t.Fatalf("%s/%s frame %d, %s: GetResourceHealth: %v", version, tl.Name, i, name, err)
					}
					apps[name] = append(apps[name], appHealth([]*health.HealthStatus{hs}))
					if name == "ours" {
						if hs == nil {
							hs = &health.HealthStatus{}
						}
						oursRollout = append(oursRollout, string(hs.Status)+": "+hs.Message)
					}
				}
			}
			frames += len(tl.Frames)
			builtinProblems += len(replayProblems(tl, vs, apps["built-in"]))
			t.Run(version+"/"+tl.Name, func(t *testing.T) {
				if got, want := replayProblems(tl, vs, apps["ours"]), replayKnownLimits[version+"/"+tl.Name]; !reflect.DeepEqual(got, want) {
					t.Errorf("with our scripts on v3.6.1, Kargo disagrees with the analysis verdict:\n  got:  %q\n  want: %q", got, want)
				}
				want, ok := v214[version][tl.Name]
				if !ok {
					t.Fatalf("no Argo CD v2.14 health for this timeline (run make e2e UPDATE=1)")
				}
				if len(want) != len(oursRollout) {
					t.Fatalf("%d frames, v2.14 golden has %d", len(oursRollout), len(want))
				}
				for i := range want {
					if oursRollout[i] != want[i] {
						t.Errorf("frame %d: Rollout health on v3.6.1 %q, on v2.14 %q", i, oursRollout[i], want[i])
					}
				}
				for i, st := range apps["ours"] {
					// Kargo would call an Unknown or Missing Application Unhealthy
					if st == health.HealthStatusUnknown || st == health.HealthStatusMissing {
						t.Errorf("frame %d: Application %s with our scripts", i, st)
					}
				}
				last := len(tl.Frames) - 1
				wantFinal := map[string]health.HealthStatusCode{"promoted": health.HealthStatusHealthy, "rolled-back": health.HealthStatusHealthy,
					"aborted": health.HealthStatusDegraded}[tl.Outcome]
				if got := apps["ours"][last]; got != wantFinal {
					t.Errorf("final Application health %s, want %s for a timeline that ends %s", got, wantFinal, tl.Outcome)
				}
			})
		}
		// the rules must be able to fail: the built-in script, which ignores the analysis, has to break them
		if builtinProblems == 0 {
			t.Errorf("%s: the built-in script passes every Kargo rule on v3.6.1; the checks cannot tell a script that ignores analysis", version)
		}
		t.Logf("%s: %d scenarios, %d frames; built-in scripts break the Kargo rules %d times", version, len(timelines), frames, builtinProblems)
	}
}
