package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/kube/kubetest"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/gate/hooks"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// The barrier replay: the sync operation that applied the new revision, run by gitops-engine's sync engine
// (pkg/sync, as Argo CD v2.14's application controller drives it in controller/sync.go: a new sync
// context per reconcile with the previous operation state) with the PostSync barrier hook that
// `analysis-health hooks --mode barrier` generates, over the recorded frames: one operation reconcile per
// frame (Argo CD refreshes the App on every change of a managed object), with the frame's Rollout as
// the live object. The barrier ConfigMap is "created" when gitops-engine applies it and "deleted" when it
// deletes it. Kargo's argocd-update step waits for the operation (kargo.md §3): Succeeded → the
// Promotion Succeeds; Failed/Error → Errored; still Running 5 minutes after the step started (the
// default timeout, no retry.timeout) → Errored "timed out after 5m0s".

const (
	promotionTimeout = 5 * time.Minute
	syncRevision     = "4b1c0de5e7a9f1b2c3d4e5f60718293a4b5c6d7e"
)

// promotion is the Kargo Promotion's outcome with the barrier.
type promotion struct {
	Phase   string        // Succeeded, Errored, Running (the timeline ended first)
	At      time.Duration // since frame 0
	Frame   int           // the frame of the decision (-1 for a timeout between frames)
	Message string
}

func (p promotion) String() string {
	s := fmt.Sprintf("%s at +%ds", p.Phase, int(p.At.Seconds()))
	if p.Message != "" {
		s += " (" + p.Message + ")"
	}
	return s
}

