package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/kube/kubetest"
	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/postrender"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/gate/hooks"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The proof that a generated hook makes the Argo CD sync operation carry the analysis verdict, in
// gitops-engine's own sync engine (pkg/sync, the version Argo CD v2.14 pins) used as Argo CD's application
// controller uses it (argo-cd controller/sync.go): every reconcile builds a new sync context from the
// desired manifests, the live objects and the previous operation state (sync.Reconcile,
// sync.NewSyncContext with WithInitialState and WithHealthOverride(lua.ResourceHealthOverrides(...))),
// calls Sync once and keeps GetState for the next reconcile. Health comes from our scripts loaded out of an
// argocd-cm by Argo CD's SettingsManager, evaluated by Argo CD's Lua VM, on realistic Rollout and
// AnalysisRun objects (the bundled fixtures). The cluster is simulated: applies go to gitops-engine's
// kubetest mocks, discovery and hook deletions to a fake API server, and the test decides what the live
// objects look like after each reconcile.

const (
	syncNamespace = "shop"
	syncRevision  = "4b1c0de5e7a9f1b2c3d4e5f60718293a4b5c6d7e"
)

// fakeAPIServer serves discovery for the kinds the charts use and accepts DELETE, recording it: gitops-
// engine resolves every task's resource through discovery and deletes hooks through the dynamic client.
type fakeAPIServer struct {
	*httptest.Server
	mu      gosync.Mutex
	deletes []string
}

var fakeResources = map[string][]metav1.APIResource{
	"/api/v1": {
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
		{Name: "services", Kind: "Service", Namespaced: true},
		{Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true},
		{Name: "namespaces", Kind: "Namespace"},
	},
	"/apis/apps/v1":              {{Name: "deployments", Kind: "Deployment", Namespaced: true}},
	"/apis/batch/v1":             {{Name: "jobs", Kind: "Job", Namespaced: true}},
	"/apis/autoscaling/v2":       {{Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true}},
	"/apis/networking.k8s.io/v1": {{Name: "ingresses", Kind: "Ingress", Namespaced: true}},
	"/apis/policy/v1":            {{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true}},
	"/apis/argoproj.io/v1alpha1": {
		{Name: "rollouts", Kind: "Rollout", Namespaced: true},
		{Name: "analysistemplates", Kind: "AnalysisTemplate", Namespaced: true},
		{Name: "clusteranalysistemplates", Kind: "ClusterAnalysisTemplate"},
		{Name: "analysisruns", Kind: "AnalysisRun", Namespaced: true},
		{Name: "experiments", Kind: "Experiment", Namespaced: true},
	},
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	s := &fakeAPIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodDelete {
			s.mu.Lock()
			s.deletes = append(s.deletes, r.URL.Path)
			s.mu.Unlock()
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
			return
		}
		list, ok := fakeResources[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		gv := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/"), "/apis/")
		res := metav1.APIResourceList{GroupVersion: gv}
		for _, a := range list {
			a.Verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
			res.APIResources = append(res.APIResources, a)
		}
		_ = json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeAPIServer) deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deletes...)
}

type scope struct{}

func (scope) IsNamespaced(gk schema.GroupKind) (bool, error) {
	switch gk.Kind {
	case "Namespace", "ClusterAnalysisTemplate":
		return false, nil
	}
	return true, nil
}

// application is one Argo CD Application in the middle of a sync operation.
type application struct {
	t        *testing.T
	api      *fakeAPIServer
	override health.HealthOverride
	targets  []*unstructured.Unstructured
	live     map[kube.ResourceKey]*unstructured.Unstructured
	// states are what the live object of kind statesKind looks like after each reconcile following its
	// apply; the last one stays.
	statesKind string
	states     []*unstructured.Unstructured
	applied    int // reconciles since the stateful object was applied

	phase     common.OperationPhase
	message   string
	results   []common.ResourceSyncResult
	startedAt metav1.Time
}

