package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"
	goplugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/analysisruns"
)

// The proof of the analysis-health/rollout-analysis metric-provider plugin (cmd/rollouts-plugin-metric-
// analysis-health, docs/kargo.md) in the real analysis controller: the World loads the built plugin
// binary through argo-rollouts-config (a file:// location, utils/config InitializeConfig and
// utils/plugin DownloadPlugins, as the controller's main does), and while each scenario plays, Kargo-shaped
// verification AnalysisRuns measure the Rollout's analysis through it:
//
//   - "at release": created as soon as Argo CD applied the new revision, the earliest a verification can
//     start (a Stage whose health were Healthy at once);
//   - "Kargo, built-in health": created at the first frame at which the Stage is Healthy with Argo CD's
//     built-in Rollout health script (Kargo starts verification only then, kargo.md §2.2);
//   - "Kargo, our health": likewise with analysis-health's scripts.
//
// Kargo's builder (pkg/rollouts/analysis_run_builder.go) is reproduced from what it puts in the run: the
// metrics and args of our generated template flattened inline, the Stage's args filled in, its labels
// and annotation. The run is in the Rollout's namespace, because the World's controllers watch only that
// namespace; Kargo puts it in the Project namespace, which the plugin does not depend on.

// Kargo's labels and annotation on a verification run (kargo.md §2.6).
const (
	kargoStageLabel      = "kargo.akuity.io/stage"
	kargoFreightLabel    = "kargo.akuity.io/freight-collection"
	kargoPromotionAnnot  = "kargo.akuity.io/promotion"
	pluginName           = "analysis-health/rollout-analysis"
	verificationAtStart  = "at release"
	verificationBuiltin  = "Kargo, built-in health"
	verificationOurs     = "Kargo, our health"
	notStarted           = "not started"
	builtinRolloutScript = "resource_customizations/argoproj.io/Rollout/health.lua"
)

// repoRoot is the main module, two levels above this package.
func repoRoot() string { return filepath.Join(sourceDir(), "..", "..") }

// pluginBinaries are the two binaries of the main module the proof runs: the plugin, and the CLI
// (whose health verb evaluates our scripts, or Argo CD's built-in one through an argocd-cm, in the same
// engine the plugin uses).
type pluginBinaries struct {
	plugin, cli, builtinCM string
}

// buildMain builds a command of the main module with the machine's toolchain (the main module's), or
// takes it from the environment variable (the Makefile builds both once for both recorder modules).
func buildMain(dir, env, pkg string) (string, error) {
	if bin := os.Getenv(env); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

func preparePlugin(t *testing.T) pluginBinaries {
	t.Helper()
	dir := t.TempDir()
	var b pluginBinaries
	var err error
	if b.plugin, err = buildMain(dir, "E2E_PLUGIN", "./cmd/rollouts-plugin-metric-analysis-health"); err != nil {
		t.Fatal(err)
	}
	if b.cli, err = buildMain(dir, "E2E_ANALYSIS_HEALTH", "./cmd/analysis-health"); err != nil {
		t.Fatal(err)
	}
	// Argo CD's built-in Rollout script, from the Argo CD module the main module proves against.
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v2")
	cmd.Dir, cmd.Env = repoRoot(), append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m github.com/argoproj/argo-cd/v2: %v", err)
	}
	script, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), builtinRolloutScript))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data": map[string]string{
			"resource.customizations.health.argoproj.io_Rollout":      string(script),
			"resource.customizations.useOpenLibs.argoproj.io_Rollout": "true",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.builtinCM = filepath.Join(dir, "argocd-cm-builtin.yaml")
	if err := os.WriteFile(b.builtinCM, cm, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// health is the Rollout's Argo CD health by our scripts (argocdCM empty) or by the argocd-cm's.
func (b pluginBinaries) health(ro *v1alpha1.Rollout, argocdCM string) (string, error) {
	ro = ro.DeepCopy()
	ro.APIVersion, ro.Kind = "argoproj.io/v1alpha1", "Rollout"
	raw, err := json.Marshal(ro)
	if err != nil {
		return "", err
	}
	args := []string{"health", "-f", "-", "-o", "json"}
	if argocdCM != "" {
		args = append(args, "--argocd-cm", argocdCM)
	}
	cmd := exec.Command(b.cli, args...)
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("analysis-health health: %v: %s", err, stderr.String())
	}
	var rows []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return "", fmt.Errorf("analysis-health health: %q (%v)", out, err)
	}
	return rows[0].Status, nil
}

