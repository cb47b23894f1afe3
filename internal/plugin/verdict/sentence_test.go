package verdict_test

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// valueWords is what Kargo's UI makes of a measurement's value (ui/src/features/common/analysis-modal/
// transforms.ts transformMeasurementValue, v1.11.2): JSON.parse, without a try/catch. Ours must parse to
// a string, whose text the Value column shows, and never to one that looks like a number, which the UI
// would chart (isFiniteNumber: Number(String(value))).
func valueWords(t testing.TB, value string) string {
	t.Helper()
	var words string
	if err := json.Unmarshal([]byte(value), &words); err != nil || !strings.HasPrefix(value, `"`) {
		t.Fatalf("the value %s is not a JSON string (%v)", value, err)
	}
	if jsNumeric(words) {
		t.Fatalf("the value %s looks like a number to Kargo's UI", value)
	}
	return words
}

// jsNumeric is Number.isFinite(Number(s)) of a non-empty string, ECMAScript's StringToNumber: white space
// trimmed, then a decimal literal with an optional sign and exponent, or a 0x, 0o or 0b integer; the
// empty string is 0, which the UI's isFiniteNumber excludes (!value).
func jsNumeric(s string) bool {
	if s == "" {
		return false
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return true // Number("  ") is 0, and "  " is truthy
	}
	if regexp.MustCompile(`^0[xX][0-9a-fA-F]+$|^0[oO][0-7]+$|^0[bB][01]+$`).MatchString(t) {
		return true
	}
	if !regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`).MatchString(t) {
		return false
	}
	f, err := strconv.ParseFloat(t, 64)
	return err == nil && !math.IsInf(f, 0)
}

func TestJSNumeric(t *testing.T) {
	for s, want := range map[string]bool{"0.99": true, " 12 ": true, "1e3": true, "0x1F": true, "-.5": true, " ": true,
		"": false, "Infinity": false, "1e999": false, "12 runs": false, "checkout rev 2": false, "[0.99]": false} {
		if got := jsNumeric(s); got != want {
			t.Errorf("jsNumeric(%q) = %v, want %v", s, got, want)
		}
	}
}

// experimentObjects is step-successful with an Experiment of the revision and its AnalysisRun, as the
// experiment controller leaves them, in the phase given.
func experimentObjects(t *testing.T, phase string) verdict.Objects {
	o := fixture(t, "step-successful")
	counts := "successful: 2"
	if phase == verdict.Failed {
		counts = "failed: 2"
	}
	o.Experiments = append(o.Experiments, fromYAML(t, sub(o, `
metadata:
  name: checkout-HASH-2-1
  labels: {rollouts-pod-template-hash: HASH}
  ownerReferences: [{kind: Rollout, name: checkout, uid: UID}]
status: {phase: `+phase+`, analysisRuns: [{name: latency, analysisRun: checkout-HASH-2-1-latency, phase: `+phase+`}]}
`)))
	o.AnalysisRuns = append(o.AnalysisRuns, fromYAML(t, sub(o, `
metadata:
  name: checkout-HASH-2-1-latency
  ownerReferences: [{kind: Experiment, name: checkout-HASH-2-1}]
spec:
  metrics: [{name: p99-latency, count: 2, successCondition: "result < 300", provider: {web: {url: "http://metrics/p99"}}}]
status:
  phase: `+phase+`
  metricResults: [{name: p99-latency, phase: `+phase+`, count: 2, `+counts+`, measurements: [{phase: `+phase+`, value: "212"}]}]
`)))
	return o
}

// TestValueSentence: the value is a sentence naming the Rollout, the revision, each run and experiment
// with each metric's phase and last value, and, unless the runs passed, the verdict and its message; it is
// a JSON string that is never numeric-looking, within its bound; the structured verdict reaches tools
// through the metadata, with the pin. The sentences are testdata/values.golden (-update rewrites it).
func TestValueSentence(t *testing.T) {
	var all strings.Builder
	for _, tc := range []struct {
		name  string
		objs  func(t *testing.T) verdict.Objects
		opts  verdict.Options
		phase string
		// want are parts of the sentence, HASH the fixture's pod-template hash
		want []string
	}{
		{name: "successful", objs: func(t *testing.T) verdict.Objects { return fixture(t, "step-successful") }, phase: verdict.Successful,
			want: []string{`checkout rev 2 (HASH): AnalysisRun checkout-HASH-2-1 Successful — success-rate 0.99 ×3 passed "result >= 0.95"`}},
		{name: "failed", objs: func(t *testing.T) verdict.Objects { return fixture(t, "step-failed") }, phase: verdict.Failed,
			want: []string{`checkout rev 2 (HASH): AnalysisRun checkout-HASH-2-1 Failed — success-rate 0.5 ×3 (2 failed) failed (met failureCondition "result < 0.8")`,
				`. Failed: Step analysis run checkout-HASH-2-1: `}},
		{name: "inconclusive", objs: func(t *testing.T) verdict.Objects { return fixture(t, "step-inconclusive") }, phase: verdict.Inconclusive,
			want: []string{`AnalysisRun checkout-HASH-2-1 Inconclusive — success-rate 0.9 ×2 (1 inconclusive) inconclusive (met neither successCondition "result >= 0.95" nor failureCondition "result < 0.8")`,
				`. Inconclusive: Step analysis run checkout-HASH-2-1`}},
		{name: "running", objs: func(t *testing.T) verdict.Objects { return fixture(t, "step-running") }, phase: verdict.Running,
			want: []string{`checkout rev 2 (HASH): AnalysisRun checkout-HASH-2-1 Running — success-rate 0.99 ×1 running. Running: `}},
		{name: "error: an unknown revision", objs: func(t *testing.T) verdict.Objects { return fixture(t, "step-successful") },
			opts: verdict.Options{Revision: "5"}, phase: verdict.Error,
			want: []string{`checkout: Error: revision "5" is neither the current revision of Rollout checkout`}},
		{name: "first deployment", objs: func(t *testing.T) verdict.Objects { return noAnalysisObjects(t, "first deployment") }, phase: verdict.Successful,
			want: []string{`checkout rev 1 (HASH): Successful: revision HASH (revision 1) is fully promoted, and no analysis ran for it: first deployment`}},
		{name: "no analysis, policy failed", objs: func(t *testing.T) verdict.Objects { return noAnalysisObjects(t, "no analysis in the strategy") },
			opts: verdict.Options{NoAnalysis: verdict.NoAnalysis{Policy: verdict.NoAnalysisFailed}}, phase: verdict.Failed,
			want: []string{`checkout rev 2 (HASH): Failed: revision HASH (revision 2) is fully promoted, and no analysis ran for it: no analysis in the strategy`}},
		{name: "an experiment that passed", objs: func(t *testing.T) verdict.Objects { return experimentObjects(t, "Successful") }, phase: verdict.Successful,
			want: []string{`checkout rev 2 (HASH): Experiment checkout-HASH-2-1 Successful; `,
				`AnalysisRun checkout-HASH-2-1-latency Successful — p99-latency 212 ×2 passed "result < 300"`,
				`AnalysisRun checkout-HASH-2-1 Successful — success-rate 0.99 ×3 passed "result >= 0.95"`}},
		{name: "an experiment that failed", objs: func(t *testing.T) verdict.Objects { return experimentObjects(t, "Failed") }, phase: verdict.Failed,
			want: []string{`Experiment checkout-HASH-2-1 Failed; `, `AnalysisRun checkout-HASH-2-1-latency Failed — p99-latency 212 ×2 (2 failed) failed (missed successCondition "result < 300")`,
				`. Failed: Experiment checkout-HASH-2-1: `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.objs(t)
			v, err := verdict.Judge(objs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if v.Phase != tc.phase {
				t.Fatalf("%s %q, want %s", v.Phase, v.Message, tc.phase)
			}
			words := valueWords(t, v.Value)
			for _, w := range tc.want {
				if w = sub(objs, w); !strings.Contains(words, w) {
					t.Errorf("the value %q lacks %q", words, w)
				}
			}
			if len(v.Value) > verdict.DefaultMaxValueBytes || len(v.Structured) > verdict.DefaultMaxValueBytes {
				t.Errorf("%d and %d bytes, over %d", len(v.Value), len(v.Structured), verdict.DefaultMaxValueBytes)
			}
			// the verdict's words follow the runs' unless they passed
			if says := strings.Contains(words, v.Phase+": "); says != (v.Phase != verdict.Successful || len(summaryOf(t, v).Runs) == 0) {
				t.Errorf("the value %q names the verdict %s: %v", words, v.Phase, says)
			}
			checkMetadata(t, v)
			all.WriteString(tc.name + "\n" + v.Value + "\n\n")
		})
	}
	value, structured := verdict.ErrorValue(`Rollout shop/checkout not found in the Rollouts controller's cluster`)
	if words := valueWords(t, value); words != `Error: Rollout shop/checkout not found in the Rollouts controller's cluster` {
		t.Errorf("error value %s", value)
	}
	if structured != `{"verdict":"Error","message":"Rollout shop/checkout not found in the Rollouts controller's cluster"}` {
		t.Errorf("error's structured verdict %s", structured)
	}
	if value, structured := verdict.ErrorValue(strings.Repeat("x", 5000)); len(value) > 400 || len(structured) > 400 {
		t.Errorf("an error of 5000 bytes: a value of %d bytes and a structured verdict of %d", len(value), len(structured))
	}
	all.WriteString("error before a judgement\n" + value + "\n")
	golden.File(t, "testdata/values.golden", []byte(all.String()))
}

func summaryOf(t *testing.T, v verdict.Verdict) verdict.Summary {
	t.Helper()
	var s verdict.Summary
	if err := json.Unmarshal([]byte(v.Structured), &s); err != nil {
		t.Fatalf("structured verdict %s: %v", v.Structured, err)
	}
	return s
}

// checkMetadata: the metadata the plugin writes round-trips the structured verdict and the pin, and its
// values are strings, as Argo Rollouts keeps them.
func checkMetadata(t *testing.T, v verdict.Verdict) {
	t.Helper()
	md := v.Metadata()
	got, ok := verdict.SummaryFromMetadata(md)
	if !ok || !reflect.DeepEqual(got, summaryOf(t, v)) || got.Verdict != v.Phase {
		t.Errorf("metadata %v: the structured verdict %+v (%v), want %s", md, got, ok, v.Structured)
	}
	if pin := verdict.PinFromMetadata(md); !reflect.DeepEqual(pin, v.Pin) {
		t.Errorf("metadata %v: pin %+v, want %+v", md, pin, v.Pin)
	}
}