// reconcile is one pass of Argo CD's application controller over a running sync operation.
func (a *application) reconcile() (common.OperationPhase, string) {
	a.t.Helper()
	live := map[kube.ResourceKey]*unstructured.Unstructured{}
	for k, v := range a.live {
		live[k] = v.DeepCopy()
	}
	var targets []*unstructured.Unstructured
	for _, o := range a.targets {
		targets = append(targets, o.DeepCopy())
	}
	res := sync.Reconcile(targets, live, syncNamespace, scope{})
	cfg := &rest.Config{Host: a.api.URL}
	ctx, cleanup, err := sync.NewSyncContext(syncRevision, res, cfg, cfg, &kubetest.MockKubectlCmd{}, syncNamespace, nil,
		sync.WithLogr(logr.Discard()),
		sync.WithHealthOverride(a.override),
		sync.WithInitialState(a.phase, a.message, a.results, a.startedAt),
	)
	if err != nil {
		a.t.Fatal(err)
	}
	defer cleanup()
	ctx.Sync()
	a.phase, a.message, a.results = ctx.GetState()
	if os.Getenv("SYNC_DEBUG") != "" { // SYNC_DEBUG=1 go test -run Sync -v: every reconcile's state
		var keys []string
		for k := range a.live {
			keys = append(keys, k.String())
		}
		a.t.Logf("reconcile: %s %q\n results %+v\n live %v", a.phase, a.message, a.results, keys)
	}

	// The cluster after this reconcile: applied objects exist, deleted hooks are gone, and the stateful
	// object moves on to its next state.
	for _, r := range a.results {
		if r.Status != common.ResultCodeSynced {
			continue
		}
		if _, ok := a.live[r.ResourceKey]; ok {
			continue
		}
		for _, o := range a.targets {
			if kube.GetResourceKey(o) == r.ResourceKey {
				a.live[r.ResourceKey] = settled(o)
			}
		}
	}
	for _, p := range a.api.deleted() {
		for k := range a.live {
			if strings.HasSuffix(p, "/"+k.Name) && strings.Contains(p, "/namespaces/"+k.Namespace+"/") {
				delete(a.live, k)
			}
		}
	}
	for k, cur := range a.live {
		if k.Kind == a.statesKind {
			// The controller's object: status (and the spec it describes) from the fixture, metadata as
			// applied, so a hook keeps its hook annotations and has no owner.
			next := a.states[min(a.applied, len(a.states)-1)].DeepCopy()
			next.SetAnnotations(cur.GetAnnotations())
			next.SetLabels(cur.GetLabels())
			next.SetOwnerReferences(nil)
			a.live[k] = next
			a.applied++
		}
	}
	return a.phase, a.message
}

// settled is a live object as its controller leaves it once it has settled: a Deployment rolled out, an
// Ingress with an address, an HPA able to scale. Kinds without health in gitops-engine need nothing.
func settled(target *unstructured.Unstructured) *unstructured.Unstructured {
	o := target.DeepCopy()
	// Every live object has its own UID; sync.Reconcile deduplicates live objects by UID.
	o.SetUID(types.UID("uid-" + o.GetKind() + "-" + o.GetNamespace() + "-" + o.GetName()))
	switch o.GetKind() {
	case "Deployment":
		// Manifests decode numbers as float64; the API server returns integers.
		r, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas")
		f, _ := r.(float64)
		replicas := int64(f)
		_ = unstructured.SetNestedMap(o.Object, map[string]any{
			"observedGeneration": int64(0), "replicas": replicas, "updatedReplicas": replicas,
			"readyReplicas": replicas, "availableReplicas": replicas,
		}, "status")
	case "Ingress":
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"ip": "203.0.113.7"}}, "status", "loadBalancer", "ingress")
	case "Job":
		// The only Job in these tests is a PostSync smoke test that fails.
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
			"message": "Job has reached the specified backoff limit"}}, "status", "conditions")
	case "HorizontalPodAutoscaler":
		_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}}, "status", "conditions")
	}
	return o
}