// verificationRun is what Kargo's AnalysisRunBuilder makes of our generated template and Stage snippet.
func (b pluginBinaries) verificationRun(ns, stage, freightImage string) (*v1alpha1.AnalysisRun, error) {
	dir, err := os.MkdirTemp("", "kargo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kargo")
	cmd := exec.Command(b.cli, "generate", "--format", "kargo", "--project", ns, "--rollout", Name, "--namespace", ns,
		"--plugin-location", "file://"+b.plugin, "--image-repo", ImageRepo, "--out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("analysis-health generate --format kargo: %v: %s", err, msg)
	}
	var tmpl v1alpha1.AnalysisTemplate
	if err := readStrict(filepath.Join(out, "analysis-template.yaml"), &tmpl); err != nil {
		return nil, err
	}
	var snippet struct {
		Spec struct {
			Verification struct {
				AnalysisTemplates []struct{ Name, Kind string }  `json:"analysisTemplates"`
				Args              []struct{ Name, Value string } `json:"args"`
			} `json:"verification"`
		} `json:"spec"`
	}
	if err := readStrict(filepath.Join(out, "stage-verification.yaml"), &snippet); err != nil {
		return nil, err
	}
	// mergeArgs: the template declares the args; the Stage's values, evaluated as Kargo expressions
	// (pkg/rollouts/analysis_run_builder.go), fill them.
	args := tmpl.Spec.Args
	for _, sa := range snippet.Spec.Verification.Args {
		value, err := kargoExpression(sa.Value, freightImage)
		if err != nil {
			return nil, fmt.Errorf("stage arg %q: %v", sa.Name, err)
		}
		found := false
		for i := range args {
			if args[i].Name == sa.Name {
				args[i].Value, found = ptr(value), true
			}
		}
		if !found {
			return nil, fmt.Errorf("the Stage passes %q, which the template does not declare", sa.Name)
		}
	}
	for _, a := range args {
		if a.Value == nil && a.ValueFrom == nil {
			return nil, fmt.Errorf("unresolved argument %q", a.Name)
		}
	}
	freight := fmt.Sprintf("%x", time.Now().UnixNano())[:7]
	return &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:        strings.ToLower(fmt.Sprintf("%s.01J%023d.%s", stage, time.Now().UnixNano()%1e15, freight)),
			Namespace:   ns,
			Labels:      map[string]string{kargoStageLabel: stage, kargoFreightLabel: freight + "0123456789abcdef"},
			Annotations: map[string]string{kargoPromotionAnnot: stage + "." + freight},
		},
		Spec: v1alpha1.AnalysisRunSpec{Metrics: tmpl.Spec.Metrics, DryRun: tmpl.Spec.DryRun,
			MeasurementRetention: tmpl.Spec.MeasurementRetention, Args: args},
	}, nil
}

// kargoExpression evaluates the one Kargo expression our Stage snippet uses, the Freight's image
// (${{ imageFrom("REPO").RepoURL }}:${{ imageFrom("REPO").Tag }}; Kargo v1.11.2
// pkg/expressions/function/functions.go ImageFromFreight), for a Freight holding freightImage. Anything
// else holding an expression is an error: the model knows no other.
func kargoExpression(value, freightImage string) (string, error) {
	repo, tag, _ := strings.Cut(freightImage, ":")
	for _, field := range []struct{ name, v string }{{"RepoURL", repo}, {"Tag", tag}} {
		value = strings.ReplaceAll(value, `${{ imageFrom("`+ImageRepo+`").`+field.name+` }}`, field.v)
	}
	if strings.Contains(value, "${{") {
		return "", fmt.Errorf("the model of Kargo cannot evaluate %q", value)
	}
	return value, nil
}

// freightImage is the Freight's image as Argo CD synced it into the Rollout.
func freightImage(ro *v1alpha1.Rollout) string {
	if c := ro.Spec.Template.Spec.Containers; len(c) > 0 && c[0].Image != "" {
		return c[0].Image
	}
	return ImageV2 // a workloadRef Rollout: the Deployment holds the released image
}