// barrierTargets are what Argo CD syncs: the Rollout as desired (the last frame's spec, which is what
// Argo CD applied) and the barrier the hooks generator adds to it.
func barrierTargets(t testing.TB, ro map[string]any) []*unstructured.Unstructured {
	t.Helper()
	desired, err := desiredManifest(ro)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sigsyaml.JSONToYAML([]byte(desired))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := manifest.DecodeStream("rollout.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	// the templates exist in the cluster (the recorder created them), not in this one-object input
	res, err := hooks.Generate([]manifest.Stream{stream}, hooks.Options{Mode: hooks.Barrier, KnownTemplates: templatesOf(ro)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Generated) != 1 || res.Generated[0].Kind != "ConfigMap" {
		t.Fatalf("want one ConfigMap barrier, got %+v", res.Generated)
	}
	out, err := manifest.DecodeStream("post-rendered", res.PostRendered())
	if err != nil {
		t.Fatal(err)
	}
	var targets []*unstructured.Unstructured
	for _, o := range out.Objects() {
		u := &unstructured.Unstructured{Object: o.Object}
		if u.GetNamespace() == "" {
			u.SetNamespace(timeline.Str(ro, "metadata", "namespace"))
		}
		targets = append(targets, u)
	}
	return targets
}

// syncOverFrames runs the operation and returns the Promotion's outcome.
func syncOverFrames(t testing.TB, tl *timeline.Timeline, override health.HealthOverride) promotion {
	t.Helper()
	api := newDeleteRecorder(t)
	targets := barrierTargets(t, tl.Frames[len(tl.Frames)-1].Rollout)
	ns := timeline.Str(tl.Frames[0].Rollout, "metadata", "namespace")
	live := map[kube.ResourceKey]*unstructured.Unstructured{}
	var (
		phase   common.OperationPhase
		message string
		results []common.ResourceSyncResult
	)
	started := metav1.Now()
	t0, _ := time.Parse(time.RFC3339, tl.Frames[0].Time)
	rolloutKey := kube.GetResourceKey(tl.Frames[0].RolloutObject())
	// after the last frame nothing changes any more, but hook creations and deletions still trigger
	// reconciles: a few more at the last frame's time settle the operation
	n := len(tl.Frames) + 5
	for i := 0; i < n; i++ {
		f := &tl.Frames[min(i, len(tl.Frames)-1)]
		at, _ := time.Parse(time.RFC3339, f.Time)
		if at.Sub(t0) > promotionTimeout {
			return promotion{Phase: "Errored", At: promotionTimeout, Frame: -1, Message: "argocd-update timed out after 5m0s"}
		}
		// a copy: the frames are shared with the other checks, and the uid ties the runs to the Rollout
		ro := f.RolloutObject().DeepCopy()
		ro.SetUID(types.UID("uid-rollout"))
		live[rolloutKey] = ro
		cur := map[kube.ResourceKey]*unstructured.Unstructured{}
		for k, v := range live {
			cur[k] = v.DeepCopy()
		}
		var tgts []*unstructured.Unstructured
		for _, o := range targets {
			tgts = append(tgts, o.DeepCopy())
		}
		res := sync.Reconcile(tgts, cur, ns, scope{})
		cfg := &rest.Config{Host: api.URL}
		ctx, cleanup, err := sync.NewSyncContext(syncRevision, res, cfg, cfg, &kubetest.MockKubectlCmd{}, ns, nil,
			sync.WithLogr(logr.Discard()),
			sync.WithHealthOverride(override),
			sync.WithInitialState(phase, message, results, started),
		)
		if err != nil {
			t.Fatal(err)
		}
		ctx.Sync()
		phase, message, results = ctx.GetState()
		cleanup()
		// the cluster after this reconcile: applied hooks exist, deleted ones are gone
		for _, r := range results {
			if r.Status != common.ResultCodeSynced || r.ResourceKey == rolloutKey {
				continue
			}
			if _, ok := live[r.ResourceKey]; ok {
				continue
			}
			for _, o := range targets {
				if kube.GetResourceKey(o) == r.ResourceKey {
					c := o.DeepCopy()
					c.SetUID(types.UID("uid-" + c.GetKind() + "-" + c.GetName()))
					live[r.ResourceKey] = c
				}
			}
		}
		for _, p := range api.deleted() {
			for k := range live {
				if k != rolloutKey && strings.HasSuffix(p, "/"+k.Name) {
					delete(live, k)
				}
			}
		}
		if phase.Completed() {
			p := promotion{Phase: "Succeeded", At: at.Sub(t0), Frame: min(i, len(tl.Frames)-1)}
			if !phase.Successful() {
				p.Phase, p.Message = "Errored", "sync "+string(phase)+": "+message
			}
			return p
		}
	}
	last, _ := time.Parse(time.RFC3339, tl.Frames[len(tl.Frames)-1].Time)
	return promotion{Phase: "Running", At: last.Sub(t0), Frame: len(tl.Frames) - 1,
		Message: fmt.Sprintf("%s; Errored at +%ds when argocd-update times out", message, int(promotionTimeout.Seconds()))}
}

type scope struct{}

func (scope) IsNamespaced(gk schema.GroupKind) (bool, error) {
	return gk.Kind != "Namespace" && gk.Kind != "ClusterAnalysisTemplate", nil
}

// deleteRecorder serves the discovery gitops-engine needs for the synced kinds and records DELETEs (it
// deletes hooks through the dynamic client).
type deleteRecorder struct {
	*httptest.Server
	mu      gosync.Mutex
	deletes []string
}

func newDeleteRecorder(t testing.TB) *deleteRecorder {
	d := &deleteRecorder{}
	resources := map[string][]metav1.APIResource{
		"/api/v1":                    {{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}},
		"/apis/argoproj.io/v1alpha1": {{Name: "rollouts", Kind: "Rollout", Namespaced: true}},
	}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodDelete {
			d.mu.Lock()
			d.deletes = append(d.deletes, r.URL.Path)
			d.mu.Unlock()
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
			return
		}
		list, ok := resources[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		res := metav1.APIResourceList{GroupVersion: strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/"), "/apis/")}
		for _, a := range list {
			a.Verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
			res.APIResources = append(res.APIResources, a)
		}
		_ = json.NewEncoder(w).Encode(res)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *deleteRecorder) deleted() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.deletes...)
}

// templatesOf names every AnalysisTemplate the Rollout references.
func templatesOf(ro map[string]any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if n, ok := v["templateName"].(string); ok {
				out = append(out, n)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(ro["spec"])
	return out
}
