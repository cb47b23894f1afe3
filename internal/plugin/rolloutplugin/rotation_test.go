package rolloutplugin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// workloadServer is a TLS server that answers the plugin's reads as an API server would, for the tokens
// it accepts at the moment: any other bearer gets 401 Unauthorized, as kube-apiserver answers an
// expired or revoked token or one whose ServiceAccount was deleted.
type workloadServer struct {
	*httptest.Server
	mu       sync.Mutex
	accepted map[string]bool
	frame    frame
	reads    map[string]*atomic.Int64 // by token
}

func newWorkloadServer(t *testing.T, f frame) *workloadServer {
	ws := &workloadServer{accepted: map[string]bool{}, frame: f, reads: map[string]*atomic.Int64{}}
	ws.Server = httptest.NewTLSServer(http.HandlerFunc(ws.serve))
	t.Cleanup(ws.Close)
	return ws
}

func (ws *workloadServer) set(f frame, tokens ...string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.frame = f
	ws.accepted = map[string]bool{}
	for _, t := range tokens {
		ws.accepted[t] = true
		if ws.reads[t] == nil {
			ws.reads[t] = &atomic.Int64{}
		}
	}
}

func (ws *workloadServer) readsBy(token string) int64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if c := ws.reads[token]; c != nil {
		return c.Load()
	}
	return 0
}

func (ws *workloadServer) serve(w http.ResponseWriter, r *http.Request) {
	ws.mu.Lock()
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	ok, f := ws.accepted[tok], ws.frame
	if ok {
		ws.reads[tok].Add(1)
	}
	ws.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
		return
	}
	list := func(kind string, items []map[string]any) {
		if items == nil {
			items = []map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": map[string]any{}, "items": items})
	}
	switch p := r.URL.Path; {
	case p == "/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/checkout":
		_ = json.NewEncoder(w).Encode(f.Rollout)
	case p == "/apis/argoproj.io/v1alpha1/namespaces/shop/analysisruns":
		list("AnalysisRunList", f.AnalysisRuns)
	case p == "/apis/argoproj.io/v1alpha1/namespaces/shop/experiments":
		list("ExperimentList", f.Experiments)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`))
	}
}

// kubeconfigWith is kubeconfigFor with another token.
func kubeconfigWith(ws *workloadServer, tok string) string {
	return strings.Replace(kubeconfigFor(ws.URL, ws.Server), token, tok, 1)
}

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

const rotationConfig = `{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"shop-workload","key":"kubeconfig"}}`

// TestRejectedTokenNamesSecretAndRenewal: a 401 from the kubeconfig Secret's cluster (an expired or
// revoked token, a deleted ServiceAccount) is a measurement Error naming the Secret, its key and the
// command that renews it, without the token.
func TestRejectedTokenNamesSecretAndRenewal(t *testing.T) {
	ws := newWorkloadServer(t, loadFrame(t, "step-successful"))
	ws.set(loadFrame(t, "step-successful")) // no token accepted
	local := fakeClient(secret("kargo-shop", "shop-workload", map[string]string{"kubeconfig": kubeconfigWith(ws, "expired-token-0123456789")}))
	p := rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil }})
	m := p.Run(analysisRun(), metric(rotationConfig))
	if m.Phase != v1alpha1.AnalysisPhaseError {
		t.Fatalf("phase %s %q, want Error", m.Phase, m.Message)
	}
	for _, want := range []string{
		`Rollout shop/checkout: the token in Secret kargo-shop/shop-workload key "kubeconfig" was rejected by its cluster (HTTP 401 Unauthorized: expired, revoked, or its ServiceAccount deleted)`,
		"renew it with `analysis-health kubeconfig --kubeconfig-secret shop-workload --project kargo-shop --token-from-serviceaccount shop/analysis-health-rollout-reader`",
	} {
		if !strings.Contains(m.Message, want) {
			t.Errorf("message %q\nlacks %q", m.Message, want)
		}
	}
	if strings.Contains(m.Message, "expired-token-0123456789") || strings.Contains(m.Value, "expired-token-0123456789") {
		t.Errorf("the token is in the measurement: %q %q", m.Message, m.Value)
	}

	// another key: the renewal names it
	local2 := fakeClient(secret("kargo-shop", "shop-workload", map[string]string{"config": kubeconfigWith(ws, "expired-token-0123456789")}))
	p2 := rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local2, nil }})
	m2 := p2.Run(analysisRun(), metric(`{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"shop-workload","key":"config"}}`))
	if !strings.Contains(m2.Message, "--kubeconfig-key config --token-from-serviceaccount") {
		t.Errorf("message %q does not renew key config", m2.Message)
	}
}

// TestTokenRotation: during a verification the Secret's token is replaced by a new one and the old one
// stops working. The same plugin process reads the new Secret on its next measurement (the cluster
// identity is the kubeconfig's sha256), is never Successful on a read it could not make, and, while
// the Secret still holds the rejected token, errors naming the Secret and how to renew it.
func TestTokenRotation(t *testing.T) {
	running, success := loadFrame(t, "step-running"), loadFrame(t, "step-successful")
	ws := newWorkloadServer(t, running)
	ws.set(running, "token-a-0123456789")
	local := fakeClient(secret("kargo-shop", "shop-workload", map[string]string{"kubeconfig": kubeconfigWith(ws, "token-a-0123456789")}))
	p := rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil }})
	run, cfg := analysisRun(), metric(rotationConfig)

	m := p.Run(run, cfg)
	if m.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("with token a: %s %q, want Running", m.Phase, m.Message)
	}
	// token a revoked (its ServiceAccount deleted), the analysis passes meanwhile: the plugin cannot read
	// it, so it is not Successful
	ws.set(success)
	m = p.Resume(run, cfg, m)
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "was rejected by its cluster") || !strings.Contains(m.Message, "analysis-health kubeconfig") {
		t.Fatalf("with token a revoked: %s %q, want Error naming the renewal", m.Phase, m.Message)
	}
	// the Secret is renewed with token b: the next measurement (Run, as the controller starts one after
	// an Error) reads the workload cluster with it, keeps the pinned revision and is Successful
	sec := secret("kargo-shop", "shop-workload", map[string]string{"kubeconfig": kubeconfigWith(ws, "token-b-0123456789")})
	if _, err := local.Resource(secretsGVR).Namespace("kargo-shop").Update(t.Context(), &unstructured.Unstructured{Object: sec}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws.set(running, "token-b-0123456789")
	run.Status.MetricResults = []v1alpha1.MetricResult{{Name: cfg.Name, Measurements: []v1alpha1.Measurement{m}}}
	m = p.Run(run, cfg)
	if m.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("with token b, analysis running: %s %q, want Running", m.Phase, m.Message)
	}
	ws.set(success, "token-b-0123456789")
	m = p.Resume(run, cfg, m)
	if m.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("with token b, analysis passed: %s %q, want Successful", m.Phase, m.Message)
	}
	if ws.readsBy("token-b-0123456789") == 0 {
		t.Error("token b was never used")
	}
}
