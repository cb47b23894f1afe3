package e2e

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/test/kargo"
	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// TestMain quiets Argo CD's logrus logging (every comparison logs at info level); the tests report
// through their assertions.
func TestMain(m *testing.M) {
	flag.Parse()
	logrus.SetLevel(logrus.ErrorLevel)
	os.Exit(m.Run())
}

// barrierKnownLimits are the barrier rule's problems our script has on a recorded controller state, by
// scenario, after kargo.KnownLimits' Stage-rule problems (docs/why.md "What no Rollout script can see"):
// with the background run failing after the controller wrote the promotion, the barrier has let the sync
// finish on the Healthy Rollout.
var barrierKnownLimits = map[string][]string{ // keyed by "<version>/<scenario>"
	"v1.8.5/canary-background-failed-after-promotion": {
		"with the barrier, the Promotion Succeeded at frame 18 (+190s) although not every analysis passed",
	},
	"v1.10.2/canary-background-failed-after-promotion": {
		"with the barrier, the Promotion Succeeded at frame 19 (+200s) although not every analysis passed",
	},
}

// knownLimits are the problems our script has on a recorded scenario, exactly: the Stage rules', then the
// barrier rule's, in kargo.Problems' order.
func knownLimits(key string) []string {
	return append(append([]string(nil), kargo.KnownLimits[key]...), barrierKnownLimits[key]...)
}

// result is one Argo CD installation's view of a timeline, and what Kargo makes of it.
type result struct {
	app      []*v1alpha1.HealthStatus // Application health per frame (CompareAppState)
	rollout  []*health.HealthStatus   // the Rollout's own health per frame (resource tree)
	stage    []stage.Health
	verified int      // frame at which Kargo verifies the Freight, -1 never
	problems []string // where Kargo's verdict and the analysis verdict disagree
	// promotion is the Kargo Promotion's outcome when the sync carries the PostSync barrier
	promotion promotion
}

type evaluation struct {
	tl       *timeline.Timeline
	verdicts []timeline.Verdicts
	ours     result
	builtin  result
}

func evaluate(t *testing.T, tl *timeline.Timeline, oursCD, builtinCD *argoCD) *evaluation {
	e := &evaluation{tl: tl, verdicts: tl.AllVerdicts()}
	e.ours = e.run(t, oursCD)
	e.builtin = e.run(t, builtinCD)
	return e
}

func (e *evaluation) run(t *testing.T, cd *argoCD) result {
	r := result{}
	st := stage.New()
	for i := range e.tl.Frames {
		f := &e.tl.Frames[i]
		app := cd.appHealth(t, f)
		r.app = append(r.app, app)
		r.rollout = append(r.rollout, cd.resourceHealth(t, f.RolloutObject()))
		st.Assess(string(app.Status))
	}
	r.stage, r.verified = st.Health, st.Verified
	r.promotion = syncOverFrames(t, e.tl, cd.healthOverride(t))
	r.problems = kargo.Problems(e.tl, e.verdicts, st, &kargo.Promotion{Phase: r.promotion.Phase, Frame: r.promotion.Frame})
	return r
}

