package verdict

import (
	"fmt"
	"strings"
	"testing"
)

// TestShortenedLeavesTheSummary: the structured verdict is shortened first, from the same Summary as the
// Value; what it leaves out to fit must not go missing from the Value, whose words are more compact.
func TestShortenedLeavesTheSummary(t *testing.T) {
	run := RunValue{Name: "checkout-54d7c4976f-2-1", Type: "Step", Phase: "Successful"}
	for i := 0; i < 40; i++ {
		run.Metrics = append(run.Metrics, MetricValue{Name: fmt.Sprintf("m%02d", i), Phase: "Successful", Count: 1, Successful: 1,
			Last: "0.99", SuccessCondition: "result[0] >= 0.95"})
	}
	sum := Summary{Rollout: "shop/checkout", Revision: "54d7c4976f", RolloutRevision: "2", Verdict: "Successful", Runs: []RunValue{run}}
	opts := Options{MaxValueBytes: 2048}
	structured := encode(sum, opts)
	if !strings.Contains(structured, `"omittedMetrics"`) {
		t.Fatalf("the structured verdict fits %d bytes with 40 metrics (%d bytes): the test needs one that does not", opts.MaxValueBytes, len(structured))
	}
	if n := len(sum.Runs[0].Metrics); n != 40 {
		t.Fatalf("encode left the caller's Summary with %d metrics, want 40", n)
	}
	value := sentence(sum, opts)
	for _, m := range run.Metrics {
		if !strings.Contains(value, " "+m.Name+" ") {
			t.Errorf("the Value (%d bytes, bound %d) leaves out metric %s, which its words have room for: %s", len(value), opts.MaxValueBytes, m.Name, value)
			break
		}
	}
}
