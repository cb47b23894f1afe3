package verify

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// A health suite means what Argo CD's TestLuaHealthScript of the profile's release makes of it: v3.6
// compares pointers (an absent or null healthStatus expects "no health") and knows deletionMessage;
// v2.14 and v3.2 compare with an empty status and have no deletionMessage.
func TestHealthSuiteByProfile(t *testing.T) {
	const obj = "apiVersion: g/v1\nkind: K\nmetadata:\n  name: x\n"
	cases := []struct {
		name, script, suite string
		fails               map[engine.Profile]string // profile -> failure substring; absent = passes
	}{
		{"nil, no healthStatus", `return nil`, "tests:\n- inputPath: testdata/x.yaml\n", nil},
		{"nil, null healthStatus", `return nil`, "tests:\n- inputPath: testdata/x.yaml\n  healthStatus: null\n", nil},
		{"nil, empty healthStatus", `return nil`, "tests:\n- inputPath: testdata/x.yaml\n  healthStatus: {}\n",
			map[engine.Profile]string{engine.V36: `want (no status) "", got no health (the script returned nil)`}},
		{"empty table, no healthStatus", `return {}`, "tests:\n- inputPath: testdata/x.yaml\n",
			map[engine.Profile]string{engine.V36: `want no health (the script returned nil), got (no status) ""`}},
		{"deletionMessage expected", `return {status = "Progressing", deletionMessage = "d"}`,
			"tests:\n- inputPath: testdata/x.yaml\n  healthStatus: {status: Progressing, deletionMessage: d}\n", nil},
		{"deletionMessage not expected", `return {status = "Progressing", deletionMessage = "d"}`,
			"tests:\n- inputPath: testdata/x.yaml\n  healthStatus: {status: Progressing}\n",
			map[engine.Profile]string{engine.V36: `(deletionMessage "d")`}},
	}
	for _, tc := range cases {
		for _, p := range engine.Profiles() {
			fsys := fstest.MapFS{
				"g/K/health.lua":       {Data: []byte(tc.script)},
				"g/K/health_test.yaml": {Data: []byte(tc.suite)},
				"g/K/testdata/x.yaml":  {Data: []byte(obj)},
			}
			res, err := Runner{Engine: Engine{Profile: Profile(p)}}.HealthSuite(fsys, "g/K/health_test.yaml")
			if err != nil || len(res) != 1 {
				t.Fatalf("%s under %s: %v, %d results", tc.name, p, err, len(res))
			}
			want, fails := tc.fails[p]
			switch {
			case fails && !strings.Contains(res[0].Failure, want):
				t.Errorf("%s under %s: failure %q, want one containing %q", tc.name, p, res[0].Failure, want)
			case !fails && res[0].Failure != "":
				t.Errorf("%s under %s: want a pass, got %q", tc.name, p, res[0].Failure)
			}
		}
	}
}

func TestHealthSuiteStillStrict(t *testing.T) {
	var s HealthSuite
	_, err := parseSuite(fstest.MapFS{"s.yaml": {Data: []byte("tests:\n- inputPath: x\n  expected: {}\n")}}, "s.yaml", &s)
	if err == nil || !strings.Contains(err.Error(), `unknown field "expected"`) {
		t.Fatalf("want an unknown-field error, got %v", err)
	}
}
