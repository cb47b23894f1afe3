package inspect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rollouts "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	goldenfile "github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

var charts = []string{"canary-checkout", "bluegreen-payments", "deployment-web", "plain-docs"}

func readChart(t *testing.T, name string) []manifest.Object {
	t.Helper()
	objs, err := manifest.Read([]string{filepath.Join("..", "..", "..", "testdata", "charts", name+".yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.File(t, filepath.Join("testdata", name), got)
}

// The four rendered charts, as a table and as JSON.
func TestGoldenCharts(t *testing.T) {
	for _, c := range charts {
		t.Run(c, func(t *testing.T) {
			r, err := Inspect(readChart(t, c), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var table, js bytes.Buffer
			if err := WriteTable(&table, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			golden(t, c+".table", table.Bytes())
			golden(t, c+".json", js.Bytes())
			// The analyses (the first table and what each runs, up to the rollouts table) fit a
			// 120-column terminal on the bundled charts; their long columns used to make it ~190 wide.
			first, _, _ := strings.Cut(table.String(), "\nROLLOUT ")
			for _, line := range strings.Split(first, "\n") {
				if len(line) > 120 {
					t.Errorf("a %d-column line in the analyses: %s", len(line), line)
				}
			}
		})
	}
}

// What the golden files say, asserted directly so a wrong golden file cannot hide it.
func TestChartFacts(t *testing.T) {
	r, err := Inspect(readChart(t, "canary-checkout"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ro := r.Rollouts[0]
	// pause 1m + success-rate (5 × 1m: 0,1,2,3,4 → 4m) + experiment 5m + pause 5m = 15m, then pause {}.
	if ro.Strategy != "canary" || ro.Steps != 8 || ro.Estimate.Minimum != "15m0s" || !ro.Estimate.Indefinite || ro.Estimate.KargoRetryTimeout != "" {
		t.Errorf("canary: %+v", ro)
	}
	if got := strings.Join(ro.IndefinitePauses, ","); got != "spec.strategy.canary.steps[7].pause" {
		t.Errorf("indefinite pauses %q", got)
	}
	paths := []string{}
	for _, a := range ro.Analyses {
		paths = append(paths, a.Path+"="+a.Type)
	}
	if got := strings.Join(paths, " "); got != "spec.strategy.canary.steps[2].analysis=Step spec.strategy.canary.steps[4].experiment.analyses[0]=Experiment spec.strategy.canary.analysis=Background" {
		t.Errorf("analyses %s", got)
	}
	if bg := ro.Analyses[2]; strings.Join(bg.DryRunMetrics, ",") != "error-budget-burn" || *bg.StartingStep != 2 {
		t.Errorf("background: %+v", bg)
	}
	if len(r.Problems) != 1 || r.Problems[0].Severity != Warning || !strings.Contains(r.Problems[0].Message, "pause {} waits until someone promotes") ||
		!strings.Contains(r.Problems[0].Message, "generate --human-gate healthy lets them complete once the analysis before it passed") {
		t.Errorf("problems %+v", r.Problems)
	}

	r, err = Inspect(readChart(t, "bluegreen-payments"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ro = r.Rollouts[0]
	// Job metric (one measurement, run time unknown) + autoPromotionSeconds 60 + 30s + 3 × 30s.
	if ro.Estimate.Minimum != "3m0s" || ro.Estimate.KargoRetryTimeout != "5m0s" || len(ro.Estimate.NotCounted) != 1 {
		t.Errorf("blue-green estimate %+v", ro.Estimate)
	}
	post := ro.Analyses[1]
	if !post.Templates[0].ClusterScope || !post.Templates[0].Present || strings.Join(post.DryRunMetrics, ",") != "p95-latency" ||
		post.Args[1].ValueFrom != "fieldRef: metadata.namespace" || post.AnalysisRunMetadata.Labels["team"] != "payments" {
		t.Errorf("post-promotion %+v", post)
	}
	if len(r.Problems) != 0 {
		t.Errorf("problems %+v", r.Problems)
	}

	r, err = Inspect(readChart(t, "deployment-web"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rollouts) != 0 || len(r.Templates) != 1 || !r.Templates[0].Verify || len(r.Templates[0].UsedBy) != 0 {
		t.Errorf("web: %+v", r)
	}
}

// The charts are valid Argo Rollouts objects: they decode into v1.8.5's types with unknown fields
// rejected, so what inspect reads from them is what the controller will read.
func TestChartsDecodeStrictly(t *testing.T) {
	for _, c := range charts {
		for _, o := range readChart(t, c) {
			var target any
			switch o.Kind() {
			case "Rollout":
				target = &rollouts.Rollout{}
			case "AnalysisTemplate":
				target = &rollouts.AnalysisTemplate{}
			case "ClusterAnalysisTemplate":
				target = &rollouts.ClusterAnalysisTemplate{}
			default:
				continue
			}
			raw, _ := json.Marshal(o.Object)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(target); err != nil {
				t.Errorf("%s: %v", o.Where(), err)
			}
		}
	}
}

const successRate = `
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  args: [{name: service-name}]
  metrics:
  - name: success-rate
    interval: 1m
    count: 5
    provider: {prometheus: {address: http://prom, query: up}}
`

func rollout(strategy string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop}
spec:
  strategy:
` + strategy
}

func TestProblemsAndEstimates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest string
		opts     Options
		// problems are "severity: substring" in order.
		problems []string
		minimum  string
		kargo    string
	}{
		{name: "missing template makes the Rollout InvalidSpec",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}]}
`),
			problems: []string{`warning: spec.strategy.canary.steps[0].analysis: AnalysisTemplate "success-rate" is not in the input: unless it already exists in the cluster, the Rollouts controller marks the Rollout InvalidSpec`},
			minimum:  "0s", kargo: "5m0s"},
		{name: "known template counts as present",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}]}
`),
			opts: Options{KnownTemplates: []string{"success-rate"}}, minimum: "0s", kargo: "5m0s"},
		{name: "template in another namespace is missing",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}]}
`) + "---" + strings.Replace(successRate, "namespace: shop", "namespace: other", 1),
			problems: []string{`warning: spec.strategy.canary.steps[0].analysis: AnalysisTemplate "success-rate" is not in the input`}, minimum: "0s", kargo: "5m0s"},
		{name: "cluster scope needs a ClusterAnalysisTemplate",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate, clusterScope: true}], args: [{name: service-name, value: x}]}
`) + "---" + successRate,
			problems: []string{`warning: spec.strategy.canary.steps[0].analysis: ClusterAnalysisTemplate "success-rate" is not in the input`}, minimum: "0s", kargo: "5m0s"},
		{name: "missing experiment template aborts the Rollout at that step",
			manifest: rollout(`    canary:
      steps:
      - experiment: {duration: 2m, templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: nope}]}
