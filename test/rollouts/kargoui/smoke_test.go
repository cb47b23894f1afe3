//go:build kargo_ui

// The browser proof's smoke test (make kargo-ui-smoke): built with -tags kargo_ui, as it needs the
// programs the Makefile builds and Chromium; a missing one skips it with one line in the skip log.

package kargoui_test

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoui"
)

// EnvShots names a folder that keeps the smoke test's screenshots (default: the test's temporary folder).
const EnvShots = "E2E_KARGO_UI_SHOTS"

var (
	kargoProjects   = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "projects"}
	kargoWarehouses = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "warehouses"}
	kargoFreight    = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "freights"}
	kargoStages     = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "stages"}
	analysisRuns    = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
)

const (
	project = "kargo-ui-smoke"
	stage   = "prod"
	// the verification's AnalysisRun, named as Kargo names one (<stage>.<ULID>.<hash>)
	runName = stage + ".01k0smoke00000000000000000.54d7c49"
)

// TestKargoUISmoke puts a Stage whose verification failed on a real API server, as Kargo's controller
// leaves it, with the verification's AnalysisRun as Argo Rollouts' analysis controller leaves it after our
// plugin's failed measurement, opens the Stage in Kargo's own UI in headless Chromium, and finds in the
// page the phase Kargo wrote and our plugin's measurement message, which names the Rollout's failed
// AnalysisRun and metric, and the metric tab's Value column our plugin's words (never "[object Object]").
func TestKargoUISmoke(t *testing.T) {
	crds := upstream.Vendored(t, "kargo/"+kargoui.KargoVersion+"/charts/kargo/resources/crds")
	progs := kargoui.ProgramsOrSkip(t)
	// The plugin's verdict on a frame recorded from Argo Rollouts' controllers (canary-step-failed: the
	// canary's step analysis failed), as the plugin returns it to the analysis controller.
	fixture, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fixture = filepath.Join(fixture, "internal", "plugin", "verdict", "testdata", "step-failed.yaml")
	objs, image, err := readFrame(fixture)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verdict.Judge(objs, verdict.Options{})
	if err != nil {
		t.Fatalf("the plugin's verdict on %s: %v", fixture, err)
	}
	if v.Phase != "Failed" {
		t.Fatalf("the plugin's verdict on %s is %s (%s), the smoke test needs a failed one", fixture, v.Phase, v.Message)
	}

	t.Setenv(kargoui.EnvAPIServer, progs.APIServer)
	start := time.Now()
	c, err := cluster.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	files, err := filepath.Glob(filepath.Join(crds, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Kargo CRDs in %s", crds)
	}
	if err := c.InstallCRDs(files...); err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	message, err := setUp(kube, dyn, v, image)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster and objects ready in %s", time.Since(start).Round(time.Second))

	s, b := kargoui.Open(t, progs, c.Kubeconfig)
	got, err := b.Verification(s, project, stage)
	if err != nil {
		t.Fatalf("%v\nKargo's log: %s", err, s.LogTail())
	}
	t.Logf("browser done %s after the start", time.Since(start).Round(time.Second))
	t.Logf("row: %q", got.Row)
	t.Logf("tooltip: %q", got.Tooltip)
	t.Logf("AnalysisRun Summary: %q", got.Summary)
	for m, text := range got.Metrics {
		t.Logf("metric tab %q: %q", m, text)
	}

	shots := os.Getenv(EnvShots)
	if shots == "" {
		shots = t.TempDir()
	}
	paths, err := kargoui.WriteScreenshots(shots, "smoke", got)
	if err != nil {
		t.Error(err)
	}
	t.Logf("screenshots: %s", strings.Join(paths, ", "))

	if got.AnalysisRun != runName {
		t.Errorf("the Verifications tab names the AnalysisRun %q, want %q", got.AnalysisRun, runName)
	}
	if got.Phase != "Failed" {
		t.Errorf("the verification's phase in the tooltip is %q, want Failed (the Stage's verificationHistory)", got.Phase)
	}
	if got.Message != message {
		t.Errorf("the verification's message in the tooltip is %q, want the AnalysisRun's status.message %q", got.Message, message)
	}
	if !strings.Contains(got.Summary, "Analysis failed") || !strings.Contains(got.Summary, v.Message) {
		t.Errorf("the AnalysisRun's Summary %q lacks \"Analysis failed\" or the plugin's message %q", got.Summary, v.Message)
	}
	if _, ok := got.Metrics[generator.KargoMetricName]; !ok {
		t.Errorf("the AnalysisRun's modal has no tab for the metric %s: %v", generator.KargoMetricName, got.Metrics)
	}
	// the measurement's Value column shows our words: the value is a JSON string, which the UI parses
	// and shows as its text, naming the Rollout's failed AnalysisRun and its metric
	var words string
	if err := json.Unmarshal([]byte(v.Value), &words); err != nil {
		t.Fatalf("the plugin's value %s is not a JSON string: %v", v.Value, err)
	}
	table := got.Tables[generator.KargoMetricName]
	shown := false
	for _, row := range table[min(1, len(table)):] {
		shown = shown || slices.Contains(row, words)
	}
	if !shown {
		t.Errorf("the metric tab's table %q does not show the value's words %q", table, words)
	}
	for _, part := range []string{"AnalysisRun " + objs.AnalysisRuns[0]["metadata"].(map[string]any)["name"].(string) + " Failed", "success-rate"} {
		if !strings.Contains(words, part) {
			t.Errorf("the value's words %q lack %q", words, part)
		}
	}
	for _, text := range append([]string{got.Row, got.Tooltip, got.Summary}, slices.Collect(maps.Values(got.Metrics))...) {
		if strings.Contains(text, "[object Object]") {
			t.Errorf("the page shows %q", text)
		}
	}
}

// readFrame reads a recorded frame of internal/plugin/verdict/testdata and the image the Rollout's pod
// template runs (the Freight's).
func readFrame(path string) (verdict.Objects, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return verdict.Objects{}, "", err
	}
	var f struct {
		Rollout      map[string]any   `json:"rollout"`
		AnalysisRuns []map[string]any `json:"analysisRuns"`
		Experiments  []map[string]any `json:"experiments"`
	}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return verdict.Objects{}, "", fmt.Errorf("%s: %w", path, err)
	}
	containers, _, _ := unstructured.NestedSlice(f.Rollout, "spec", "template", "spec", "containers")
	var image string
	if len(containers) > 0 {
		if c, ok := containers[0].(map[string]any); ok {
			image, _ = c["image"].(string)
		}
	}
	if image == "" {
		return verdict.Objects{}, "", fmt.Errorf("%s: the Rollout's pod template names no image", path)
	}
	return verdict.Objects{Rollout: f.Rollout, AnalysisRuns: f.AnalysisRuns, Experiments: f.Experiments}, image, nil
}