func readStrict(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// verification follows one verification run through a scenario.
type verification struct {
	name  string
	stage string
	// healthy reports whether Kargo would start the verification now.
	healthy func(ro *v1alpha1.Rollout) (bool, error)
	run     string
	started int // tick, -1 until created
	// hash is the revision it verifies: the released one for the verification at release, the current
	// one when Kargo starts it; want the outcome the scenario declares.
	hash   string
	want   string
	phases []string
	// violations of the rules the plugin must keep; prevFailed the runs of its revision failed at the
	// previous tick.
	violations []string
	prevFailed []string
}

func (v *verification) note(phase string) {
	if phase == "" {
		phase = string(v1alpha1.AnalysisPhasePending)
	}
	if len(v.phases) == 0 || v.phases[len(v.phases)-1] != phase {
		v.phases = append(v.phases, phase)
	}
}

func (v *verification) sequence() string {
	if v.started < 0 {
		return notStarted
	}
	return strings.Join(v.phases, " → ")
}

func (v *verification) final() string {
	if len(v.phases) == 0 {
		return notStarted
	}
	return v.phases[len(v.phases)-1]
}

// PluginResult is one scenario's outcome.
type PluginResult struct {
	Scenario string `json:"scenario"`
	// Verdict is the analysis verdict (Scenario.Verdict): what the Rollout's own runs ended in.
	Verdict       string            `json:"verdict"`
	Verifications map[string]string `json:"verifications"`
	// Expected is what the scenario declares: the verification at release, and Kargo's.
	Expected map[string]string `json:"expected"`
	// Requests is what the scenario's metric server received; Measurements what the Rollout's own runs
	// record (count + error of every metric result); Duplicates the requests to a metric for a run beyond
	// the run's measurements of it; Unreached the measurements that reached no endpoint (connection refused).
	Requests     int `json:"requests"`
	Measurements int `json:"measurements"`
	Duplicates   int `json:"duplicates"`
	Unreached    int `json:"unreached"`
}

// analysisState is the ground truth at a frame for one revision, from the Rollout's own runs of it as
// analysisruns selects them (the newest attempt of each analysis, and the runs its experiments own).
type analysisState struct {
	passed bool // the revision is current and stable, and every run and experiment of it Successful
	// done: the revision is current and stable, and the release waits on none of its runs: each is
	// Successful or, still measuring, ended by the controller without a verdict
	// (analysisruns.EndedWithoutVerdict; such a run may still fail, so done is not passed)
	done   bool
	failed []string // runs Failed or Error
}

func groundTruth(w *World, ro *v1alpha1.Rollout, hash string) (analysisState, error) {
	promoted := hash != "" && ro.Status.StableRS == hash && ro.Status.CurrentPodHash == hash
	st := analysisState{passed: promoted, done: promoted}
	rollout, runs, exps, err := w.unstructuredState()
	if err != nil {
		return st, err
	}
	rv := analysisruns.Of(rollout, runs, exps, hash)
	judge := func(o map[string]any) string {
		phase, _, _ := unstructured.NestedString(o, "status", "phase")
		switch v1alpha1.AnalysisPhase(phase) {
		case v1alpha1.AnalysisPhaseSuccessful:
		case v1alpha1.AnalysisPhaseFailed, v1alpha1.AnalysisPhaseError, v1alpha1.AnalysisPhaseInconclusive:
			st.passed, st.done = false, false
		default:
			st.passed = false
			if !analysisruns.EndedWithoutVerdict(rollout, o) {
				st.done = false
			}
		}
		return phase
	}
	for _, e := range rv.Experiments {
		judge(e)
	}
	for _, r := range rv.Runs {
		if phase := judge(r.Object); phase == string(v1alpha1.AnalysisPhaseFailed) || phase == string(v1alpha1.AnalysisPhaseError) {
			st.failed = append(st.failed, r.Name+" "+phase)
		}
	}
	sort.Strings(st.failed)
	return st, nil
}

// RunPluginVerification plays every scenario with the three verification runs and checks, frame by
// frame: a verification is never Successful before every analysis of the revision passed, it is Failed
// (and never Successful) from the frame after any analysis of the revision failed, and the metric server
// answers no request beyond the Rollout's own measurements. With update it rewrites the report
// (../testdata/plugin/<version>.yaml); without, the committed report must equal what is measured.
func RunPluginVerification(t *testing.T, env *Env, update bool) {
	bins := preparePlugin(t)
	// The controller starts the plugin as a managed go-plugin client and, outside its Run, never stops it:
	// without this the plugin process outlives the test.
	defer goplugin.CleanupClients()
	t.Setenv("KUBECONFIG", env.Cluster.Kubeconfig)
	config := map[string]string{"metricProviderPlugins": "- name: " + pluginName + "\n  location: file://" + bins.plugin + "\n"}
	var results []PluginResult
	for _, sc := range Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			// DownloadPlugins writes plugin-bin/ below the working directory, for every World; the
			// controller keeps the plugin process it started for the first one (client.go
			// startPluginSystem), which is the same binary.
			t.Chdir(t.TempDir())
			r, err := playWithVerification(env, sc, bins, config)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		})
	}
	if t.Failed() {
		return
	}
	raw, err := yaml.Marshal(map[string]any{"controller": ControllerVersion(), "scenarios": results})
	if err != nil {
		t.Fatal(err)
	}
	raw = append([]byte("# Written by e2e/recorder RunPluginVerification from the real analysis controller; do not edit.\n"), raw...)
	path := filepath.Join(sourceDir(), "..", "testdata", "plugin", RolloutsVersion()+".yaml")
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("%s differs from what the analysis controller does now; regenerate with -update and review the diff", path)
	}
}

