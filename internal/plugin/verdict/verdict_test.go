package verdict_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	redaction "github.com/analysis-health/analysis-health/internal/plugin/redact"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// fixture is one of testdata/*.yaml: frames recorded by test/rollouts/scenarios from Argo Rollouts' controllers,
// which TestFixturesAreRecorded holds equal to the timelines they come from. Texts of the tests name the
// fixture's pod-template hash HASH and its Rollout's uid UID (sub).
func fixture(t testing.TB, name string) verdict.Objects {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Rollout      map[string]any   `json:"rollout"`
		AnalysisRuns []map[string]any `json:"analysisRuns"`
		Experiments  []map[string]any `json:"experiments"`
	}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatal(err)
	}
	return verdict.Objects{Rollout: f.Rollout, AnalysisRuns: f.AnalysisRuns, Experiments: f.Experiments}
}

// sub replaces HASH and UID in s by the fixture Rollout's current pod-template hash and uid.
func sub(o verdict.Objects, s string) string {
	s = strings.ReplaceAll(s, "HASH", text(mapOf(o.Rollout["status"])["currentPodHash"]))
	return strings.ReplaceAll(s, "UID", text(mapOf(o.Rollout["metadata"])["uid"]))
}

func deepCopy(t *testing.T, m map[string]any) map[string]any {
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func deepCopyAll(t *testing.T, l []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range l {
		out = append(out, deepCopy(t, m))
	}
	return out
}

func set(obj map[string]any, value any, path ...string) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
}

func fromYAML(t *testing.T, s string) map[string]any {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scenario string
		edit     func(t *testing.T, o *verdict.Objects)
		opts     verdict.Options
		// revisionIsHash sets opts.Revision to the fixture's hash
		revisionIsHash bool
		phase          string
		message        string
	}{
		{name: "promoted", scenario: "step-successful", phase: verdict.Successful, message: "is fully promoted"},
		{name: "the current revision by number", scenario: "step-successful", opts: verdict.Options{Revision: "2"}, phase: verdict.Successful},
		{name: "the current revision by hash", scenario: "step-successful", revisionIsHash: true, phase: verdict.Successful},
		{name: "an unknown revision", scenario: "step-successful", opts: verdict.Options{Revision: "5"}, phase: verdict.Error,
			message: `revision "5" is neither the current revision of Rollout checkout`},
		{name: "the spec not observed yet", scenario: "step-successful", phase: verdict.Running, message: "Waiting for rollout spec update to be observed",
			edit: func(t *testing.T, o *verdict.Objects) { set(o.Rollout, int64(99), "metadata", "generation") }},
		{name: "no status yet", scenario: "step-successful", phase: verdict.Running,
			edit: func(t *testing.T, o *verdict.Objects) { delete(o.Rollout, "status") }},
		{name: "a run of another Rollout is ignored", scenario: "step-successful", phase: verdict.Successful,
			edit: func(t *testing.T, o *verdict.Objects) {
				ar := deepCopy(t, fixture(t, "step-failed").AnalysisRuns[0])
				set(ar, []any{map[string]any{"kind": "Rollout", "name": "payments", "uid": "x"}}, "metadata", "ownerReferences")
				set(ar, "other-run", "metadata", "name")
				o.AnalysisRuns = append(o.AnalysisRuns, ar)
			}},
		{name: "failed", scenario: "step-failed", phase: verdict.Failed, message: `Step analysis run checkout-HASH-2-1: Metric "success-rate" assessed Failed`},
		{name: "a failed experiment", scenario: "step-successful", phase: verdict.Failed, message: "Experiment checkout-HASH-2-1: Experiment has failed",
			edit: func(t *testing.T, o *verdict.Objects) {
				o.Experiments = append(o.Experiments, fromYAML(t, sub(*o, `
metadata:
  name: checkout-HASH-2-1
  labels: {rollouts-pod-template-hash: HASH}
  ownerReferences: [{kind: Rollout, name: checkout, uid: UID}]
status: {phase: Failed, analysisRuns: [{name: a, analysisRun: checkout-HASH-2-1-a, phase: Failed}]}
`)))
			}},
		{name: "an experiment's run still measuring", scenario: "step-successful", phase: verdict.Running, message: "Experiment analysis run checkout-HASH-2-1-a",
			edit: func(t *testing.T, o *verdict.Objects) {
				o.Experiments = append(o.Experiments, fromYAML(t, sub(*o, `
metadata:
  name: checkout-HASH-2-1
  labels: {rollouts-pod-template-hash: HASH}
  ownerReferences: [{kind: Rollout, name: checkout}]
status: {phase: Successful}
`)))
				o.AnalysisRuns = append(o.AnalysisRuns, fromYAML(t, sub(*o, `
metadata:
  name: checkout-HASH-2-1-a
  ownerReferences: [{kind: Experiment, name: checkout-HASH-2-1}]
status: {phase: Running}
`)))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := fixture(t, tc.scenario)
			if tc.edit != nil {
				tc.edit(t, &objs)
			}
			if tc.revisionIsHash {
				tc.opts.Revision = sub(objs, "HASH")
			}
			tc.message = sub(objs, tc.message)
			v, err := verdict.Judge(objs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if v.Phase != tc.phase || !strings.Contains(v.Message, tc.message) {
				t.Fatalf("%s %q, want %s containing %q", v.Phase, v.Message, tc.phase, tc.message)
			}
			var sum verdict.Summary
			if err := json.Unmarshal([]byte(v.Structured), &sum); err != nil || sum.Verdict != v.Phase || sum.Rollout != "shop/checkout" {
				t.Errorf("structured verdict %s (%v)", v.Structured, err)
			}
		})
	}
}