func kargoObj(kind string, meta, rest map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": kind, "metadata": meta}
	for k, v := range rest {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

// setUp creates the Project, its Warehouse, a Freight of image, the Stage with our generated verification
// and, in the state Kargo's controller and Argo Rollouts' analysis controller leave them after a failed
// verification, the AnalysisRun and the Stage's status. It returns the run's status.message.
func setUp(kube kubernetes.Interface, dyn dynamic.Interface, v verdict.Verdict, image string) (string, error) {
	ctx := context.Background()
	// Kargo's own namespace and the Project's, labelled as Kargo's Project webhook labels it (the API
	// server's ValidateProject requires the label)
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: kargoui.KargoNamespace}},
		{ObjectMeta: metav1.ObjectMeta{Name: project, Labels: map[string]string{"kargo.akuity.io/project": "true"}}},
	} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("namespace %s: %w", ns.Name, err)
		}
	}
	if _, err := dyn.Resource(kargoProjects).Create(ctx, kargoObj("Project", map[string]any{"name": project}, nil), metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("Kargo Project %s: %w", project, err)
	}
	repo, tag, _ := strings.Cut(image, ":")
	wh := kargoObj("Warehouse", map[string]any{"name": stage, "namespace": project}, map[string]any{"spec": map[string]any{
		"freightCreationPolicy": "Manual", "subscriptions": []any{map[string]any{"image": map[string]any{"repoURL": repo}}}}})
	if _, err := dyn.Resource(kargoWarehouses).Namespace(project).Create(ctx, wh, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("Kargo Warehouse %s/%s: %w", project, stage, err)
	}
	origin := map[string]any{"kind": "Warehouse", "name": stage}
	images := []any{map[string]any{"repoURL": repo, "tag": tag}}
	// named as Kargo names Freight, by a SHA-1 of what it holds (api.GenerateFreightID hashes more)
	freight := kargoObj("Freight", map[string]any{"name": fmt.Sprintf("%x", sha1.Sum([]byte(image))), "namespace": project},
		map[string]any{"origin": origin, "images": images})
	if _, err := dyn.Resource(kargoFreight).Namespace(project).Create(ctx, freight, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("Kargo Freight: %w", err)
	}

	// our generated verification: the AnalysisTemplate's metric, and the Stage's spec.verification
	files, err := generator.GenerateKargo(generator.KargoOptions{Project: project, Rollout: "checkout", Namespace: "shop",
		PluginLocation: "file:///plugins/analysis-health", ImageRepo: repo})
	if err != nil {
		return "", err
	}
	var tmpl, snippet map[string]any
	for _, f := range files {
		switch filepath.Base(f.Path) {
		case generator.KargoTemplateFile:
			err = yaml.Unmarshal(f.Data, &tmpl)
		case generator.KargoStageFile:
			err = yaml.Unmarshal(f.Data, &snippet)
		}
		if err != nil {
			return "", fmt.Errorf("generate --format kargo %s: %w", f.Path, err)
		}
	}
	metrics, _, _ := unstructured.NestedSlice(tmpl, "spec", "metrics")
	verification, _, _ := unstructured.NestedMap(snippet, "spec", "verification")
	if len(metrics) == 0 || verification == nil {
		return "", fmt.Errorf("generate --format kargo gave no metrics (%v) or no spec.verification (%v)", tmpl, snippet)
	}
	st := kargoObj("Stage", map[string]any{"name": stage, "namespace": project}, map[string]any{"spec": map[string]any{
		"requestedFreight": []any{map[string]any{"origin": origin, "sources": map[string]any{"direct": true}}},
		"verification":     verification,
	}})
	created, err := dyn.Resource(kargoStages).Namespace(project).Create(ctx, st, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("Kargo Stage %s/%s: %w", project, stage, err)
	}

	// The run as Kargo creates it, then as the analysis controller leaves it after one Failed measurement
	// of a metric with the default failureLimit 0: the metric's message is the last measurement's, and the
	// run's message is `Metric "<m>" assessed Failed due to failed (1) > failureLimit (0): "Error Message:
	// <message>"` (argo-rollouts analysis/analysis.go assessRunStatus, assessMetricFailureInconclusiveOrError).
	// Its times are its creation's: the UI's Runtime runs from the creation to the last measurement.
	run := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun",
		"metadata": map[string]any{"name": runName, "namespace": project, "labels": map[string]any{"kargo.akuity.io/stage": stage}},
		"spec": map[string]any{"metrics": metrics, "args": []any{
			map[string]any{"name": generator.KargoArgRollout, "value": "checkout"},
			map[string]any{"name": generator.KargoArgNamespace, "value": "shop"},
			map[string]any{"name": generator.KargoArgRevision, "value": ""},
			map[string]any{"name": generator.KargoArgImage, "value": image},
		}},
	}}
	if run, err = dyn.Resource(analysisRuns).Namespace(project).Create(ctx, run, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("AnalysisRun %s/%s: %w", project, runName, err)
	}
	at := run.GetCreationTimestamp().UTC().Format(time.RFC3339)
	metadata := map[string]any{}
	for k, x := range v.Metadata() {
		metadata[k] = x
	}
	message := fmt.Sprintf("Metric %q assessed Failed due to failed (1) > failureLimit (0): \"Error Message: %s\"", generator.KargoMetricName, v.Message)
	run.Object["status"] = map[string]any{
		"phase": "Failed", "message": message, "startedAt": at, "completedAt": at,
		"runSummary": map[string]any{"count": int64(1), "failed": int64(1)},
		"metricResults": []any{map[string]any{
			"name": generator.KargoMetricName, "phase": "Failed", "message": v.Message, "count": int64(1), "failed": int64(1),
			"measurements": []any{map[string]any{"phase": "Failed", "startedAt": at, "finishedAt": at, "value": v.Value, "message": v.Message, "metadata": metadata}},
		}},
	}
	if _, err := dyn.Resource(analysisRuns).Namespace(project).Update(ctx, run, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("the status of AnalysisRun %s/%s: %w", project, runName, err)
	}

	// The Stage's status as Kargo's controller writes it (api/v1alpha1 stage_types.go): its current
	// Freight, with the verification that names the run and copies its phase and message.
	ref := map[string]any{"name": freight.GetName(), "origin": origin, "images": images}
	status := map[string]any{
		"freightHistory": []any{map[string]any{
			"id":    "smoke-collection",
			"items": map[string]any{"Warehouse/" + stage: ref},
			"verificationHistory": []any{map[string]any{
				"id": "smoke-verification", "startTime": at, "finishTime": at,
				"phase": "Failed", "message": message,
				"analysisRun": map[string]any{"namespace": project, "name": runName, "phase": "Failed"},
			}},
		}},
	}
	if err := unstructured.SetNestedField(created.Object, status, "status"); err != nil {
		return "", err
	}
	if _, err := dyn.Resource(kargoStages).Namespace(project).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		raw, _ := json.Marshal(status)
		return "", fmt.Errorf("the status of Kargo Stage %s/%s (%s): %w", project, stage, raw, err)
	}
	return message, nil
}
