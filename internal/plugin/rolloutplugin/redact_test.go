package rolloutplugin_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// resolveQuoted substitutes {{args.NAME}} in a metric's JSON as the Rollouts controller does before it calls
// a plugin: the value strconv.Quote'd without its outer quotes (argo-rollouts utils/template/template.go
// ResolveQuotedArgs, called by utils/analysis/factory.go ResolveMetricArgs), so the config holds the value
// itself, newline, quote and backslash included.
func resolveQuoted(config string, args map[string]string) string {
	for k, v := range args {
		q := strconv.Quote(v)
		config = strings.ReplaceAll(config, "{{args."+k+"}}", q[1:len(q)-1])
	}
	return config
}

// TestSecretFormsRedacted: a Secret-sourced argument reaches no measurement (message, value, metadata) and
// no log line in any form: as it is, trimmed, quoted by %q, JSON-escaped, or its first characters left by
// a clip. Each case puts the value where a message quotes it.
func TestSecretFormsRedacted(t *testing.T) {
	long := strings.Repeat("s3cr3tlongvalue0", 25) // 400 characters, a valid name's characters
	success := loadFrame(t, "step-successful")
	objs := append([]map[string]any{success.Rollout}, success.AnalysisRuns...)
	for _, tc := range []struct {
		name, config, secret string
		phase                v1alpha1.AnalysisPhase
	}{
		{"trailing newline", `{"name":"checkout","namespace":"{{args.s}}"}`, "s3cr3t-namespace-value\n", v1alpha1.AnalysisPhaseError},
		{"quote", `{"name":"{{args.s}}","namespace":"shop"}`, `quo"te-s3cr3t-name`, v1alpha1.AnalysisPhaseError},
		{"backslash", `{"name":"{{args.s}}","namespace":"shop"}`, `back\slash-s3cr3t-name`, v1alpha1.AnalysisPhaseError},
		{"unicode", `{"name":"{{args.s}}","namespace":"shop"}`, "ünïcødé-s3cr3t\u200b-name", v1alpha1.AnalysisPhaseError},
		{"400 characters", `{"name":"{{args.s}}","namespace":"shop"}`, long, v1alpha1.AnalysisPhaseError},
		{"400 characters and a newline", `{"name":"{{args.s}}","namespace":"shop"}`, long + "\n", v1alpha1.AnalysisPhaseError},
		{"400 characters and a quote", `{"name":"{{args.s}}","namespace":"shop"}`, `"` + long, v1alpha1.AnalysisPhaseError},
		{"quoted by the verdict", `{"name":"checkout","namespace":"shop","revision":"{{args.s}}"}`, `7"s3cr3t-revision`, v1alpha1.AnalysisPhaseError},
		{"quoted twice by the verdict", `{"name":"checkout","namespace":"shop","revision":"{{args.s}}"}`, `7\"s3cr3t-revision`, v1alpha1.AnalysisPhaseError},
		// a value that is also a word of the messages: redacted wherever it appears, the verdict kept
		{"a common word", `{"name":"{{args.s}}","namespace":"shop"}`, "checkout", v1alpha1.AnalysisPhaseSuccessful},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local := fakeClient(objs...)
			log := &syncLog{}
			p := serve(t, rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Log: log,
				Local: func() (dynamic.Interface, error) { return local, nil }, Now: func() time.Time { return time.Unix(0, 0) }}))
			secret := tc.secret
			run := analysisRun(v1alpha1.Argument{Name: "s", Value: &secret, ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "creds", Key: "s"}}})
			m := p.Run(run, metric(resolveQuoted(tc.config, map[string]string{"s": secret})))
			if m.Phase != tc.phase {
				t.Errorf("phase %s, want %s: %s", m.Phase, tc.phase, m.Message)
			}
			if !json.Valid([]byte(m.Value)) {
				t.Errorf("the value is not JSON: %s", m.Value)
			}
			outputs := map[string]string{"message": m.Message, "value": m.Value, "log": log.String()}
			for k, v := range m.Metadata {
				outputs["metadata "+k] = v
			}
			for what, out := range outputs {
				if f, ok := leaked(out, secret); ok {
					t.Errorf("the %s holds the Secret's value as %q:\n%s", what, f, out)
				}
			}
		})
	}
}

// leaked finds a form of secret in out: as it is, trimmed, quoted (%q, %+q, and %q twice), JSON-escaped,
// or any run of 16 of its characters (what a clip of a long value leaves).
func leaked(out, secret string) (string, bool) {
	inner := func(q string) string { return q[1 : len(q)-1] }
	js := func(s string) string { b, _ := json.Marshal(s); return inner(string(b)) }
	var forms []string
	for _, s := range []string{secret, strings.TrimSpace(secret)} {
		forms = append(forms, s, inner(strconv.Quote(s)), inner(strconv.QuoteToASCII(s)), js(s),
			inner(strconv.Quote(inner(strconv.Quote(s)))), js(inner(strconv.Quote(s))))
	}
	if r := []rune(strings.TrimSpace(secret)); len(r) > 16 {
		for i := 0; i+16 <= len(r); i++ {
			forms = append(forms, string(r[i:i+16]))
		}
	}
	for _, f := range forms {
		if strings.Contains(out, f) {
			return f, true
		}
	}
	return "", false
}

var _ = fmt.Sprint