// TestKargo is the end-to-end proof (make e2e): every timeline recorded with every Rollouts version
// through Argo CD v2.14 with our script and with the built-in one, then through Kargo's rules, and the
// sync with the barrier hook through gitops-engine.
func TestKargo(t *testing.T) {
	oursCD, builtinCD := installations(t)
	var report strings.Builder
	drawn := map[string][]byte{}
	for _, version := range timeline.Versions {
		timelines := loadTimelines(t, version)
		if len(timelines) < 30 {
			t.Fatalf("%s: %d timelines, want at least 30 (record them: make e2e UPDATE=1)", version, len(timelines))
		}
		var evals []*evaluation
		for _, tl := range timelines {
			e := evaluate(t, tl, oursCD, builtinCD)
			evals = append(evals, e)
			t.Run(version+"/"+tl.Name, func(t *testing.T) {
				want := knownLimits(version + "/" + tl.Name)
				if !reflect.DeepEqual(e.ours.problems, want) {
					t.Errorf("with our script, Kargo disagrees with the analysis verdict:\n  got:  %q\n  want: %q", e.ours.problems, want)
				}
				last := len(tl.Frames) - 1
				wantFinal := tl.WantFinalAppHealth()
				if got := string(e.ours.app[last].Status); got != wantFinal {
					t.Errorf("final Application health with our script %s, want %s for a timeline that ends %s", got, wantFinal, tl.Outcome)
				}
				for i, st := range e.ours.app {
					// our scripts never make the Application Unknown or Missing (Kargo would call that Unhealthy)
					if st.Status == health.HealthStatusUnknown || st.Status == health.HealthStatusMissing {
						t.Errorf("frame %d: Application %s with our script", i, st.Status)
					}
				}
				// with the barrier, an aborted update never lets the Promotion succeed
				if tl.Outcome == "aborted" && e.ours.promotion.Phase == "Succeeded" {
					t.Errorf("with the barrier and our script the Promotion %s for an aborted update", e.ours.promotion)
				}
			})
		}
		// the checks must be able to fail: the built-in script, which does not read the analysis, has to
		// fail them somewhere, or they test nothing
		builtinProblems := 0
		for _, e := range evals {
			builtinProblems += len(e.builtin.problems)
		}
		if builtinProblems == 0 {
			t.Errorf("%s: the built-in script passes every check; the checks cannot tell a script that ignores analysis", version)
		}
		if report.Len() > 0 {
			report.WriteString("\n")
		}
		report.WriteString(renderReport(version, evals))
		report.WriteString(gallery(version, evals))
		maps.Copy(drawn, pictures(t, version, evals))
	}
	t.Run("docs/timelines", func(t *testing.T) {
		checkPictures(t, drawn)
	})
	t.Run("docs/why.md", func(t *testing.T) {
		docblock.Check(t, whyDoc, "test/argocd-v2.14/e2e TestKargo", []byte("\n"+report.String()+"\n"))
	})
}

// TestAnalysisRunsAreNotManaged pins the premise: the Rollout's AnalysisRuns carry the Application's
// tracking label (copied from the Rollout's selector) and are still not managed resources of the
// Application, because gitops-engine drops every live object with an ownerReference. (An Experiment's
// runs have neither the label nor the Rollout as owner, and are not managed either.)
func TestAnalysisRunsAreNotManaged(t *testing.T) {
	oursCD, _ := installations(t)
	checked := 0
	var all []*timeline.Timeline
	for _, v := range timeline.Versions {
		all = append(all, loadTimelines(t, v)...)
	}
	for _, tl := range all {
		for i := range tl.Frames {
			f := &tl.Frames[i]
			if len(f.AnalysisRuns) == 0 {
				continue
			}
			for _, ar := range f.RunObjects() {
				refs := ar.GetOwnerReferences()
				if len(refs) == 1 && refs[0].Kind == "Experiment" {
					// an experiment's runs (experiments/experiment.go newAnalysisRun) carry no selector
					// labels, only the owner
					continue
				}
				if ar.GetLabels()["app.kubernetes.io/instance"] != appName || len(refs) == 0 {
					t.Fatalf("%s frame %d: AnalysisRun %s lacks the tracking label or the ownerReference", tl.Name, i, ar.GetName())
				}
			}
			live := newLiveState(t, oursCD.settings, append([]*unstructured.Unstructured{f.RolloutObject()}, f.RunObjects()...))
			managed, err := live.GetManagedLiveObjs(application(), nil)
			live.cluster.Invalidate()
			if err != nil {
				t.Fatal(err)
			}
			want := kube.GetResourceKey(f.RolloutObject())
			if len(managed) != 1 || managed[want] == nil {
				t.Fatalf("%s frame %d: managed objects %v, want only %v", tl.Name, i, keys(managed), want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no frame with AnalysisRuns")
	}
}

func loadTimelines(t testing.TB, version string) []*timeline.Timeline {
	t.Helper()
	tls, err := timeline.Load(filepath.Join(testDir, timeline.Dir), version)
	if err != nil {
		t.Fatal(err)
	}
	return tls
}

func keys[V any](m map[kube.ResourceKey]V) []kube.ResourceKey {
	var out []kube.ResourceKey
	for k := range m {
		out = append(out, k)
	}
	return out
}

// whyDoc holds the report of TestKargo (Results) and of TestLiveDoc (Live).
const whyDoc = "../../../docs/why.md"