// targetsOf renders a chart's manifests (through our hooks when opts is set) into what Argo CD syncs:
// namespaced objects in the destination namespace, as the controller sets them before reconciling.
func targetsOf(t *testing.T, chart string, opts *hooks.Options) ([]*unstructured.Unstructured, *hooks.Result) {
	t.Helper()
	streams, err := manifest.ReadStreams([]string{path.Join("..", "..", "testdata", "charts", chart)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stream := streams[0]
	var res *hooks.Result
	if opts != nil {
		if res, err = hooks.Generate(streams, *opts); err != nil {
			t.Fatal(err)
		}
		if stream, err = manifest.DecodeStream("post-rendered", res.PostRendered()); err != nil {
			t.Fatal(err)
		}
	}
	var out []*unstructured.Unstructured
	for _, o := range stream.Objects() {
		u := &unstructured.Unstructured{Object: o.Object}
		if ns, _ := (scope{}).IsNamespaced(u.GroupVersionKind().GroupKind()); ns && u.GetNamespace() == "" {
			u.SetNamespace(syncNamespace)
		}
		out = append(out, u)
	}
	return out, res
}

// fixture loads a bundled Rollout or AnalysisRun fixture as the live object called name in the
// destination namespace (fixtures describe several applications; only their status matters here).
func fixture(t *testing.T, file, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := lua.FS.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	u := unstructuredFrom(t, raw)
	u.SetName(name)
	u.SetNamespace(syncNamespace)
	u.SetUID(types.UID("uid-" + u.GetKind() + "-" + u.GetNamespace() + "-" + u.GetName()))
	return u
}

type step struct {
	phase   common.OperationPhase
	message string
}

func (s step) String() string { return fmt.Sprintf("%s %q", s.phase, s.message) }

func ourHealth(t *testing.T) health.HealthOverride {
	overrides, err := overridesFromConfigMap(t, suite.HealthData(t))
	if err != nil {
		t.Fatal(err)
	}
	return argolua.ResourceHealthOverrides(overrides)
}

// builtinHealth is Argo CD without analysis-health: no overrides, so the VM falls back to the built-in
// resource_customizations scripts.
func builtinHealth() health.HealthOverride {
	return argolua.ResourceHealthOverrides(map[string]v1alpha1.ResourceOverride{})
}

const (
	rolloutRunning  = "argoproj.io/Rollout/testdata/canary_step_analysis_running.yaml"
	rolloutFailed   = "argoproj.io/Rollout/testdata/canary_step_analysis_failed_aborted_v1.8.yaml"
	rolloutHealthy  = "argoproj.io/Rollout/testdata/canary_fully_promoted_healthy.yaml"
	rolloutPaused   = "argoproj.io/Rollout/testdata/canary_pause_step.yaml"
	rolloutEarly    = "argoproj.io/Rollout/testdata/canary_background_analysis_running_healthy_at_promotion.yaml"
	runRunning      = "argoproj.io/AnalysisRun/testdata/step-analysis-running-three-metrics.yaml"
	runSuccessful   = "argoproj.io/AnalysisRun/testdata/step-analysis-successful.yaml"
	runFailed       = "argoproj.io/AnalysisRun/testdata/step-analysis-failed.yaml"
	runInconclusive = "argoproj.io/AnalysisRun/testdata/step-analysis-inconclusive.yaml"
)

// The facts of docs/hooks.md, in gitops-engine's sync engine with the canary chart: without a hook the
// operation succeeds right after apply whatever the Rollout does next; with the barrier it waits while
// the Rollout is Progressing or Suspended, fails when it turns Degraded (the barrier is never created),
// and succeeds once it is Healthy (the barrier is created, succeeds at once and is deleted). With Argo
// CD's built-in Rollout script the barrier passes while background analysis still runs; with ours it
// waits.
func TestSyncRolloutBarrier(t *testing.T) {
	ours := ourHealth(t)
	barrierOpts := &hooks.Options{Mode: hooks.Barrier}
	_, gen := targetsOf(t, "canary-checkout.yaml", barrierOpts)
	if len(gen.Generated) != 1 || gen.Generated[0].Kind != "ConfigMap" {
		t.Fatalf("want one ConfigMap barrier, got %+v", gen.Generated)
	}
	barrierName := gen.Generated[0].Name
	var (
		waitHook    = step{common.OperationRunning, "waiting for completion of hook /ConfigMap/" + barrierName}
		waitRollout = step{common.OperationRunning, "waiting for healthy state of argoproj.io/Rollout/checkout"}
		doneAll     = step{common.OperationSucceeded, "successfully synced (all tasks run)"}
		doneHooks   = step{common.OperationSucceeded, "successfully synced (no more tasks)"}
		failed      = step{common.OperationFailed, "one or more synchronization tasks completed unsuccessfully"}
	)
	for _, tc := range []struct {
		name    string
		barrier bool
		waves   bool // the Ingress in sync wave 1, no hook
		// failingHook adds the chart's own PostSync smoke-test Job, which fails.
		failingHook bool
		override    health.HealthOverride
		states      []string
		want        []step
		// wantRollout is the Rollout's task message once the operation ends (its health message).
		wantRollout string
		// wantBarrier: whether the barrier was created, and deleted.
		wantCreated, wantDeleted bool
	}{
		{name: "no hook: Progressing then Degraded, succeeds at apply", states: []string{rolloutRunning, rolloutFailed},
			want: []step{doneAll}},
		{name: "no hook: Suspended, succeeds at apply", states: []string{rolloutPaused},
			want: []step{doneAll}},
		{name: "barrier: Progressing then Healthy, succeeds after the analysis", barrier: true, states: []string{rolloutRunning, rolloutRunning, rolloutHealthy},
			want:        []step{waitHook, waitRollout, waitRollout, waitHook, doneHooks},
			wantRollout: "", wantCreated: true, wantDeleted: true},
		{name: "barrier: Progressing then Degraded, fails", barrier: true, states: []string{rolloutRunning, rolloutFailed},
			want:        []step{waitHook, waitRollout, failed},
			wantRollout: `Step analysis run checkout-c9c66885-4-2 Failed: Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1)`},
		{name: "barrier: Suspended, keeps waiting", barrier: true, states: []string{rolloutPaused},
			want: []step{waitHook, waitRollout, waitRollout, waitRollout, waitRollout, waitRollout, waitRollout}},
		{name: "barrier, ours: Healthy phase with background analysis running, keeps waiting", barrier: true, states: []string{rolloutEarly},
			want: []step{waitHook, waitRollout, waitRollout, waitRollout}},
		{name: "barrier, built-in script: the same Rollout passes the barrier", barrier: true, override: builtinHealth(), states: []string{rolloutEarly},
			want: []step{waitHook, waitHook, doneHooks}, wantCreated: true, wantDeleted: true},
		{name: "barrier and a failing PostSync Job: the barrier is deleted (HookFailed)", barrier: true, failingHook: true, states: []string{rolloutHealthy},
			want: []step{
				{common.OperationRunning, "waiting for completion of hook /ConfigMap/" + barrierName + " and 1 more hooks"},
				{common.OperationRunning, "waiting for completion of hook /ConfigMap/" + barrierName + " and 1 more hooks"},
				failed},
			wantCreated: true, wantDeleted: true},
		{name: "two waves, no hook: waits as well", waves: true, states: []string{rolloutRunning, rolloutHealthy},
			want: []step{{common.OperationRunning, "waiting for healthy state of networking.k8s.io/Ingress/checkout"}, waitRollout, doneAll}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts *hooks.Options
			if tc.barrier {
				opts = barrierOpts
			}
			targets, _ := targetsOf(t, "canary-checkout.yaml", opts)
			if tc.failingHook {
				targets = append(targets, unstructuredFrom(t, []byte(smokeTestJob)))
			}
			if tc.waves {
				for _, o := range targets {
					if o.GetKind() == "Ingress" {
						o.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-wave": "1"})
					}
				}
			}
			override := tc.override
			if override == nil {
				override = ours
			}
			a := &application{t: t, api: newFakeAPIServer(t), override: override, targets: targets, live: map[kube.ResourceKey]*unstructured.Unstructured{},
				statesKind: "Rollout", startedAt: metav1.Now()}
			for _, s := range tc.states {
				a.states = append(a.states, fixture(t, s, "checkout"))
			}
			var got []step
			for range tc.want {
				p, m := a.reconcile()
				got = append(got, step{p, m})
				if p.Completed() {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("operation phases\n got %v\nwant %v", got, tc.want)
			}
			if tc.wantRollout != "" {
				if msg := resultFor(a.results, "Rollout"); msg != tc.wantRollout {
					t.Errorf("Rollout task message %q, want %q", msg, tc.wantRollout)
				}
			}
			created := resultFor(a.results, "ConfigMap/"+barrierName) != ""
			if created != tc.wantCreated {
				t.Errorf("barrier created = %v, want %v (results %+v)", created, tc.wantCreated, a.results)
			}
			deleted := false
			for _, d := range a.api.deleted() {
				deleted = deleted || strings.HasSuffix(d, "/configmaps/"+barrierName)
			}
			if deleted != tc.wantDeleted {
				t.Errorf("barrier deleted = %v, want %v (deletes %v)", deleted, tc.wantDeleted, a.api.deleted())
			}
		})
	}
}

const smokeTestJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: checkout-smoke-test
  namespace: shop
  annotations:
    argocd.argoproj.io/hook: PostSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: smoke
          image: registry.example.com/shop/smoke-tests:1.15.0
`

// resultFor returns the message of the sync result whose key ends with suffix ("Rollout",
// "ConfigMap/<name>"), or "" when there is none.
func resultFor(results []common.ResourceSyncResult, suffix string) string {
	for _, r := range results {
		k := r.ResourceKey.Kind + "/" + r.ResourceKey.Name
		if r.ResourceKey.Kind == suffix || k == suffix {
			if r.Message == "" {
				return "(created)"
			}
			return r.Message
		}
	}
	return ""
}

// The AnalysisRun hook for a plain Deployment (the web chart): the operation waits while the run is
// running, succeeds when it succeeds (and the run is deleted), fails when it fails (the run stays for
// inspection). Inconclusive: Argo CD's built-in script says Unknown, so the hook and the sync fail; ours
// says Suspended, so the sync keeps waiting (docs/hooks.md explains the consequence).
func TestSyncAnalysisRunHook(t *testing.T) {
	ours := ourHealth(t)
	opts := &hooks.Options{Mode: hooks.AnalysisRun, Args: []hooks.Arg{{Name: "expected-version", Value: "2.4.0"}}}
	_, gen := targetsOf(t, "deployment-web.yaml", opts)
	if len(gen.Generated) != 1 || gen.Generated[0].Kind != "AnalysisRun" {
		t.Fatalf("want one AnalysisRun hook, got %+v", gen.Generated)
	}
	run := gen.Generated[0].Name
	waitRun := step{common.OperationRunning, "waiting for completion of hook argoproj.io/AnalysisRun/" + run}
	for _, tc := range []struct {
		name        string
		override    health.HealthOverride
		states      []string
		want        []step
		wantDeleted bool
	}{
		{name: "running then successful", states: []string{runRunning, runRunning, runSuccessful},
			want: []step{waitRun, waitRun, waitRun, waitRun, {common.OperationSucceeded, "successfully synced (no more tasks)"}}, wantDeleted: true},
		{name: "running then failed", states: []string{runRunning, runFailed},
			want: []step{waitRun, waitRun, waitRun, {common.OperationFailed, "one or more synchronization tasks completed unsuccessfully"}}},
		{name: "inconclusive, ours: keeps waiting", states: []string{runInconclusive},
			want: []step{waitRun, waitRun, waitRun, waitRun, waitRun}},
		{name: "inconclusive, built-in: fails", override: builtinHealth(), states: []string{runInconclusive},
			want: []step{waitRun, waitRun, {common.OperationFailed, "one or more synchronization tasks completed unsuccessfully"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targets, _ := targetsOf(t, "deployment-web.yaml", opts)
			override := tc.override
			if override == nil {
				override = ours
			}
			a := &application{t: t, api: newFakeAPIServer(t), override: override, targets: targets, live: map[kube.ResourceKey]*unstructured.Unstructured{},
				statesKind: "AnalysisRun", startedAt: metav1.Now()}
			for _, s := range tc.states {
				a.states = append(a.states, fixture(t, s, run))
			}
			var got []step
			for range tc.want {
				p, m := a.reconcile()
				got = append(got, step{p, m})
				if p.Completed() {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("operation phases\n got %v\nwant %v\nresults %+v", got, tc.want, a.results)
			}
			deleted := false
			for _, d := range a.api.deleted() {
				deleted = deleted || strings.HasSuffix(d, "/analysisruns/"+run)
			}
			if deleted != tc.wantDeleted {
				t.Errorf("AnalysisRun deleted = %v, want %v (deletes %v)", deleted, tc.wantDeleted, a.api.deleted())
			}
		})
	}
}

// analysisHealthBinary builds the CLI once per test run: the post-renderer tests execute it as Helm and
// Argo CD's plugin server would.
var analysisHealthBinary = gosync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "analysis-health-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "analysis-health")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/analysis-health")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func buildCLI(t *testing.T) string {
	t.Helper()
	bin, err := analysisHealthBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func readChart(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The input of the sync engine above, produced through Helm's own post-renderer code (helm
// pkg/postrender/exec.go, what `helm template --post-renderer` runs): the binary prints exactly what
// hooks.Generate builds, and a failure reaches Helm as an error carrying our message, with no output.
func TestSyncInputFromHelmPostRenderer(t *testing.T) {
	bin := buildCLI(t)
	chart := readChart(t, "canary-checkout.yaml")
	pr, err := postrender.NewExec(bin, "hooks", "--post-renderer", "--analysis-labels", "kargo.akuity.io/stage=prod")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pr.Run(bytes.NewBuffer(chart))
	if err != nil {
		t.Fatal(err)
	}
	streams, err := manifest.ReadStreams([]string{filepath.Join("..", "..", "testdata", "charts", "canary-checkout.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hooks.Generate(streams, hooks.Options{Mode: hooks.Barrier, AnalysisLabels: map[string]string{"kargo.akuity.io/stage": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), res.PostRendered()) {
		t.Errorf("helm post-renderer output differs from hooks.Generate:\n%s", out)
	}

	bad := []byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec: {strategy: {canary: {steps: [{analysis: {templates: [{templateName: gone}]}}]}}}\n")
	// A template the input lacks is a warning unless required (a platform template may exist in the cluster).
	if pr, err = postrender.NewExec(bin, "hooks", "--post-renderer", "--require-templates"); err != nil {
		t.Fatal(err)
	}
	out, err = pr.Run(bytes.NewBuffer(bad))
	if err == nil || !strings.Contains(err.Error(), `AnalysisTemplate "gone" is not in the input`) || out != nil {
		t.Errorf("helm must fail with our message and no output: err %v, output %v", err, out)
	}
}

// The plugin.yaml of docs/hooks.md: Argo CD's own checks (argo-cd cmpserver/plugin/config.go
// ValidatePluginConfig: kind, metadata.name, a generate command), then its generate script run with the
// variables Argo CD sets (ARGOCD_APP_*, ARGOCD_ENV_* from the Application) and a stand-in for helm that
// records its command line. The post-renderer part of that command line, run through Helm's exec code,
// gives the expected stream.
func TestSyncInputFromConfigManagementPlugin(t *testing.T) {
	bin := buildCLI(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "`plugin.yaml` (sidecar format")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/hooks.md: no plugin.yaml block")
	}
	var plugin struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version  string                           `json:"version"`
			Generate struct{ Command, Args []string } `json:"generate"`
			Discover map[string]any                   `json:"discover"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal([]byte(block), &plugin); err != nil {
		t.Fatal(err)
	}
	if plugin.APIVersion != "argoproj.io/v1alpha1" || plugin.Kind != "ConfigManagementPlugin" || plugin.Metadata.Name != "analysis-health-helm" ||
		len(plugin.Spec.Generate.Command) == 0 || plugin.Spec.Version != "" || plugin.Spec.Discover != nil {
		t.Fatalf("plugin.yaml: %+v", plugin)
	}
	if c := plugin.Spec.Generate.Command; len(c) != 2 || c[0] != "sh" || c[1] != "-c" || len(plugin.Spec.Generate.Args) != 1 {
		t.Fatalf("generate: %+v", plugin.Spec.Generate)
	}

	fake := t.TempDir()
	argv := filepath.Join(fake, "argv")
	if err := os.WriteFile(filepath.Join(fake, "helm"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$HELM_ARGV\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", plugin.Spec.Generate.Args[0])
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "HELM_ARGV="+argv,
		"ARGOCD_APP_NAME=checkout-prod", "ARGOCD_APP_NAMESPACE=shop",
		"ARGOCD_ENV_VALUES_FILE=values-prod.yaml", "ARGOCD_ENV_KARGO_STAGE=prod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var helmArgs, postArgs []string
	renderer := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--post-renderer":
			renderer = args[i+1]
			i++
		case "--post-renderer-args":
			postArgs = append(postArgs, args[i+1])
			i++
		default:
			helmArgs = append(helmArgs, args[i])
		}
	}
	if got := strings.Join(helmArgs, " "); got != "template checkout-prod . --namespace shop --values values-prod.yaml" {
		t.Errorf("helm arguments: %s", got)
	}
	if renderer != "analysis-health" || strings.Join(postArgs, " ") != "hooks --post-renderer --mode barrier --analysis-labels kargo.akuity.io/stage=prod" {
		t.Fatalf("post-renderer %q %q", renderer, postArgs)
	}
	pr, err := postrender.NewExec(bin, postArgs...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pr.Run(bytes.NewBuffer(readChart(t, "bluegreen-payments.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("..", "..", "internal", "gate", "hooks", "testdata", "bluegreen-payments.labels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), golden) {
		t.Errorf("plugin output differs from hooks/testdata/bluegreen-payments.labels.yaml:\n%s", out)
	}
}
