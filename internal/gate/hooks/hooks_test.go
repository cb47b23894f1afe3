package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rollouts "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/analysis-health/analysis-health/internal/bench/bulkgen"
	goldenfile "github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

func chartStreams(t *testing.T, name string) []manifest.Stream {
	t.Helper()
	s, err := manifest.ReadStreams([]string{filepath.Join("..", "..", "..", "testdata", "charts", name+".yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t *testing.T, source string, raw []byte) []manifest.Stream {
	t.Helper()
	s, err := manifest.DecodeStream(source, raw)
	if err != nil {
		t.Fatal(err)
	}
	return []manifest.Stream{s}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.File(t, filepath.Join("testdata", name), got)
}

// Values that stay the same for an Application (its Kargo stage, its owner): see docs/hooks.md on why
// per-render values do not belong in canary step analyses.
var stageLabels = map[string]string{"kargo.akuity.io/stage": "prod"}

var goldenCases = []struct {
	name, chart string
	opts        Options
	warnings    int
}{
	{name: "canary-checkout.barrier", chart: "canary-checkout", opts: Options{Mode: Barrier}, warnings: 1},
	{name: "canary-checkout.labels", chart: "canary-checkout", opts: Options{Mode: Barrier, AnalysisLabels: stageLabels,
		AnalysisAnnotations: map[string]string{"example.com/owner": "team-checkout"}}, warnings: 1},
	{name: "bluegreen-payments.barrier", chart: "bluegreen-payments", opts: Options{Mode: Barrier}},
	{name: "bluegreen-payments.labels", chart: "bluegreen-payments", opts: Options{Mode: Barrier, AnalysisLabels: stageLabels}},
	{name: "deployment-web.barrier", chart: "deployment-web", opts: Options{Mode: Barrier}},
	{name: "deployment-web.analysisrun", chart: "deployment-web", opts: Options{Mode: AnalysisRun, Args: []Arg{{"expected-version", "2.4.0"}}, AnalysisLabels: stageLabels}},
	{name: "plain-docs.barrier", chart: "plain-docs", opts: Options{Mode: Barrier}},
}

// The post-rendered output of the four charts in each mode.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Generate(chartStreams(t, tc.chart), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".yaml", res.PostRendered())
			if len(res.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", res.Warnings, tc.warnings)
			}
		})
	}
}

// What the CLI reads (manifest.ReadStreamsKeeping with Keep, which drops most of every object that is not
// a Rollout or template) gives exactly what the whole objects give: the same output, warnings and
// patches, in every mode. Keep is only a memory saving if this holds.
func TestKeepChangesNothing(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := Generate(chartStreams(t, tc.chart), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := manifest.ReadStreamsKeeping([]string{filepath.Join("..", "..", "..", "testdata", "charts", tc.chart+".yaml")}, nil, Keep)
			if err != nil {
				t.Fatal(err)
			}
			dropped := 0
			for _, s := range kept {
				for _, o := range s.Objects() {
					if _, hasSpec := o.Object["spec"]; !hasSpec && o.Kind() != "ConfigMap" && o.Kind() != "Secret" {
						dropped++
					}
				}
			}
			if dropped == 0 {
				t.Fatal("Keep kept every object whole: the chart has nothing to drop, or Keep drops nothing")
			}
			res, err := Generate(kept, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.PostRendered(), whole.PostRendered()) {
				t.Error("the post-rendered output differs")
			}
			if strings.Join(res.Warnings, "\n") != strings.Join(whole.Warnings, "\n") || strings.Join(res.Patched, ",") != strings.Join(whole.Patched, ",") {
				t.Errorf("warnings %q patched %q, whole objects give %q %q", res.Warnings, res.Patched, whole.Warnings, whole.Patched)
			}
		})
	}
}

// WriteTo stops at the first failed write and returns its error, so that a closed pipe is reported.
func TestWriteToReportsTheWriteError(t *testing.T) {
	res, err := Generate(chartStreams(t, "canary-checkout"), Options{Mode: Barrier})
	if err != nil {
		t.Fatal(err)
	}
	w := &failingWriter{after: 100}
	n, err := res.WriteTo(w)
	if err == nil || n > 100 || w.calls > w.okCalls+1 {
		t.Errorf("WriteTo wrote %d bytes in %d calls and returned %v; want the write error after 100 bytes and no further call", n, w.calls, err)
	}
}