func playWithVerification(env *Env, sc Scenario, bins pluginBinaries, config map[string]string) (res PluginResult, err error) {
	vs := []*verification{
		{name: verificationAtStart, stage: "at-release", want: sc.Verification, healthy: func(*v1alpha1.Rollout) (bool, error) { return true, nil }},
		{name: verificationBuiltin, stage: "builtin", want: sc.Kargo, healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.health(ro, bins.builtinCM)
			return h == "Healthy", err
		}},
		{name: verificationOurs, stage: "ours", want: sc.Kargo, healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.health(ro, "")
			return h == "Healthy", err
		}},
	}
	for _, v := range vs {
		v.started = -1
	}
	if sc.Verification == "" || sc.Kargo == "" {
		return res, fmt.Errorf("scenario %s declares no verification outcome", sc.Name)
	}
	stable := ""   // the stable revision when the release was applied
	released := "" // the revision released: the first current one that is not that stable one
	opts := sc.Options
	if opts.RolloutsConfig != nil {
		return res, fmt.Errorf("scenario %s has an argo-rollouts-config of its own", sc.Name)
	}
	opts.RolloutsConfig = config
	// The plugin runs on the real clock (its resumeAt is real time + pollInterval): the World's clock
	// starts an hour ahead of it, so the controller resumes the measurement on every tick however slowly
	// the machine runs.
	opts.Epoch = time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	opts.AfterTick = func(w *World) error {
		if !w.recording {
			return nil
		}
		tick := w.reconciles
		ro := w.Rollout()
		if stable == "" {
			stable = ro.Status.StableRS
		}
		if released == "" && ro.Status.CurrentPodHash != stable && ro.Status.CurrentPodHash != "" {
			released = ro.Status.CurrentPodHash
		}
		for _, v := range vs {
			if v.started < 0 {
				ok, err := v.healthy(ro)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				ar, err := bins.verificationRun(w.ns, v.stage, freightImage(ro))
				if err != nil {
					return err
				}
				if err := w.Create(ar); err != nil {
					return err
				}
				v.run, v.started = ar.Name, tick
				if v.name != verificationAtStart {
					v.hash = ro.Status.CurrentPodHash // Kargo starts it on a Healthy Stage: the controller observed the Freight
				}
				continue
			}
			if v.name == verificationAtStart {
				v.hash = released
			}
			ar, err := w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).Get(context.Background(), v.run, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v.note(string(ar.Status.Phase))
			truth, err := groundTruth(w, ro, v.hash)
			if err != nil {
				return err
			}
			// the plugin measured during this tick's reconcile of the run, after the previous tick's state
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && !truth.passed {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: Successful before every analysis of revision %s passed", v.name, tick, v.hash))
			}
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && len(truth.failed) > 0 {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: Successful while %v", v.name, tick, truth.failed))
			}
			if len(v.prevFailed) > 0 && v.started < tick && !ar.Status.Phase.Completed() {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: %s a tick after %v", v.name, tick, ar.Status.Phase, v.prevFailed))
			}
			v.prevFailed = truth.failed
			// the revision the plugin pinned, in the measurement's metadata, is the one being verified
			for _, mr := range ar.Status.MetricResults {
				for _, m := range mr.Measurements {
					if pinned := m.Metadata["revision"]; pinned != "" && v.hash != "" && pinned != v.hash {
						v.violations = append(v.violations, fmt.Sprintf("%s tick %d: the plugin pinned revision %s, the verification is of %s", v.name, tick, pinned, v.hash))
					}
				}
			}
		}
		return nil
	}
	sc.Options = opts
	w, err := env.NewWorld(opts)
	if err != nil {
		return res, err
	}
	defer w.Close()
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(scriptError)
			if !ok {
				panic(r)
			}
			err = se.err
		}
	}()
	s := &S{w: w}
	sc.Play(s)
	s.Ticks(3) // the verification's next measurement follows the last change
	if errs := w.SyncErrors(); len(errs) > 0 {
		return res, fmt.Errorf("the controllers failed to reconcile: %v", errs)
	}
	if got := w.Verdict(); got != sc.Verdict {
		return res, fmt.Errorf("analysis verdict %q, the scenario expects %q", got, sc.Verdict)
	}
	res = PluginResult{Scenario: sc.Name, Verdict: sc.Verdict, Verifications: map[string]string{},
		Expected: map[string]string{"at release": sc.Verification, "Kargo": sc.Kargo}}
	var problems []string
	for _, v := range vs {
		res.Verifications[v.name] = v.sequence()
		problems = append(problems, v.violations...)
		if v.started >= 0 && !v1alpha1.AnalysisPhase(v.final()).Completed() {
			problems = append(problems, fmt.Sprintf("%s: still %s at the end", v.name, v.final()))
		}
	}
	for _, v := range vs {
		if got := v.final(); got != v.want {
			problems = append(problems, fmt.Sprintf("%s: ended %s (%s), the scenario declares %s", v.name, got, v.sequence(), v.want))
		}
	}
	if vs[0].started < 0 {
		problems = append(problems, "the verification at release never started")
	}
	// Requests to the metric server against the Rollout's own measurements, per metric and run: a
	// request that no measurement of the run its URL or query names explains is a duplicate query. The
	// run is read back from the run itself: its metrics resolved with its args by the controller's own
	// function, as the analysis controller does before it measures. The attempts of one analysis (a
	// retry: …-1, …-1.1) carry the same args, so they share a key and are counted together.
	// Measurements that failed to connect (the server down) reached no endpoint; they are counted apart.
	measured := map[Endpoint]int{}
	for _, ar := range w.AnalysisRuns() {
		if ar.Labels[kargoStageLabel] != "" {
			for _, mr := range ar.Status.MetricResults {
				if mr.Name != "rollout-analysis" {
					problems = append(problems, "the verification run measured "+mr.Name)
				}
			}
			continue
		}
		for _, m := range ar.Spec.Metrics {
			for _, mr := range ar.Status.MetricResults {
				if mr.Name != m.Name {
					continue
				}
				e, err := endpointOf(m, ar.Spec.Args)
				if err != nil {
					return res, fmt.Errorf("AnalysisRun %s metric %s: %w", ar.Name, m.Name, err)
				}
				measured[e] += int(mr.Count + mr.Error)
				res.Measurements += int(mr.Count + mr.Error)
			}
		}
	}
	requests := env.Metrics.Requests()
	for e := range measured {
		if _, ok := requests[e]; !ok {
			requests[e] = 0
		}
	}
	for e, n := range requests {
		res.Requests += n
		switch {
		case n > measured[e]:
			res.Duplicates += n - measured[e]
			problems = append(problems, fmt.Sprintf("%d requests to %q of run %q beyond the Rollout's own %d measurements of it", n-measured[e], e.Metric, e.Run, measured[e]))
		case n < measured[e]:
			res.Unreached += measured[e] - n
		}
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return res, nil
}

// endpointOf is the metrics server's endpoint and run a run's metric queries (MetricsServer.ServeHTTP):
// the metric resolved with the run's args (utils/analysis factory.go ResolveMetricArgs, which the analysis
// controller applies before every measurement, analysis/analysis.go).
func endpointOf(m v1alpha1.Metric, args []v1alpha1.Argument) (Endpoint, error) {
	r, err := analysisutil.ResolveMetricArgs(m, args)
	if err != nil {
		return Endpoint{}, err
	}
	switch {
	case r.Provider.Web != nil:
		u, err := url.Parse(r.Provider.Web.URL)
		if err != nil {
			return Endpoint{}, err
		}
		return WebEndpoint(u), nil
	case r.Provider.Prometheus != nil:
		return PrometheusEndpoint(r.Provider.Prometheus.Query), nil
	}
	return Endpoint{}, fmt.Errorf("no web or prometheus provider")
}