`),
			problems: []string{`warning: spec.strategy.canary.steps[0].experiment.analyses[0]: AnalysisTemplate "nope" is not in the input: unless it already exists in the cluster, the Experiment errors at that step and the Rollout aborts (Degraded)`},
			minimum:  "2m0s", kargo: "5m0s"},
		{name: "unresolved argument",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}]}
`) + "---" + successRate,
			problems: []string{`error: spec.strategy.canary.steps[0].analysis: argument "service-name" has no value (args.service-name was not resolved)`}, minimum: "4m0s", kargo: "6m0s"},
		{name: "an empty value is a value",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: ""}]}
`) + "---" + successRate,
			minimum: "4m0s", kargo: "6m0s"},
		{name: "step analysis with a metric without count is InvalidSpec",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}]}
`) + "---" + strings.Replace(successRate, "    count: 5\n", "", 1),
			problems: []string{`error: spec.strategy.canary.steps[0].analysis: metric "success-rate" has an interval and no count, so it runs indefinitely`}, minimum: "0s", kargo: "5m0s"},
		{name: "dry-run rule matching no metric errors the run",
			manifest: rollout(`    blueGreen:
      activeService: a
      prePromotionAnalysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}], dryRun: [{metricName: latency}]}
`) + "---" + successRate,
			problems: []string{`error: spec.strategy.blueGreen.prePromotionAnalysis: dryRun rule "latency" matches no metric`}, minimum: "4m0s", kargo: "6m0s"},
		{name: "every metric dry-run never fails",
			manifest: rollout(`    blueGreen:
      activeService: a
      postPromotionAnalysis: {templates: [{templateName: success-rate}], args: [{name: service-name, value: x}], dryRun: [{metricName: "success"}]}
`) + "---" + successRate,
			problems: []string{`warning: spec.strategy.blueGreen.postPromotionAnalysis: every metric is dry-run (success-rate)`}, minimum: "4m0s", kargo: "6m0s"},
		{name: "autoPromotionEnabled false waits for a person",
			manifest: rollout(`    blueGreen:
      activeService: a
      autoPromotionEnabled: false
`),
			problems: []string{`warning: spec.strategy.blueGreen.autoPromotionEnabled: autoPromotionEnabled: false waits until someone promotes the Rollout, so a PostSync barrier holds`}, minimum: "0s"},
		{name: "spec.paused waits for a person",
			manifest: `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app}
spec: {paused: true, strategy: {canary: {steps: [{setWeight: 50}]}}}
`,
			problems: []string{`warning: spec.paused: the Rollout is paused until someone resumes it, so a PostSync barrier holds`}, minimum: "0s"},
		{name: "experiment without duration or required analysis runs until terminated",
			manifest: rollout(`    canary:
      steps:
      - experiment: {templates: [{name: c, specRef: canary}]}
`),
			problems: []string{`warning: spec.strategy.canary.steps[0].experiment: an experiment without duration or requiredForCompletion analysis runs until terminated`}, minimum: "0s"},
		{name: "pause durations: seconds, strings, Go durations; estimate above the Kargo timeout",
			manifest: rollout(`    canary:
      steps:
      - pause: {duration: 30}
      - pause: {duration: "90"}
      - pause: {duration: 1h}
`),
			problems: []string{`warning: estimated minimum 1h2m0s from sync to full promotion exceeds Kargo's argocd-update timeout 5m0s: set the step's retry.timeout to at least 1h33m0s`},
			minimum:  "1h2m0s", kargo: "1h33m0s"},
		{name: "estimate within a raised Kargo timeout",
			manifest: rollout(`    canary:
      steps:
      - pause: {duration: 1h}
`),
			opts: Options{KargoTimeout: 2 * time.Hour}, minimum: "1h0m0s", kargo: "1h30m0s"},
		{name: "bad pause duration",
			manifest: rollout(`    canary:
      steps:
      - pause: {duration: soon}
`),
			problems: []string{`error: spec.strategy.canary.steps[0].pause.duration soon is neither seconds nor a duration`}, minimum: "0s", kargo: "5m0s"},
		{name: "initialDelay, consecutiveSuccessLimit, nested templates",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: outer}]}