type failingWriter struct{ after, written, calls, okCalls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.written+len(p) > w.after {
		return 0, errors.New("broken pipe")
	}
	w.written += len(p)
	w.okCalls++
	return len(p), nil
}

// Every generated or patched object decodes into the real Kubernetes / Argo Rollouts type with unknown
// fields rejected, and every generated name is a DNS-1123 label (63 characters at most).
func TestGeneratedObjectsAreValid(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Generate(chartStreams(t, tc.chart), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := manifest.Decode("out", res.PostRendered())
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, o := range objs {
				var target any
				switch o.Kind() {
				case "ConfigMap":
					target = &corev1.ConfigMap{}
				case "AnalysisRun":
					target = &rollouts.AnalysisRun{}
				case "Rollout":
					target = &rollouts.Rollout{}
				default:
					continue
				}
				raw, _ := json.Marshal(o.Object)
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(target); err != nil {
					t.Errorf("%s %s does not decode strictly into %T: %v", o.Kind(), o.Name(), target, err)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("nothing checked")
			}
			for _, g := range res.Generated {
				if errs := validation.IsDNS1123Label(g.Name); len(errs) > 0 {
					t.Errorf("%s name %q: %v", g.Kind, g.Name, errs)
				}
			}
		})
	}
}

// The generated objects mean what docs/hooks.md says.
func TestGeneratedContent(t *testing.T) {
	res, err := Generate(chartStreams(t, "bluegreen-payments"), Options{Mode: Barrier})
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	objs, _ := manifest.Decode("g", res.GeneratedYAML())
	raw, _ := json.Marshal(objs[0].Object)
	if err := json.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Annotations[ArgoCDHook] != "PostSync" || cm.Annotations[ArgoCDHookDeletePolicy] != "BeforeHookCreation,HookSucceeded,HookFailed" ||
		cm.Namespace != "payments" || cm.Data["rollouts"] != "payments/payments\n" || cm.Labels[ManagedByLabel] != ManagedBy {
		t.Errorf("barrier %+v", cm)
	}

	res, err = Generate(chartStreams(t, "deployment-web"), Options{Mode: AnalysisRun, Args: []Arg{{"expected-version", "2.4.0"}, {"base-url", "http://web.test"}}})
	if err != nil {
		t.Fatal(err)
	}
	var run rollouts.AnalysisRun
	objs, _ = manifest.Decode("g", res.GeneratedYAML())
	raw, _ = json.Marshal(objs[0].Object)
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range run.Spec.Args {
		args = append(args, a.Name+"="+*a.Value)
	}
	var metrics []string
	for _, m := range run.Spec.Metrics {
		metrics = append(metrics, m.Name)
	}
	if strings.Join(args, ",") != "base-url=http://web.test,expected-version=2.4.0" ||
		strings.Join(metrics, ",") != "http-smoke,version,error-rate" ||
		len(run.Spec.DryRun) != 1 || run.Spec.DryRun[0].MetricName != "error-rate" ||
		len(run.Spec.MeasurementRetention) != 1 || run.Spec.MeasurementRetention[0].Limit != 20 ||
		run.Annotations[ArgoCDHook] != "PostSync" || run.Annotations[ArgoCDHookDeletePolicy] != "BeforeHookCreation,HookSucceeded" ||
		run.Annotations[TemplateAnnotation] != "AnalysisTemplate/web-verify" || run.Spec.Metrics[1].Provider.Web.URL != "{{args.base-url}}/version" {
		t.Errorf("AnalysisRun %+v", run)
	}
}

// Running over its own output adds nothing, in every mode.
func TestIdempotent(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			first, err := Generate(chartStreams(t, tc.chart), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			out := first.PostRendered()
			second, err := Generate(decode(t, "-", out), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(second.Generated) != 0 || len(second.Patched) != 0 {
				t.Errorf("second run generated %d objects and patched %v", len(second.Generated), second.Patched)
			}
			if again := second.PostRendered(); !bytes.Equal(again, out) {
				t.Errorf("second run changed the stream:\n%s", again)
			}
		})
	}
}

