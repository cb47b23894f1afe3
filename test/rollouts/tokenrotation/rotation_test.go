//go:build e2e_tokenrotation

// Package tokenrotation holds the plugin's multi-cluster read, and the rotation of its token, on two real
// API servers (the program of test/kube-apiserver-v1.34, both on 127.0.0.1): a control plane holding the
// Kargo Project's kubeconfig Secret, and a workload cluster with RBAC holding the Rollout, its runs and
// the generated rbac.yaml. The Secret is written by `analysis-health kubeconfig` exactly as a user runs it
// (a TokenRequest for the generated ServiceAccount with the workload cluster's kubeconfig), and the
// plugin is the one the Rollouts controller starts (rolloutplugin with its watches, as the command builds
// it), reading the control plane with its own kubeconfig.
//
//	cd test/rollouts && E2E_APISERVER=../../bin/e2e-apiserver go test -tags e2e_tokenrotation ./tokenrotation/
package tokenrotation

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

const (
	project   = "kargo-shop"
	workload  = "shop"
	secret    = "shop-workload"
	reader    = "analysis-health-rollout-reader"
	rollout   = "checkout"
	runName   = "prod.01j0000000000000000000000.abcdef1"
	readerSA  = "system:serviceaccount:" + workload + ":" + reader
	verdictTD = "../../../internal/plugin/verdict/testdata/"
)

var (
	rolloutsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	runsGVR     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	secretsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

type frame struct {
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns"`
	Experiments  []map[string]any `json:"experiments"`
}

func loadFrame(t *testing.T, name string) frame {
	t.Helper()
	raw, err := os.ReadFile(verdictTD + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f frame
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// apply stores a recorded frame's Rollout (spec, then status: its status is a subresource) and runs (the
// Rollouts CRDs declare no status subresource for AnalysisRuns) in the workload cluster.
func apply(t *testing.T, c dynamic.Interface, f frame) {
	t.Helper()
	ctx := context.Background()
	var owner types.UID // the stored Rollout's: the verdict takes the runs it owns
	store := func(gvr schema.GroupVersionResource, o map[string]any, status bool) {
		u := &unstructured.Unstructured{Object: o}
		u = u.DeepCopy()
		u.SetNamespace(workload)
		u.SetResourceVersion("")
		u.SetUID("")
		u.SetCreationTimestamp(metav1.Time{})
		u.SetManagedFields(nil)
		refs := u.GetOwnerReferences()
		for i := range refs {
			if refs[i].Kind == "Rollout" {
				refs[i].UID = owner
			}
		}
		u.SetOwnerReferences(refs)
		rc := c.Resource(gvr).Namespace(workload)
		cur, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			cur, err = rc.Create(ctx, u, metav1.CreateOptions{})
		case err == nil:
			u.SetResourceVersion(cur.GetResourceVersion())
			cur, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("%s %s: %v", gvr.Resource, u.GetName(), err)
		}
		if gvr == rolloutsGVR {
			owner = cur.GetUID()
		}
		if status {
			u.SetResourceVersion(cur.GetResourceVersion())
			if _, err := rc.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("status of %s %s: %v", gvr.Resource, u.GetName(), err)
			}
		}
	}
	store(rolloutsGVR, f.Rollout, true)
	for _, ar := range f.AnalysisRuns {
		store(runsGVR, ar, false)
	}
}

// cliBinary is $E2E_ANALYSIS_HEALTH (the Makefile builds it), or the main module's CLI built here.
func cliBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("E2E_ANALYSIS_HEALTH"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "analysis-health")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/analysis-health")
	cmd.Dir = cluster.RepoRoot()
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/analysis-health: %v\n%s", err, out)
	}
	return bin
}

// run is `analysis-health args...`, as a user runs it.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("analysis-health %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// applyManifests creates (or replaces) every object of a YAML stream with c.
func applyManifests(t *testing.T, c dynamic.Interface, raw []byte) {
	t.Helper()
	if err := cluster.ApplyManifests(c, raw); err != nil {
		t.Fatal(err)
	}
}

