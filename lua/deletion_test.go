package lua_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// Every fixture, under every profile: the script returns a table (v3.6 reads nil as "no health").
func TestFixturesReturnTables(t *testing.T) {
	fixtures, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		obj := fixtureObject(t, f.Raw)
		for _, k := range lua.Kinds() {
			script, err := lua.Health(k.Group, k.Kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range engine.Profiles() {
				h, err := engine.Engine{Profile: p}.Execute(obj, script)
				if err != nil || h == nil || h.Status == "" {
					t.Errorf("%s through the %s script under %s: %+v, %v; want a table with a status", f.Path, k.Kind, p, h, err)
				}
			}
		}
	}
}

// What Argo CD records for the objects being deleted among the fixtures, by release: the scripts set no
// deletionMessage (docs/argocd-versions.md), so gitops-engine's own "Pending deletion" stands in every
// release, except for a hook held by Argo CD v3's hook finalizer, whose verdict v3.2 and v3.6 keep.
func TestDeletingFixtures(t *testing.T) {
	const pending = "Pending deletion"
	hookVerdict := engine.Health{Status: engine.Progressing,
		Message: "Analysis run is running: success-rate 3/5 measurements, latency-p99 3/5 measurements, error-rate 1/3 measurements"}
	cases := []struct {
		path string
		want map[engine.Profile]engine.Health
	}{
		{"argoproj.io/Rollout/testdata/canary_step_analysis_running_deleting.yaml", map[engine.Profile]engine.Health{
			engine.V214: {Status: engine.Progressing, Message: pending},
			engine.V32:  {Status: engine.Progressing, Message: pending},
			engine.V36:  {Status: engine.Progressing, Message: pending + "; blocked by finalizers: foregroundDeletion"},
		}},
		{"argoproj.io/AnalysisRun/testdata/step-analysis-failed-deleting.yaml", map[engine.Profile]engine.Health{
			engine.V214: {Status: engine.Progressing, Message: pending},
			engine.V32:  {Status: engine.Progressing, Message: pending},
			engine.V36:  {Status: engine.Progressing, Message: pending + "; blocked by finalizers: audit.example.com/retain"},
		}},
		{"argoproj.io/AnalysisRun/testdata/hook-analysis-running-deleting-hook-finalizer.yaml", map[engine.Profile]engine.Health{
			engine.V214: {Status: engine.Progressing, Message: pending},
			engine.V32:  hookVerdict,
			engine.V36:  hookVerdict,
		}},
		{"argoproj.io/Experiment/testdata/experiment-running-deleting.yaml", map[engine.Profile]engine.Health{
			engine.V214: {Status: engine.Progressing, Message: pending},
			engine.V32:  {Status: engine.Progressing, Message: pending},
			engine.V36:  {Status: engine.Progressing, Message: pending + "; blocked by finalizers: foregroundDeletion"},
		}},
	}
	fixtures, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range fixtures {
		if !strings.Contains(string(f.Raw), "\n  deletionTimestamp:") {
			continue
		}
		seen++
		found := false
		for _, tc := range cases {
			if tc.path != f.Path {
				continue
			}
			found = true
			script, err := lua.Health(f.Kind.Group, f.Kind.Kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range engine.Profiles() {
				got, err := engine.Engine{Profile: p}.ResourceHealth(fixtureObject(t, f.Raw), script)
				if err != nil || got == nil || *got != tc.want[p] {
					t.Errorf("%s under %s: %+v, %v; want %+v", f.Path, p, got, err, tc.want[p])
				}
			}
		}
		if !found {
			t.Errorf("%s: a fixture being deleted without an expectation here", f.Path)
		}
	}
	if seen != len(cases) {
		t.Errorf("%d fixtures being deleted, %d expectations", seen, len(cases))
	}
}

func fixtureObject(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}