// The input passes through byte for byte: every document not patched keeps its bytes, and patched
// Rollouts keep their comments.
func TestPassThrough(t *testing.T) {
	streams := chartStreams(t, "canary-checkout")
	in := streams[0].Bytes()
	res, err := Generate(streams, Options{Mode: Barrier})
	if err != nil {
		t.Fatal(err)
	}
	if out := res.PostRendered(); !bytes.HasPrefix(out, in) {
		t.Fatal("without patches the output must start with the input, unchanged")
	}
	res, err = Generate(chartStreams(t, "canary-checkout"), Options{Mode: Barrier, AnalysisLabels: stageLabels})
	if err != nil {
		t.Fatal(err)
	}
	out := decode(t, "out", res.PostRendered())[0]
	if len(out.Docs) != len(streams[0].Docs)+1 {
		t.Fatalf("%d documents, want %d", len(out.Docs), len(streams[0].Docs)+1)
	}
	for i, d := range streams[0].Docs {
		isRollout := len(d.Objects) == 1 && d.Objects[0].Kind() == "Rollout"
		if same := bytes.Equal(out.Docs[i].Raw, d.Raw); same == isRollout {
			t.Errorf("document %d (%s): unchanged = %v", d.Doc, d.Objects[0].Kind(), same)
		}
	}
	rollout := string(out.Docs[6].Raw)
	for _, c := range []string{"# Source: checkout/templates/rollout.yaml", "# Release managers promote the last 40% by hand."} {
		if !strings.Contains(rollout, c) {
			t.Errorf("patched Rollout lost comment %q", c)
		}
	}
	if res.Patched[0] != "Rollout checkout" {
		t.Errorf("patched %v", res.Patched)
	}
}

func TestStreamsAreJoinedSafely(t *testing.T) {
	a := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}")   // no final newline
	b := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n") // no leading ---
	sa, _ := manifest.DecodeStream("a.yaml", a)
	sb, _ := manifest.DecodeStream("b.yaml", b)
	res, err := Generate([]manifest.Stream{sa, sb}, Options{Mode: Barrier})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode("out", res.PostRendered())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name())
	}
	if len(names) != 3 || names[0] != "a" || names[1] != "b" || !strings.HasPrefix(names[2], "analysis-health-barrier-") {
		t.Errorf("objects %v", names)
	}
}

// Rollouts inside a List are patched in place.
func TestListItemsArePatched(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: s}
- apiVersion: argoproj.io/v1alpha1
  kind: Rollout
  metadata: {name: r}
  spec:
    strategy:
      blueGreen:
        activeService: s
        prePromotionAnalysis:
          templates: [{templateName: t}]
          analysisRunMetadata: {}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics: [{name: m, provider: {web: {url: "http://x"}}}]
`
	res, err := Generate(decode(t, "list.yaml", []byte(in)), Options{Mode: Barrier, AnalysisLabels: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode("out", res.PostRendered())
	if err != nil {
		t.Fatal(err)
	}
	var ro rollouts.Rollout
	raw, _ := json.Marshal(objs[1].Object)
	if err := json.Unmarshal(raw, &ro); err != nil {
		t.Fatal(err)
	}
	if ro.Spec.Strategy.BlueGreen.PrePromotionAnalysis.AnalysisRunMetadata.Labels["team"] != "a" {
		t.Errorf("Rollout in a List not patched: %s", res.PostRendered())
	}
}

func TestNames(t *testing.T) {
	// Stable: the same manifests give the same names; different manifests, different barrier names.
	a, _ := Generate(chartStreams(t, "plain-docs"), Options{Mode: Barrier})
	b, _ := Generate(chartStreams(t, "plain-docs"), Options{Mode: Barrier})
	c, _ := Generate(chartStreams(t, "deployment-web"), Options{Mode: Barrier})
	if a.Generated[0].Name != b.Generated[0].Name || a.Generated[0].Name == c.Generated[0].Name {
		t.Errorf("names %s %s %s", a.Generated[0].Name, b.Generated[0].Name, c.Generated[0].Name)
	}
	// A template name that is long and not a DNS label still gives a valid AnalysisRun name.
	long := strings.Repeat("very.long.template.name.", 4) + "v2"
	in := `apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: ` + long + `}
spec:
  metrics: [{name: m, provider: {web: {url: "http://x"}}}]
