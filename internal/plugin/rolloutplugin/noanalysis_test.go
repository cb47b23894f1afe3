package rolloutplugin_test

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// TestConfigNoAnalysis: noAnalysis takes the three policies in any case, the default empty, and refuses
// anything else with a message naming the field and the values.
func TestConfigNoAnalysis(t *testing.T) {
	for _, tc := range []struct {
		value, err string
	}{
		{"", ""}, {"successful", ""}, {"inconclusive", ""}, {"failed", ""}, {"Failed", ""},
		{"degraded", `noAnalysis "degraded" is not one of successful, inconclusive, failed`},
		{"fail", `noAnalysis "fail" is not one of successful, inconclusive, failed`},
		{" failed", `noAnalysis " failed" is not one of`},
		{"{{args.no-analysis}}", `noAnalysis "{{args.no-analysis}}" is not one of`},
	} {
		raw := `{"name":"checkout","namespace":"shop","noAnalysis":"` + tc.value + `"}`
		c, err := rolloutplugin.ParseConfig([]byte(raw))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.err == "" && c.NoAnalysis != tc.value:
			t.Errorf("%q: parsed as %q", tc.value, c.NoAnalysis)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), rolloutplugin.Name)):
			t.Errorf("%q: %v, want an error containing %q", tc.value, err, tc.err)
		}
	}
	if _, err := rolloutplugin.ParseConfig([]byte(`{"name":"checkout","namespace":"shop","noAnalysis":false}`)); err == nil || !strings.Contains(err.Error(), "noAnalysis") {
		t.Errorf("a boolean noAnalysis: %v", err)
	}
}

// TestNoAnalysisMeasurement: through the controller's RPC client, a revision promoted without any run of
// it is measured as the policy says, and the plugin's own reads find an earlier revision's run (its list
// selects only the judged revision's) so the message says the analysis was removed. Only get and list.
func TestNoAnalysisMeasurement(t *testing.T) {
	success := loadFrame(t, "step-successful")
	// the promoted revision's strategy without its analysis step, its run now an earlier revision's
	ro := deepCopyMap(t, success.Rollout)
	ro["spec"].(map[string]any)["strategy"].(map[string]any)["canary"].(map[string]any)["steps"] = []any{map[string]any{"setWeight": int64(50)}}
	earlier := deepCopyMap(t, success.AnalysisRuns[0])
	md := earlier["metadata"].(map[string]any)
	md["name"] = "checkout-0123456789-1-1"
	md["labels"].(map[string]any)["rollouts-pod-template-hash"] = "0123456789"
	md["annotations"].(map[string]any)["rollout.argoproj.io/revision"] = "1"
	for _, tc := range []struct {
		policy string
		phase  v1alpha1.AnalysisPhase
	}{{"", v1alpha1.AnalysisPhaseSuccessful}, {"inconclusive", v1alpha1.AnalysisPhaseInconclusive}, {"failed", v1alpha1.AnalysisPhaseFailed}} {
		t.Run(tc.policy, func(t *testing.T) {
			c := fakeClient(ro, earlier)
			p := serve(t, rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil }}))
			cfg := `{"name":"checkout","namespace":"shop"}`
			if tc.policy != "" {
				cfg = `{"name":"checkout","namespace":"shop","noAnalysis":"` + tc.policy + `"}`
			}
			m := p.Run(analysisRun(), metric(cfg))
			want := "no analysis ran for it: analysis removed (its canary strategy names no analysis any more, while revision 1 ran AnalysisRun checkout-0123456789-1-1)"
			if m.Phase != tc.phase || !strings.Contains(m.Message, want) || !strings.Contains(m.Value, want) ||
				!strings.Contains(m.Metadata[verdict.MetadataVerdict], `"noAnalysis":"analysis removed"`) || valueProblem(m) != "" {
				t.Fatalf("%s %q %s %v, want %s with %q", m.Phase, m.Message, m.Value, m.Metadata, tc.phase, want)
			}
			for _, a := range c.Actions() {
				if v := a.GetVerb(); v != "get" && v != "list" {
					t.Errorf("the plugin called %s %s", v, a.GetResource().Resource)
				}
			}
		})
	}
}