`) + `---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: outer}
spec:
  templates: [{templateName: inner, clusterScope: true}]
  metrics:
  - {name: a, initialDelay: 2m, interval: 1m, count: 10, consecutiveSuccessLimit: 3, failureLimit: 1, provider: {web: {url: http://x}}}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: inner}
spec:
  metrics:
  - {name: b, initialDelay: 1m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: i}], restartPolicy: Never}}}}}}
`,
			// a: 2m + (3−1) × 1m = 4m; b: one measurement after 1m (plus its Job's run time).
			minimum: "4m0s", kargo: "6m0s"},
		{name: "count from an argument is not counted",
			manifest: rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: t}], args: [{name: runs, value: "3"}]}
`) + `---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  args: [{name: runs}]
  metrics: [{name: m, interval: 1m, count: "{{args.runs}}", provider: {web: {url: http://x}}}]
`,
			minimum: "0s", kargo: "5m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := manifest.Decode("test.yaml", []byte(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Inspect(objs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Problems) != len(tc.problems) {
				t.Fatalf("problems %+v, want %q", r.Problems, tc.problems)
			}
			for i, p := range r.Problems {
				if got := p.Severity + ": " + p.Message; !strings.HasPrefix(got, tc.problems[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got, tc.problems[i])
				}
				if p.Where != "test.yaml (document 1)" || !strings.HasPrefix(p.Object, "Rollout ") {
					t.Errorf("problem %d names %q at %q", i, p.Object, p.Where)
				}
			}
			est := r.Rollouts[0].Estimate
			if est.Minimum != tc.minimum || est.KargoRetryTimeout != tc.kargo {
				t.Errorf("estimate %s, kargo %q; want %s, %q (%+v)", est.Minimum, est.KargoRetryTimeout, tc.minimum, tc.kargo, est)
			}
		})
	}
}

func TestKargoRetryTimeout(t *testing.T) {
	for _, tc := range []struct{ min, want time.Duration }{
		{0, 5 * time.Minute},
		{3 * time.Minute, 5 * time.Minute},
		{4 * time.Minute, 6 * time.Minute},
		{15 * time.Minute, 23 * time.Minute}, // 22m30s rounds up
		{time.Hour, 90 * time.Minute},
	} {
		if got := KargoRetryTimeout(tc.min); got != tc.want {
			t.Errorf("KargoRetryTimeout(%s) = %s, want %s", tc.min, got, tc.want)
		}
	}
}

func TestRolloutSpecOfTheWrongShape(t *testing.T) {
	objs, err := manifest.Decode("bad.yaml", []byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: app}\nspec: {strategy: {canary: {steps: 3}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Inspect(objs, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml (document 1): Rollout app: spec:") {
		t.Fatalf("error %v", err)
	}
}