`
	res, err := Generate(decode(t, "t.yaml", []byte(in)), Options{Mode: AnalysisRun, Templates: []string{long}})
	if err != nil {
		t.Fatal(err)
	}
	name := res.Generated[0].Name
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 || len(name) > 63 {
		t.Errorf("name %q (%d): %v", name, len(name), errs)
	}
}

func TestErrors(t *testing.T) {
	const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  strategy:
    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}]}
`
	const tmpl = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  args: [{name: service-name}]
  metrics: [{name: success-rate, count: 1, provider: {web: {url: "http://x"}}}]
`
	const verify = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: verify}
spec:
  args:
  - {name: version}
  - {name: ns, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
  - {name: token, valueFrom: {secretKeyRef: {name: s, key: k}}}
  metrics: [{name: m, provider: {web: {url: "http://x"}}}]
`
	for _, tc := range []struct {
		name, in string
		opts     Options
		want     string
	}{
		{"absent template", rollout, Options{Mode: Barrier, RequireTemplates: true},
			`in.yaml (document 1): Rollout shop/checkout: spec.strategy.canary.steps[0].analysis: AnalysisTemplate "success-rate" is not in the input`},
		{"absent template hint", rollout, Options{Mode: Barrier, RequireTemplates: true}, "--known-template"},
		{"empty input", "# nothing\n", Options{Mode: Barrier}, "no Kubernetes objects in the input"},
		{"template naming nothing", tmpl, Options{Mode: AnalysisRun, Templates: []string{"succes-rate"}},
			`--template succes-rate: no AnalysisTemplate or ClusterAnalysisTemplate named "succes-rate" in the input (it has: AnalysisTemplate shop/success-rate)`},
		{"template a Rollout runs", rollout + "---\n" + tmpl, Options{Mode: AnalysisRun, Templates: []string{"success-rate"}},
			`in.yaml (document 2): AnalysisTemplate shop/success-rate is already run by Rollout shop/checkout: spec.strategy.canary.steps[0].analysis: a PostSync AnalysisRun would run the same analysis a second time`},
		{"nothing selected", tmpl, Options{Mode: AnalysisRun},
			`--mode analysisrun: no template selected: name one with --template NAME or annotate it with analysis-health.argoproj.io/verify: "true"`},
		{"ambiguous", tmpl + "---\n" + strings.Replace(tmpl, "namespace: shop", "namespace: other", 1), Options{Mode: AnalysisRun, Templates: []string{"success-rate"}},
			"--template success-rate: ambiguous, it names AnalysisTemplate shop/success-rate at in.yaml (document 1) and AnalysisTemplate other/success-rate at in.yaml (document 2); use NAMESPACE/NAME"},
		{"argument without value", verify, Options{Mode: AnalysisRun, Templates: []string{"verify"}},
			`in.yaml (document 1): AnalysisTemplate verify: argument "version" has no value`},
		{"fieldRef argument", verify, Options{Mode: AnalysisRun, Templates: []string{"verify"}, Args: []Arg{{"version", "1"}}},
			`argument "ns" takes its value from fieldRef, which only a Rollout or an Experiment resolves`},
		{"undeclared argument", verify, Options{Mode: AnalysisRun, Templates: []string{"verify"}, Args: []Arg{{"version", "1"}, {"ns", "x"}, {"colour", "red"}}},
			`--arg colour: no selected template declares an argument "colour" (they declare: ns, token, version)`},
		{"dry-run rule matching nothing", strings.Replace(tmpl, "spec:\n", "spec:\n  dryRun: [{metricName: latency}]\n", 1), Options{Mode: AnalysisRun, Templates: []string{"success-rate"}, Args: []Arg{{"service-name", "x"}}},
			`rule "latency" matches no metric`},
		{"nested template missing", strings.Replace(tmpl, "spec:\n", "spec:\n  templates: [{templateName: base}]\n", 1), Options{Mode: AnalysisRun, Templates: []string{"success-rate"}, Args: []Arg{{"service-name", "x"}}},
			`AnalysisTemplate shop/success-rate nests AnalysisTemplate "base", which is not in the input`},
		{"barrier with --template", tmpl, Options{Mode: Barrier, Templates: []string{"x"}}, "--template and --arg need --mode analysisrun"},
		{"unknown mode", tmpl, Options{Mode: "gate"}, `unknown mode "gate"`},
		{"reserved label", tmpl, Options{Mode: Barrier, AnalysisLabels: map[string]string{"rollout-type": "x"}}, `label "rollout-type" is set by the Rollouts controller`},
		{"invalid label value", tmpl, Options{Mode: Barrier, AnalysisLabels: map[string]string{"stage": "not valid!"}}, `label stage="not valid!"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Generate(decode(t, "in.yaml", []byte(tc.in)), tc.opts)
			if err == nil {
				t.Fatalf("no error; output:\n%s", res.PostRendered())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}

// The secretKeyRef argument survives (the analysis controller resolves it), given values replace the
// template's, and a selector label triggers a warning.
func TestArgumentsAndWarnings(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: verify
  annotations: {analysis-health.argoproj.io/verify: "true"}
spec:
  args:
  - {name: version, value: "1.0"}
  - {name: token, valueFrom: {secretKeyRef: {name: s, key: k}}}
  metrics: [{name: m, provider: {web: {url: "http://x"}}}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r}
spec:
  selector: {matchLabels: {app: r}}
  strategy: {canary: {steps: [{setWeight: 10}]}}
`
	res, err := Generate(decode(t, "in.yaml", []byte(in)), Options{Mode: AnalysisRun, Args: []Arg{{"version", "1.2"}},
		AnalysisLabels: map[string]string{"app": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	y := string(res.GeneratedYAML())
	for _, want := range []string{"- name: version\n      value: \"1.2\"", "secretKeyRef:", "app: x"} {
		if !strings.Contains(y, want) {
			t.Errorf("generated AnalysisRun lacks %q:\n%s", want, y)
		}
	}
	if len(res.Warnings) != 0 {
		t.Errorf("a Rollout without analysis blocks is not patched, so no selector warning: %q", res.Warnings)
	}
	in = strings.Replace(in, "steps: [{setWeight: 10}]", "steps: [{analysis: {templates: [{templateName: other}]}}]", 1) + `---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: other}
spec:
  metrics: [{name: m, provider: {web: {url: "http://x"}}}]
`
	res, err = Generate(decode(t, "in.yaml", []byte(in)), Options{Mode: Barrier, AnalysisLabels: map[string]string{"app": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `label "app" is also a selector label`) {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A problem many objects share is one line with a count and the first objects, not one line per object;
// a problem of one object still names where it is.
func TestErrorsAreGroupedByProblem(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, `---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r%d, namespace: ns}
spec:
  strategy:
    canary:
      steps:
      - analysis: {templates: [{templateName: missing}]}
`, i)
	}
	b.WriteString(`---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: other}
spec:
  strategy:
    blueGreen:
      prePromotionAnalysis: {templates: [{templateName: absent}]}
`)
	_, err := Generate(decode(t, "in.yaml", []byte(b.String())), Options{Mode: Barrier, RequireTemplates: true})
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`spec.strategy.canary.steps[0].analysis: AnalysisTemplate "missing" is not in the input: unless it already exists in the cluster, the Rollouts controller marks the Rollout InvalidSpec, which is Degraded as soon as it is applied (5 objects: Rollout ns/r0, Rollout ns/r1, Rollout ns/r2, …)`,
		`in.yaml (document 6): Rollout other: spec.strategy.blueGreen.prePromotionAnalysis: AnalysisTemplate "absent" is not in the input: unless it already exists in the cluster, the Rollouts controller marks the Rollout InvalidSpec, which is Degraded as soon as it is applied`,
		MissingTemplateHint,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// Many releases of a chart whose Rollout pauses at pause {} give one warning line per distinct warning,
// with the count of Rollouts, not one line per Rollout (a 50,000-document input printed 2,084 lines).
func TestWarningsGroupedOnBigInput(t *testing.T) {
	raw, err := bulkgen.Chart(filepath.Join("..", "..", "..", "testdata", "charts"), 400)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generate(decode(t, "chart", raw), Options{Mode: Barrier})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, p := range res.Report.Problems {
		distinct[p.Message] = true
	}
	if len(res.Report.Problems) <= len(distinct) {
		t.Fatalf("%d problems, %d distinct: the input should repeat a warning", len(res.Report.Problems), len(distinct))
	}
	if len(res.Warnings) != len(distinct) {
		t.Errorf("%d warning lines for %d distinct warnings: %q", len(res.Warnings), len(distinct), res.Warnings)
	}
	for _, w := range res.Warnings {
		if !strings.Contains(w, " objects: ") || !strings.Contains(w, ", …)") {
			t.Errorf("warning %q does not say how many Rollouts share it", w)
		}
	}
}
