package verdict_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/verdict"
)

// The timelines the e2e recorder captured from Argo Rollouts' real rollout controller (e2e/testdata);
// only the fields used here are decoded.
type timeline struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Frames  []struct {
		Rollout      map[string]any   `json:"rollout"`
		AnalysisRuns []map[string]any `json:"analysisRuns"`
	} `json:"frames"`
}

func loadTimelines(t *testing.T) []timeline {
	t.Helper()
	paths, err := filepath.Glob("../e2e/testdata/timelines/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recorded timelines (%v)", err)
	}
	var out []timeline
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tl timeline
		if err := yaml.Unmarshal(raw, &tl); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, tl)
	}
	return out
}

// wantSequences is, per recorded scenario, the verdict of every frame with consecutive repeats collapsed.
// A terminal phase followed by Running is a retry or a resume that a person did after the verdict: a
// real verification AnalysisRun stops at the first terminal phase; the plugin judges afresh when Kargo
// re-verifies.
var wantSequences = map[string]string{
	"bluegreen-postpromotion-failed":                          "Running → Failed",
	"bluegreen-postpromotion-inconclusive-resumed":            "Running → Inconclusive → Running → Successful",
	"bluegreen-postpromotion-successful":                      "Running → Successful",
	"bluegreen-prepromotion-failed":                           "Running → Failed",
	"bluegreen-prepromotion-passed-postpromotion-error":       "Running → Failed",
	"bluegreen-prepromotion-successful":                       "Running → Successful",
	"bluegreen-retry-after-abort":                             "Running → Failed → Running → Successful",
	"canary-background-failed-after-last-step":                "Running → Failed",
	"canary-background-failed-after-promotion":                "Running → Failed",
	"canary-background-failed-during-pause":                   "Running → Failed",
	"canary-background-failed-while-inconclusive":             "Running → Inconclusive → Failed",
	"canary-background-promoted-while-running":                "Running → Successful",
	"canary-retry-after-abort":                                "Running → Failed → Running → Successful",
	"canary-step-error":                                       "Running → Failed",
	"canary-step-failed-while-inconclusive":                   "Running → Inconclusive → Failed",
	"canary-step-failed":                                      "Running → Failed",
	"canary-step-inconclusive-resumed":                        "Running → Inconclusive → Running → Successful",
	"canary-step-successful":                                  "Running → Successful",
	"canary-traffic-routed-background-promoted-while-running": "Running → Successful",
}

// TestTimelines judges every recorded frame and compares the phase sequence with wantSequences; every
// value is bounded compact JSON.
func TestTimelines(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range loadTimelines(t) {
		seen[tl.Name] = true
		t.Run(tl.Name, func(t *testing.T) {
			var seq []string
			for i, f := range tl.Frames {
				v, err := verdict.Judge(verdict.Objects{Rollout: f.Rollout, AnalysisRuns: f.AnalysisRuns}, verdict.Options{})
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if len(seq) == 0 || seq[len(seq)-1] != v.Phase {
					seq = append(seq, v.Phase)
				}
				if len(v.Value) > verdict.DefaultMaxValueBytes || !json.Valid([]byte(v.Value)) || strings.Contains(v.Value, "\n") {
					t.Fatalf("frame %d: value is not bounded compact JSON: %s", i, v.Value)
				}
			}
			want, ok := wantSequences[tl.Name]
			if !ok {
				t.Fatalf("no expected sequence for new scenario %s; got %s", tl.Name, strings.Join(seq, " → "))
			}
			if got := strings.Join(seq, " → "); got != want {
				t.Errorf("verdicts %s, want %s", got, want)
			}
		})
	}
	for name := range wantSequences {
		if !seen[name] {
			t.Errorf("scenario %s was not recorded", name)
		}
	}
}
