package worstcase

import (
	"encoding/json"
	"testing"
)

// The objects are the sizes their names promise.
func TestSizes(t *testing.T) {
	for _, o := range Objects() {
		raw, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if o.Object["kind"] != o.Kind {
			t.Errorf("%s: kind %v", o.Name, o.Object["kind"])
		}
		t.Logf("%s: %d bytes", o.Name, len(raw))
		if o.Name == "rollout-1mb" && len(raw) < 1<<20 {
			t.Errorf("%s: %d bytes, want at least 1 MiB", o.Name, len(raw))
		}
	}
	ar := AnalysisRun(20, 1000)
	results := ar["status"].(map[string]any)["metricResults"].([]any)
	if len(results) != 20 {
		t.Fatalf("%d metric results", len(results))
	}
	for _, r := range results {
		if n := len(r.(map[string]any)["measurements"].([]any)); n != 1000 {
			t.Fatalf("%d measurements", n)
		}
	}
	ro := Rollout(200, 50)
	steps := ro["spec"].(map[string]any)["strategy"].(map[string]any)["canary"].(map[string]any)["steps"].([]any)
	pauses := ro["status"].(map[string]any)["pauseConditions"].([]any)
	if len(steps) != 200 || len(pauses) != 50 {
		t.Fatalf("%d steps, %d pause conditions", len(steps), len(pauses))
	}
}
