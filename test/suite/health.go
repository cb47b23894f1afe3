package suite

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/probe"
	"github.com/analysis-health/analysis-health/verify"
)

// FixturesMatch evaluates every fixture three ways: the engine, the release's VM as the API server runs
// argocd-cm scripts, and the controller's path (SettingsManager → ResourceHealthOverrides → gitops-engine
// GetResourceHealth) against what the engine says is recorded; and holds the scripts to their contract:
// never Unknown or Missing, never an empty status.
func FixturesMatch(t *testing.T, r Release) {
	s := Load(t, r, HealthData(t))
	e := engine.Engine{Profile: r.Profile()}
	fx := Fixtures(t)
	compared := 0
	for _, f := range fx {
		t.Run(f.Path, func(t *testing.T) {
			obj := Object(t, f.Raw)
			k := KindOf(obj) // action outputs and referenced objects are checked by their own kind's script
			script, err := lua.Health(k.Group, k.Kind)
			if err != nil {
				t.Fatalf("fixture of kind %s has no bundled script", k.Kind)
			}
			ours, err := e.Execute(obj, script)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			vm, err := s.ExecuteHealth(obj, script, false)
			if err != nil {
				t.Fatalf("argo-cd util/lua: %v", err)
			}
			if ours == nil || vm == nil {
				t.Fatalf("a script returned nil: engine %s, argo-cd %s", Show(ours), Show(vm))
			}
			if !Same(ours, vm) {
				t.Errorf("engine %s != argo-cd %s VM %s", Show(ours), r.Version(), Show(vm))
			}
			ctrl, err := s.ResourceHealth(obj)
			if err != nil || ctrl == nil {
				t.Fatalf("gitops-engine GetResourceHealth: %s, %v", Show(ctrl), err)
			}
			rec, err := e.ResourceHealth(obj, script)
			if err != nil || rec == nil {
				t.Fatalf("engine ResourceHealth: %s, %v", Show(rec), err)
			}
			if !Same(rec, ctrl) {
				t.Errorf("engine %s != %s controller path %s", Show(rec), r.Version(), Show(ctrl))
			}
			switch ours.Status {
			case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
			default:
				t.Errorf("script returned status %q", ours.Status)
			}
			compared++
		})
	}
	t.Logf("Argo CD %s: %d fixtures compared (util/lua and GetResourceHealth)", r.Version(), compared)
	if compared != len(fx) {
		t.Errorf("%d of %d fixtures compared", compared, len(fx))
	}
}

// Sandbox runs the sandbox probes (test/probe) in the release's VM and in the engine, with and
// without the open libraries: the same result or the same error. The engine answers with a fresh state,
// then (ReuseStates, as the health command runs) three times in states reused after the other probes:
// to every probe a reused state is a fresh one, as each of Argo CD's VMs is.
func Sandbox(t *testing.T, r Release) {
	argo := Defaults(r)
	for _, openLibs := range []bool{false, true} {
		for _, tc := range probe.Cases {
			t.Run(fmt.Sprintf("openLibs=%v/%s", openLibs, tc.Name), func(t *testing.T) {
				want, wantErr := argo.ExecuteHealth(probe.Object(), tc.Script, openLibs)
				runs := 1
				if !openLibs {
					runs = 4 // open-library states are never reused
				}
				for i := 0; i < runs; i++ {
					got, gotErr := engine.Engine{Profile: r.Profile(), OpenLibs: openLibs, ReuseStates: i > 0}.Execute(probe.Object(), tc.Script)
					if probe.ErrText(wantErr) != probe.ErrText(gotErr) {
						t.Fatalf("evaluation %d: error:\n argo-cd %s: %s\n engine: %s", i+1, r.Version(), probe.ErrText(wantErr), probe.ErrText(gotErr))
					}
					if wantErr == nil && !Same(got, want) {
						t.Errorf("evaluation %d: argo-cd %s %s, engine %s", i+1, r.Version(), Show(want), Show(got))
					}
				}
			})
		}
	}
}