// The value and the structured verdict stay within their bound however many runs and metrics there are,
// keep the newest runs, say how much they left out, and never carry a redacted string.
func TestValueBoundAndRedaction(t *testing.T) {
	objs := fixture(t, "step-failed")
	base := objs.AnalysisRuns[0]
	secret := "hunter2-secret"
	for i := 0; i < 30; i++ {
		ar := deepCopy(t, base)
		set(ar, sub(objs, "checkout-HASH-2-1.")+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "metadata", "name")
		set(ar, "2026-01-01T00:00:00Z", "metadata", "creationTimestamp")
		set(ar, strings.Repeat("long message with "+secret+" ", 40), "status", "message")
		labels := ar["metadata"].(map[string]any)["labels"].(map[string]any)
		labels["step-index"] = string(rune('0' + i%10))
		labels["rollout-type"] = []string{"Step", "Background", "PrePromotion"}[i%3] + strings.Repeat("X", i)
		objs.AnalysisRuns = append(objs.AnalysisRuns, ar)
	}
	for _, max := range []int{0, 600, 1500} {
		v, err := verdict.Judge(objs, verdict.Options{MaxValueBytes: max, Redact: redaction.New(secret)})
		if err != nil {
			t.Fatal(err)
		}
		limit := max
		if limit == 0 {
			limit = verdict.DefaultMaxValueBytes
		}
		var sum verdict.Summary
		if len(v.Structured) > limit || json.Unmarshal([]byte(v.Structured), &sum) != nil {
			t.Fatalf("max %d: %d bytes: %s", max, len(v.Structured), v.Structured)
		}
		if sum.OmittedRuns == 0 && sum.OmittedMetrics == 0 {
			t.Errorf("max %d: nothing reported omitted from %d runs", max, len(objs.AnalysisRuns))
		}
		words := valueWords(t, v.Value)
		named := strings.Count(words, "AnalysisRun ")
		if len(v.Value) > limit || named < len(objs.AnalysisRuns) && !strings.Contains(words, "runs left out") {
			t.Errorf("max %d: a value of %d bytes, or one that names %d of %d runs and does not say it left some out: %s",
				max, len(v.Value), named, len(objs.AnalysisRuns), v.Value)
		}
		if max == 600 && named == len(objs.AnalysisRuns) {
			t.Errorf("max %d: %d runs named in %d bytes", max, named, len(v.Value))
		}
		if strings.Contains(v.Value+v.Structured, secret) || strings.Contains(v.Message, secret) {
			t.Errorf("max %d: the secret leaked", max)
		}
		if v.Phase != verdict.Failed {
			t.Errorf("max %d: %s", max, v.Phase)
		}
	}
}

// With the scripts' inconclusive option set to Degraded, an inconclusive analysis fails the verification,
// as it makes the Rollout Degraded in Argo CD.
func TestInconclusiveDegraded(t *testing.T) {
	objs := fixture(t, "step-inconclusive")
	for _, tc := range []struct {
		opts verdict.Options
		want string
	}{{verdict.Options{}, verdict.Inconclusive}, {verdict.Options{InconclusiveDegraded: true}, verdict.Failed}} {
		v, err := verdict.Judge(objs, tc.opts)
		if err != nil || v.Phase != tc.want {
			t.Errorf("%+v: %s %q (%v), want %s", tc.opts, v.Phase, v.Message, err, tc.want)
		}
	}
	if v, _ := verdict.Judge(fixture(t, "step-running"), verdict.Options{}); v.Phase != verdict.Running {
		t.Errorf("running step analysis: %s %q", v.Phase, v.Message)
	}
}