// reads counts an audit log's completed requests by "user resource verb".
func reads(t *testing.T, path string) map[string]int {
	t.Helper()
	time.Sleep(time.Second) // the API server writes a request's line as it completes
	reqs, _, err := cluster.AuditRequests(path, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range reqs {
		if r.ObjectRef.Resource != "" {
			out[r.User.Username+" "+r.ObjectRef.Resource+" "+r.Verb]++
		}
	}
	return out
}

func TestTokenRotationTwoClusters(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	cpAudit, wlAudit := filepath.Join(dir, "control-plane-audit.log"), filepath.Join(dir, "workload-audit.log")
	cp, err := cluster.StartClusterWith(cluster.ClusterOptions{AuditLog: cpAudit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Close)
	// with -data-dir, the workload API server serves a certificate of 127.0.0.1 (its loopback one is not)
	wlData := filepath.Join(dir, "workload")
	if err := os.MkdirAll(wlData, 0o755); err != nil {
		t.Fatal(err)
	}
	wl, err := cluster.StartClusterWith(cluster.ClusterOptions{RBAC: true, AuditLog: wlAudit, DataDir: wlData})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wl.Close)
	t.Logf("two API servers up in %s", time.Since(start).Round(time.Second))
	cpc, err := cluster.NewClients(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	wlc, err := cluster.NewClients(wl.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		cl *cluster.Clients
		ns string
	}{{cpc, project}, {wlc, workload}} {
		if _, err := c.cl.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// the generated multi-cluster files: rbac.yaml on the workload cluster
	out := filepath.Join(dir, "kargo")
	bin := cliBinary(t)
	run(t, bin, "generate", "--format", "kargo", "--project", project, "--rollout", rollout, "--namespace", workload,
		"--plugin-location", "https://example.com/p", "--plugin-sha256", strings.Repeat("cd", 32),
		"--kubeconfig-secret", secret, "--rollouts-values", "none", "--out", out)
	rbac, err := os.ReadFile(filepath.Join(out, "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	applyManifests(t, wlc.Dynamic, rbac)
	running, success := loadFrame(t, "step-running"), loadFrame(t, "step-successful")
	apply(t, wlc.Dynamic, running)

	// the Secret, as a user writes it: a TokenRequest with the workload cluster's kubeconfig; the server's
	// certificate authority is its serving certificate's
	ca := filepath.Join(wlData, "serving.crt")
	writeSecret := func() string {
		manifest := run(t, bin, "kubeconfig", "--kubeconfig-secret", secret, "--project", project,
			"--token-from-serviceaccount", workload+"/"+reader, "--kubeconfig", wl.Kubeconfig, "--ca-file", ca, "--duration", "1h")
		applyManifests(t, cpc.Dynamic, []byte(manifest))
		return manifest
	}
	writeSecret()

	// the plugin as the Rollouts controller of the control plane runs it: its own cluster is the control
	// plane (its kubeconfig), with the watches
	var log bytes.Buffer
	p := rolloutplugin.New(rolloutplugin.Options{Kubeconfig: cp.Kubeconfig, Watch: &watchcache.Options{}, Log: &log})
	ar := &v1alpha1.AnalysisRun{}
	ar.Namespace, ar.Name = project, runName
	m := v1alpha1.Metric{Name: "rollout-analysis", Provider: v1alpha1.MetricProvider{Plugin: map[string]json.RawMessage{
		rolloutplugin.Name: json.RawMessage(`{"name":"` + rollout + `","namespace":"` + workload + `","kubeconfigSecret":{"name":"` + secret + `","key":"kubeconfig"},"pollInterval":"1s"}`)}}}
	measure := func(prev *v1alpha1.Measurement) v1alpha1.Measurement {
		if prev == nil || prev.Phase != v1alpha1.AnalysisPhaseRunning {
			if prev != nil {
				ar.Status.MetricResults = []v1alpha1.MetricResult{{Name: m.Name, Measurements: []v1alpha1.Measurement{*prev}}}
			}
			return p.Run(ar, m)
		}
		return p.Resume(ar, m, *prev)
	}

	// 1. token a: the analysis runs
	got := measure(nil)
	if got.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("token a, analysis running: %s %q", got.Phase, got.Message)
	}
	for i := 0; i < 3; i++ { // resumes, from the watches once they are live
		time.Sleep(time.Second)
		if got = measure(&got); got.Phase != v1alpha1.AnalysisPhaseRunning {
			t.Fatalf("token a, resume %d: %s %q", i, got.Phase, got.Message)
		}
	}

	// 2. the old identity stops working: its ServiceAccount is deleted (a bound token dies with it) and
	// made again (a new UID); meanwhile the analysis passes. The Secret still holds token a: Error naming
	// the Secret and the renewal, never Successful
	if err := wlc.Kube.CoreV1().ServiceAccounts(workload).Delete(ctx, reader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	applyManifests(t, wlc.Dynamic, rbac)
	// the API server caches a token's authentication for 10 s: wait until token a is refused, then the
	// analysis passes. The watches the plugin opened with token a stay open and deliver that; the
	// plugin must not take a verdict other than Running from them without a direct read
	sec, err := cpc.Kube.CoreV1().Secrets(project).Get(ctx, secret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := rolloutplugin.RemoteClient(sec.Data["kubeconfig"], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for wait := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		_, err := old.Resource(rolloutsGVR).Namespace(workload).Get(ctx, rollout, metav1.GetOptions{})
		if apierrors.IsUnauthorized(err) {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("token a still answered after its ServiceAccount was deleted: %v", err)
		}
	}
	apply(t, wlc.Dynamic, success)
	var rejected v1alpha1.Measurement
	deadline := time.Now().Add(60 * time.Second)
	for {
		time.Sleep(time.Second)
		got = measure(&got)
		if got.Phase == v1alpha1.AnalysisPhaseSuccessful {
			l, _ := wlc.Dynamic.Resource(runsGVR).Namespace(workload).List(ctx, metav1.ListOptions{})
			var names []string
			for _, it := range l.Items {
				names = append(names, it.GetName()+" "+it.GetLabels()["rollouts-pod-template-hash"])
			}
			t.Fatalf("Successful with a revoked token: %q\nvalue %s\nmetadata %v\nruns %v\nlog %s", got.Message, got.Value, got.Metadata, names, log.String())
		}
		if got.Phase == v1alpha1.AnalysisPhaseError {
			rejected = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("token a revoked: still %s %q after 60s", got.Phase, got.Message)
		}
	}
	for _, want := range []string{
		`the token in Secret ` + project + `/` + secret + ` key "kubeconfig" was rejected by its cluster (HTTP 401 Unauthorized`,
		"renew it with `analysis-health kubeconfig --kubeconfig-secret " + secret + " --project " + project + " --token-from-serviceaccount " + workload + "/" + reader + "`",
	} {
		if !strings.Contains(rejected.Message, want) {
			t.Errorf("revoked: %q\nlacks %q", rejected.Message, want)
		}
	}

	// 3. renewed: the same command again; the same plugin process reads the new Secret on its next
	// measurement (a new cluster identity: the kubeconfig's sha256) and judges the pinned revision
	writeSecret()
	got = measure(&got)
	if got.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("token b, analysis passed: %s %q", got.Phase, got.Message)
	}
	t.Logf("rotation: Running with token a, %q with it revoked, Successful with token b; %s in all", rejected.Message, time.Since(start).Round(time.Second))

	// the plugin's reads per cluster: the Rollout and its runs from the workload cluster as the reader
	// ServiceAccount; from the control plane the Secret only (no Rollout, run or experiment read there)
	wlReads, cpReads := reads(t, wlAudit), reads(t, cpAudit)
	var rolloutReads, runReads int
	for k, n := range wlReads {
		switch {
		case strings.HasPrefix(k, readerSA+" rollouts "):
			rolloutReads += n
		case strings.HasPrefix(k, readerSA+" analysisruns "):
			runReads += n
		}
	}
	if rolloutReads == 0 || runReads == 0 {
		t.Errorf("workload cluster: %d Rollout and %d AnalysisRun requests by %s, want some of each: %v", rolloutReads, runReads, readerSA, wlReads)
	}
	for k, n := range cpReads {
		if res := strings.Fields(k); len(res) == 3 && (res[1] == "rollouts" || res[1] == "analysisruns" || res[1] == "experiments") {
			t.Errorf("control plane: %d %s", n, k)
		}
	}
	secretReads := 0
	for k, n := range cpReads {
		if strings.Contains(k, " secrets get") {
			secretReads += n
		}
	}
	if secretReads == 0 {
		t.Errorf("control plane: the Secret was never read: %v", cpReads)
	}
	t.Logf("reads: workload cluster %d Rollout, %d AnalysisRun requests by %s; control plane %d Secret gets, no Rollout or run", rolloutReads, runReads, readerSA, secretReads)
	if strings.Contains(log.String(), "eyJ") {
		t.Error("the plugin's log holds a token")
	}
}