// BuiltinSuites runs the release's own health suites for our kinds against our scripts, as its
// TestLuaHealthScript compares them (with NoHealth, the suite's pointer: "no health" and deletionMessage
// included), in its VM and in the engine alike: every difference is a listed deviation
// (probe.BuiltinDeviations) that docs/health-semantics.md mentions, every listed one still differs, and
// the counts are docs/argocd-versions.md's.
func BuiltinSuites(t *testing.T, r Release) {
	doc, err := os.ReadFile(RepoFile(t, "docs/health-semantics.md"))
	if err != nil {
		t.Fatal(err)
	}
	argo := Defaults(r)
	e := engine.Engine{Profile: r.Profile()}
	seen := map[string]bool{}
	total, passed, deviations := 0, 0, 0
	for _, k := range lua.Kinds() {
		dir := path.Join(k.Group, k.Kind)
		raw, err := fs.ReadFile(r.Builtins(), path.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatalf("Argo CD %s has no built-in suite for %s: %v", r.Version(), k.Key(), err)
		}
		var suite verify.HealthSuite
		if err := yaml.Unmarshal(raw, &suite); err != nil {
			t.Fatal(err)
		}
		script, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range suite.Tests {
			id := k.Kind + "/" + tc.InputPath
			total++
			t.Run(id, func(t *testing.T) {
				input, err := fs.ReadFile(r.Builtins(), path.Join(dir, tc.InputPath))
				if err != nil {
					t.Fatal(err)
				}
				obj := Object(t, input)
				got, err := argo.ExecuteHealth(obj, script, false)
				if err != nil {
					t.Fatal(err)
				}
				if ours, err := e.Execute(obj, script); err != nil || !Same(ours, got) {
					t.Fatalf("engine %s, %v; argo-cd %s VM %s", Show(ours), err, r.Version(), Show(got))
				}
				want := &tc.HealthStatus
				if tc.NoHealth && r.Capabilities().NoHealth {
					want = nil
				}
				dev, listed := probe.BuiltinDeviations[id]
				differs := !Same(want, got)
				if listed {
					seen[id] = true
					if !strings.Contains(string(doc), tc.InputPath) {
						t.Errorf("docs/health-semantics.md does not mention %s", tc.InputPath)
					}
				}
				switch {
				case differs && !listed:
					t.Errorf("unlisted deviation from Argo CD's built-in: want %s, got %s", Show(want), Show(got))
				case !differs && listed:
					t.Errorf("listed as a deviation (%s) but matches the built-in; drop it from the list and the docs", dev.Why)
				case listed && (want == nil || got == nil || want.Status != got.Status) != dev.StatusDiffers:
					t.Errorf("deviation listed with statusDiffers=%v, got built-in %s vs ours %s", dev.StatusDiffers, Show(want), Show(got))
				case listed:
					deviations++
				default:
					passed++
				}
			})
		}
	}
	for id := range probe.BuiltinDeviations {
		if !seen[id] {
			t.Errorf("deviation %s names no case of Argo CD %s's suites", id, r.Version())
		}
	}
	t.Logf("Argo CD %s built-in health suites: %d cases, %d passed, %d listed deviations", r.Version(), total, passed, deviations)
	if passed+deviations != total {
		t.Errorf("%d cases, %d passed and %d deviations", total, passed, deviations)
	}
	probe.CheckSuiteCounts(t, RepoFile(t, "docs/argocd-versions.md"), r.Version(), total, passed, deviations)
}

