package rolloutplugin_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// configSeeds are configs a metric may carry: valid ones, Kargo's and Rollouts' unevaluated templates,
// a typo, retyped and missing fields.
var configSeeds = []string{
	`{"name":"checkout","namespace":"shop"}`,
	`{"name":"checkout","namespace":"shop","revision":"2","image":"ghcr.io/shop/checkout:1.1.0","pollInterval":"5s","apiTimeout":"3s","inconclusive":"degraded","noAnalysis":"failed","kubeconfigSecret":{"name":"w","key":"kubeconfig"}}`,
	`{"name":"{{args.rollout-name}}","namespace":"shop"}`,
	`{"name":"checkout","namespace":"shop","image":"${{ imageFrom(\"ghcr.io/shop/checkout\").Tag }}"}`,
	`{"name":"checkout","namespace":"shop","kubeConfigSecret":{"name":"w","key":"k"}}`,
	`{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"w"}}`,
	`{"name":"checkout","namespace":"shop","pollInterval":"-1s","apiTimeout":"soon"}`,
	`{"name":"checkout","namespace":"shop","apiTimeout":"8760h"}`,
	`{"name":"checkout","namespace":"shop","noAnalysis":"degraded"}`,
	`{"name":1,"namespace":["shop"]}`,
	`{"name":"Checkout_1","namespace":""}`,
	`{}`, `null`, ``, `[]`, `"checkout"`,
}

// configFields are the config's JSON fields (rolloutplugin.Config).
var configFields = regexp.MustCompile(`\b(name|namespace|revision|image|kubeconfigSecret(\.name|\.key)?|inconclusive|noAnalysis|pollInterval|apiTimeout)\b`)

// FuzzParseConfig: ParseConfig never panics; an error names the provider and, for a JSON object, the
// field at fault (one of the config's, or the unknown key).
func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := rolloutplugin.ParseConfig(raw)
		if err == nil {
			if c.Name == "" || c.Namespace == "" {
				t.Fatalf("%s accepted without a name or namespace: %+v", raw, c)
			}
			return
		}
		msg := err.Error()
		if !strings.Contains(msg, rolloutplugin.Name) {
			t.Fatalf("%s: error %q does not name the provider", raw, msg)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return // not an object: there is no field to name
		}
		if configFields.MatchString(msg) {
			return
		}
		for k := range obj {
			// encoding/json quotes the unknown key with %q
			if strings.Contains(msg, strconv.Quote(k)) {
				return
			}
		}
		t.Fatalf("%s: error %q names no field", raw, msg)
	})
}

// FuzzMetric: any metric JSON through the plugin's Run on a Rollout whose analysis is in flight: never a
// panic (the plugin turns one into an Error "internal error"), a phase of the controller's, a value that
// is JSON of at most 4 KiB, and an Error that says why.
func FuzzMetric(f *testing.F) {
	for _, s := range configSeeds {
		raw, _ := json.Marshal(metric(s))
		f.Add(raw)
	}
	f.Add([]byte(`{"name":"rollout-analysis","provider":{"plugin":{}}}`))
	f.Add([]byte(`{"name":"rollout-analysis","provider":{"plugin":{"analysis-health/rollout-analysis":{"name":"checkout","namespace":"shop"},"other/plugin":{}}}}`))
	running := loadFrame(f, "step-running")
	phases := map[v1alpha1.AnalysisPhase]bool{v1alpha1.AnalysisPhaseRunning: true, v1alpha1.AnalysisPhaseSuccessful: true, v1alpha1.AnalysisPhaseFailed: true,
		v1alpha1.AnalysisPhaseInconclusive: true, v1alpha1.AnalysisPhaseError: true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m v1alpha1.Metric
		if json.Unmarshal(raw, &m) != nil {
			return // the controller decodes the metric before it calls the plugin
		}
		c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
		p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil }})
		got := p.Run(analysisRun(), m)
		switch {
		case !phases[got.Phase]:
			t.Fatalf("phase %q (%q) for %s", got.Phase, got.Message, raw)
		case strings.Contains(got.Message, "internal error"):
			t.Fatalf("the plugin panicked: %s, for %s", got.Message, raw)
		case valueProblem(got) != "":
			t.Fatalf("%s, for %s", valueProblem(got), raw)
		case got.Phase == v1alpha1.AnalysisPhaseError && got.Message == "":
			t.Fatalf("an Error without a message for %s", raw)
		}
	})
}
