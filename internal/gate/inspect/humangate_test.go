package inspect

import (
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// The warning about a pause that waits for a person names --human-gate healthy only where the option can
// apply: a pause no controller ends with an analysis before it (docs/hooks.md "The human gate").
func TestHumanGateWarning(t *testing.T) {
	const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  strategy:
    %s
  template: {spec: {containers: [{name: app, image: app:2}]}}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  metrics: [{name: ok, count: 1, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: c}], restartPolicy: Never}}}}}}]
`
	cases := []struct {
		name, strategy string
		gate           bool
	}{
		{"canary pause {} after a step analysis", `canary: {steps: [{analysis: {templates: [{templateName: success-rate}]}}, {pause: {}}]}`, true},
		{"canary pause {} before the step analysis", `canary: {steps: [{pause: {}}, {analysis: {templates: [{templateName: success-rate}]}}]}`, false},
		{"canary pause {} with background analysis", `canary: {analysis: {templates: [{templateName: success-rate}]}, steps: [{setWeight: 20}, {pause: {}}]}`, true},
		{"blue-green without auto-promotion after pre-promotion analysis", `blueGreen: {activeService: a, autoPromotionEnabled: false, prePromotionAnalysis: {templates: [{templateName: success-rate}]}}`, true},
		{"blue-green without auto-promotion nor analysis", `blueGreen: {activeService: a, autoPromotionEnabled: false}`, false},
	}
	for _, tc := range cases {
		objs, err := manifest.Read([]string{"-"}, strings.NewReader(strings.Replace(rollout, "%s", tc.strategy, 1)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Inspect(objs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var warnings []string
		for _, p := range r.Problems {
			if strings.Contains(p.Message, "waits until someone promotes the Rollout") {
				warnings = append(warnings, p.Message)
			}
		}
		if len(warnings) != 1 {
			t.Errorf("%s: pause warnings %q", tc.name, warnings)
			continue
		}
		if got := strings.Contains(warnings[0], "generate --human-gate healthy"); got != tc.gate {
			t.Errorf("%s: names --human-gate healthy %v, want %v: %s", tc.name, got, tc.gate, warnings[0])
		}
	}
}