// GoHealthChecks: engine.GoHealthCheck is the release's gitops-engine GetHealthCheckFunc != nil, which is
// what a script without a result falls back to.
func GoHealthChecks(t *testing.T, r Release) {
	for _, gk := range [][2]string{
		{"apps", "Deployment"}, {"apps", "StatefulSet"}, {"apps", "ReplicaSet"}, {"apps", "DaemonSet"},
		{"extensions", "Ingress"}, {"networking.k8s.io", "Ingress"}, {"argoproj.io", "Workflow"},
		{"argoproj.io", "Rollout"}, {"argoproj.io", "AnalysisRun"}, {"apiregistration.k8s.io", "APIService"},
		{"", "Service"}, {"", "PersistentVolumeClaim"}, {"", "Pod"}, {"", "ConfigMap"}, {"batch", "Job"},
		{"batch", "CronJob"}, {"autoscaling", "HorizontalPodAutoscaler"}, {"apps", "Rollout"},
	} {
		if got, want := engine.GoHealthCheck(gk[0], gk[1]), r.GoHealthCheck(schema.GroupVersionKind{Group: gk[0], Version: "v1", Kind: gk[1]}); got != want {
			t.Errorf("%s/%s: engine.GoHealthCheck %v, gitops-engine %v", gk[0], gk[1], got, want)
		}
	}
}

// WhyMessages: the AnalysisRun's health says why its verdict was reached (issue 59) in the release's own
// VM, through the argocd-cm the generator writes (the scripts as written, and the form `generate
// --argocd-version` emits for the release) and the controller's path: after the controller's count, the
// last value and the condition it missed, both as the run's spec and measurements have them, or a Job
// metric's Job; a provider's error as the controller quotes it.
func WhyMessages(t *testing.T, r Release) {
	cases := []struct {
		fixture, status string
		want            []string
	}{
		{"step-analysis-failed-success-condition.yaml", engine.Degraded, []string{
			`Metric "success-rate" assessed Failed due to failed (3) > failureLimit (2)`, "0.8972", "result[0] >= 0.95",
			`; last value [0.8972] missed successCondition "result[0] >= 0.95"`}},
		{"step-analysis-failed.yaml", engine.Degraded, []string{`; last value [0.8874] met failureCondition "result[0] < 0.95"`}},
		{"step-analysis-inconclusive.yaml", engine.Suspended, []string{
			`; last value [0.9712] met neither successCondition "result[0] >= 0.99" nor failureCondition "result[0] < 0.95"`}},
		{"step-analysis-failed-job.yaml", engine.Degraded, []string{`; last Job "4e2d824d-01af-11ea-b38c-42010aa80083.smoke-tests.1" failed`}},
		{"step-analysis-error-condition-no-data.yaml", engine.Degraded, []string{
			`"Error Message: could not evaluate successCondition "result[0] >= 0.95": metric result is nil or empty`}},
	}
	raw := map[string][]byte{}
	for _, f := range FixturesOf(t, lua.Kind{Group: "argoproj.io", Kind: "AnalysisRun"}) {
		raw[path.Base(f.Path)] = f.Raw
	}
	for _, o := range []generator.Options{{}, {ArgoCDVersion: string(r.Profile())}} {
		s := LoadCM(t, r, DecodeConfigMap(t, Generated(t, generator.ConfigMap, o)[0].Data))
		form := cmp.Or(o.ArgoCDVersion, "source")
		for _, c := range cases {
			t.Run(c.fixture+" "+form, func(t *testing.T) {
				if raw[c.fixture] == nil {
					t.Fatalf("no fixture %s", c.fixture)
				}
				h, err := s.ResourceHealth(Object(t, raw[c.fixture]))
				if err != nil || h == nil {
					t.Fatalf("gitops-engine GetResourceHealth: %s, %v", Show(h), err)
				}
				if h.Status != c.status {
					t.Errorf("Argo CD %s: status %s, want %s", r.Version(), h.Status, c.status)
				}
				for _, w := range c.want {
					if !strings.Contains(h.Message, w) {
						t.Errorf("Argo CD %s: message %q lacks %q", r.Version(), h.Message, w)
					}
				}
			})
		}
	}
}
