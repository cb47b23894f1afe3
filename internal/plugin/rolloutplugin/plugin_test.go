package rolloutplugin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/metricproviders/plugin/rpc"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/hashicorp/go-hclog"
	goPlugin "github.com/hashicorp/go-plugin"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

const token = "s3cr3t-t0ken-value-never-printed"

// frame is one recorded state of Argo Rollouts' controllers (../verdict/testdata, taken from the e2e
// timelines and held equal to them by verdict's TestFixturesAreRecorded).
type frame struct {
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns"`
	Experiments  []map[string]any `json:"experiments"`
}

func loadFrame(t testing.TB, name string) frame {
	t.Helper()
	raw, err := os.ReadFile("../verdict/testdata/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f frame
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

var listKinds = map[schema.GroupVersionResource]string{
	{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}:     "RolloutList",
	{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}: "AnalysisRunList",
	{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}:  "ExperimentList",
	{Version: "v1", Resource: "secrets"}:                                  "SecretList",
}

func fakeClient(objs ...map[string]any) *dynamicfake.FakeDynamicClient {
	var ros []runtime.Object
	for _, o := range objs {
		ros = append(ros, &unstructured.Unstructured{Object: o})
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, ros...)
}

func secret(ns, name string, data map[string]string) map[string]any {
	d := map[string]any{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": ns, "name": name}, "data": d}
}

// kubeconfigFor is a kubeconfig of server with the token; with a TLS test server, it trusts its certificate.
func kubeconfigFor(server string, tlsServer ...*httptest.Server) string {
	ca := ""
	if len(tlsServer) > 0 {
		ca = ", certificate-authority-data: " + base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsServer[0].Certificate().Raw}))
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q`+ca+`}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server, token)
}

// serve runs impl behind go-plugin's test server and returns the Rollouts controller's own RPC client
// (metricproviders/plugin/rpc MetricsPluginRPC), as upstream rpc_test.go does.
func serve(t *testing.T, impl rpc.MetricProviderPlugin) rpc.MetricProviderPlugin {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	plugins := map[string]goPlugin.Plugin{rolloutplugin.PluginMapKey: &rpc.RpcMetricProviderPlugin{Impl: impl}}
	ch := make(chan *goPlugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go goPlugin.Serve(&goPlugin.ServeConfig{HandshakeConfig: rolloutplugin.Handshake, Plugins: plugins, Logger: hclog.NewNullLogger(),
		Test: &goPlugin.ServeTestConfig{Context: ctx, ReattachConfigCh: ch, CloseCh: closed}})
	var cfg *goPlugin.ReattachConfig
	select {
	case cfg = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("plugin server did not start")
	}
	c := goPlugin.NewClient(&goPlugin.ClientConfig{HandshakeConfig: rolloutplugin.Handshake, Plugins: plugins, Reattach: cfg, Logger: hclog.NewNullLogger()})
	proto, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Dispense(rolloutplugin.PluginMapKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Kill()
		cancel()
		<-closed
	})
	return raw.(rpc.MetricProviderPlugin)
}

func metric(config string) v1alpha1.Metric {
	m := v1alpha1.Metric{Name: "rollout-analysis", Provider: v1alpha1.MetricProvider{Plugin: map[string]json.RawMessage{}}}
	if config != "" {
		m.Provider.Plugin[rolloutplugin.Name] = json.RawMessage(config)
	}
	return m
}

// kargoShop is the platform admin's policy of a Kargo Project: its runs (in kargo-shop, the Project's
// namespace) read the Rollout in shop.
var kargoShop = []rolloutplugin.NamespacePair{{Run: "kargo-shop", Rollout: "shop"}}

func analysisRun(args ...v1alpha1.Argument) *v1alpha1.AnalysisRun {
	ar := &v1alpha1.AnalysisRun{Spec: v1alpha1.AnalysisRunSpec{Args: args}}
	ar.Namespace, ar.Name = "kargo-shop", "prod.01j0000000000000000000000.abcdef1"
	return ar
}

func TestMeasurements(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running, success, failed := loadFrame(t, "step-running"), loadFrame(t, "step-successful"), loadFrame(t, "step-failed")
	objsOf := func(f frame) []map[string]any { return append([]map[string]any{f.Rollout}, f.AnalysisRuns...) }

	// A server that accepts connections and never answers: client-go's timeout must end the call.
	hang := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	closedPort := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "https://" + l.Addr().String()
	}()

	const cfg = `{"name":"checkout","namespace":"shop"}`
	withSecret := func(name, key string) string {
		return fmt.Sprintf(`{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":%q,"key":%q},"apiTimeout":"1s"}`, name, key)
	}
	for _, tc := range []struct {
		name    string
		local   *dynamicfake.FakeDynamicClient
		remote  *dynamicfake.FakeDynamicClient // nil: the real client-go client from the kubeconfig
		config  string
		args    []v1alpha1.Argument
		phase   v1alpha1.AnalysisPhase
		message string
	}{
		{name: "running while the step analysis measures", local: fakeClient(objsOf(running)...), config: cfg, phase: v1alpha1.AnalysisPhaseRunning},
		{name: "successful once promoted", local: fakeClient(objsOf(success)...), config: cfg, phase: v1alpha1.AnalysisPhaseSuccessful, message: "is fully promoted and its analysis passed"},
		{name: "failed step analysis", local: fakeClient(objsOf(failed)...), config: cfg, phase: v1alpha1.AnalysisPhaseFailed, message: "Step analysis run"},
		{name: "missing config", local: fakeClient(), config: "", phase: v1alpha1.AnalysisPhaseError, message: "has no provider.plugin"},
		{name: "malformed config", local: fakeClient(), config: `{"name": 3}`, phase: v1alpha1.AnalysisPhaseError, message: "not a valid config"},
		{name: "unknown field", local: fakeClient(), config: `{"name":"checkout","namespace":"shop","kubeconfig":"x"}`, phase: v1alpha1.AnalysisPhaseError, message: `unknown field "kubeconfig"`},
		{name: "unknown noAnalysis policy", local: fakeClient(objsOf(success)...), config: `{"name":"checkout","namespace":"shop","noAnalysis":"banana"}`, phase: v1alpha1.AnalysisPhaseError, message: `noAnalysis "banana" is not one of successful, inconclusive, failed`},
		{name: "noAnalysis not a string", local: fakeClient(objsOf(success)...), config: `{"name":"checkout","namespace":"shop","noAnalysis":true}`, phase: v1alpha1.AnalysisPhaseError, message: "Config.noAnalysis of type string"},
		{name: "unresolved argument", local: fakeClient(), config: `{"name":"{{args.rollout}}","namespace":"shop"}`, phase: v1alpha1.AnalysisPhaseError, message: "still holds a template"},
		{name: "unknown Rollout", local: fakeClient(objsOf(success)...), config: `{"name":"payments","namespace":"shop"}`, phase: v1alpha1.AnalysisPhaseError, message: "Rollout shop/payments not found in the Rollouts controller's cluster"},
		{name: "unknown revision", local: fakeClient(objsOf(success)...), config: `{"name":"checkout","namespace":"shop","revision":"99"}`, phase: v1alpha1.AnalysisPhaseError, message: `revision "99" is neither`},
		{name: "missing Secret", local: fakeClient(), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseError, message: "Secret kargo-shop/workload not found"},
		{name: "Secret without the key", local: fakeClient(secret("kargo-shop", "workload", map[string]string{"other": "x"})), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseError, message: `Secret kargo-shop/workload has no key "config"`},
		{name: "Secret that is not a kubeconfig", local: fakeClient(secret("kargo-shop", "workload", map[string]string{"config": "token: " + token + "\n::: not yaml"})), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseError, message: "not a valid kubeconfig"},
		{name: "kubeconfig that cannot reach its server", local: fakeClient(secret("kargo-shop", "workload", map[string]string{"config": kubeconfigFor(closedPort)})), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseError, message: "cannot reach the cluster of the kubeconfig in Secret kargo-shop/workload"},
		{name: "kubeconfig whose server never answers", local: fakeClient(secret("kargo-shop", "workload", map[string]string{"config": kubeconfigFor(hang.URL, hang)})), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseError, message: "did not answer within 1s"},
		{name: "remote cluster", local: fakeClient(secret("kargo-shop", "workload", map[string]string{"config": kubeconfigFor(closedPort)})), remote: fakeClient(objsOf(success)...), config: withSecret("workload", "config"), phase: v1alpha1.AnalysisPhaseSuccessful},
		{name: "Secret argument templated into the config", local: fakeClient(objsOf(success)...), config: `{"name":"checkout","namespace":"` + token + `"}`,
			args: []v1alpha1.Argument{{Name: "ns", Value: new(token), ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}}}, phase: v1alpha1.AnalysisPhaseError, message: "Rollout *****/checkout is in another namespace than the AnalysisRun"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, remote := tc.local, tc.remote
			opts := rolloutplugin.Options{AllowNamespacePairs: kargoShop, Now: func() time.Time { return now }, Local: func() (dynamic.Interface, error) { return local, nil }}
			if remote != nil {
				opts.Remote = func([]byte, time.Duration) (dynamic.Interface, error) { return remote, nil }
			}
			var log strings.Builder
			opts.Log = &log
			p := serve(t, rolloutplugin.New(opts))
			if err := p.InitPlugin(); err.HasError() {
				t.Fatalf("InitPlugin: %v", err)
			}
			m := p.Run(analysisRun(tc.args...), metric(tc.config))
			if m.Phase != tc.phase || !strings.Contains(m.Message, tc.message) {
				t.Fatalf("Run: %s %q, want %s containing %q", m.Phase, m.Message, tc.phase, tc.message)
			}
			if problem := valueProblem(m); problem != "" {
				t.Error(problem)
			}
			if m.StartedAt == nil || (m.Phase == v1alpha1.AnalysisPhaseRunning) != (m.ResumeAt != nil) || m.Phase.Completed() != (m.FinishedAt != nil) {
				t.Errorf("times: started %v resume %v finished %v", m.StartedAt, m.ResumeAt, m.FinishedAt)
			}
			md := p.GetMetadata(metric(tc.config))
			for _, s := range append([]string{measurementTexts(m), log.String()}, mapValues(md)...) {
				if strings.Contains(s, token) {
					t.Errorf("a Secret value leaked: %s", s)
				}
			}
			if m.Phase == v1alpha1.AnalysisPhaseRunning {
				r := p.Resume(analysisRun(tc.args...), metric(tc.config), m)
				if r.Phase != v1alpha1.AnalysisPhaseRunning || !r.StartedAt.Equal(m.StartedAt) {
					t.Errorf("Resume: %s started %v", r.Phase, r.StartedAt)
				}
				term := p.Terminate(analysisRun(), metric(tc.config), m)
				if term.Phase != v1alpha1.AnalysisPhaseSuccessful || term.FinishedAt == nil {
					t.Errorf("Terminate: %s", term.Phase)
				}
			}
			if err := p.GarbageCollect(analysisRun(), metric(tc.config), 10); err.HasError() {
				t.Errorf("GarbageCollect: %v", err)
			}
			for _, a := range append(local.Actions(), actions(remote)...) {
				if v := a.GetVerb(); v != "get" && v != "list" {
					t.Errorf("the plugin called %s %s", v, a.GetResource().Resource)
				}
			}
		})
	}
}

func actions(c *dynamicfake.FakeDynamicClient) []k8stesting.Action {
	if c == nil {
		return nil
	}
	return c.Actions()
}

func mapValues(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}

// TestForbidden: an RBAC denial names what the plugin needs.
func TestForbidden(t *testing.T) {
	c := fakeClient()
	c.PrependReactor("get", "rollouts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, newForbidden()
	})
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil }})
	m := p.Run(analysisRun(), metric(`{"name":"checkout","namespace":"shop"}`))
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "access denied") || !strings.Contains(m.Message, "get, list and watch on rollouts, get, list and watch on analysisruns, list and watch on experiments") {
		t.Fatalf("%s %q", m.Phase, m.Message)
	}
}

// TestInitPluginWithoutCluster: no reachable cluster at start is not an InitPlugin error; the
// measurement reports it, and a later one recovers once a client can be built.
func TestInitPluginWithoutCluster(t *testing.T) {
	f := loadFrame(t, "step-successful")
	c := fakeClient(append([]map[string]any{f.Rollout}, f.AnalysisRuns...)...)
	fail := true
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) {
		if fail {
			return nil, fmt.Errorf("no configuration has been provided")
		}
		return c, nil
	}})
	if err := p.InitPlugin(); err.HasError() {
		t.Fatal(err)
	}
	cfg := metric(`{"name":"checkout","namespace":"shop"}`)
	if m := p.Run(analysisRun(), cfg); m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "cannot build a client") {
		t.Fatalf("%s %q", m.Phase, m.Message)
	}
	fail = false
	if m := p.Run(analysisRun(), cfg); m.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("%s %q", m.Phase, m.Message)
	}
}

// TestPinnedRevision: the first measurement pins the revision in its metadata, the controller hands the
// measurement back on Resume, and the next judgement is of that revision even after the Rollout moved
// on (here: a rollback to the stable revision while the step analysis measured), so the Freight is
// Failed, not Successful as the rolled-back Rollout alone would say. With image, the measurement waits
// until the Rollout runs the Freight's image.
func TestPinnedRevision(t *testing.T) {
	running, success := loadFrame(t, "step-running"), loadFrame(t, "step-successful")
	hash := running.Rollout["status"].(map[string]any)["currentPodHash"].(string)
	stable := running.Rollout["status"].(map[string]any)["stableRS"].(string)
	var images []string
	for _, c := range running.Rollout["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		images = append(images, c.(map[string]any)["image"].(string))
	}
	// the Rollout back on its stable revision, promoted: what the controller writes after a rollback
	rolledBack := deepCopyMap(t, running.Rollout)
	st := rolledBack["status"].(map[string]any)
	st["currentPodHash"], st["stableRS"], st["phase"], st["message"] = stable, stable, "Healthy", ""
	delete(st, "canary")
	delete(st, "pauseConditions")
	st["currentStepIndex"] = int64(len(rolledBack["spec"].(map[string]any)["strategy"].(map[string]any)["canary"].(map[string]any)["steps"].([]any)))

	var client *dynamicfake.FakeDynamicClient
	// the plugin keeps its client: this one reads whichever cluster state the test sets
	opts := rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return swapClient{&client}, nil }}
	p := serve(t, rolloutplugin.New(opts))
	const cfg = `{"name":"checkout","namespace":"shop"}`

	client = fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	m := p.Run(analysisRun(), metric(cfg))
	if m.Phase != v1alpha1.AnalysisPhaseRunning || m.Metadata["revision"] != hash || m.Metadata["images"] != strings.Join(images, ",") {
		t.Fatalf("first measurement: %s, metadata %v, want Running pinned to %s", m.Phase, m.Metadata, hash)
	}
	// the unpinned judgement of the rolled-back Rollout is Successful: what the pin prevents
	client = fakeClient(append([]map[string]any{rolledBack}, running.AnalysisRuns...)...)
	if fresh := p.Run(analysisRun(), metric(cfg)); fresh.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Fatalf("unpinned judgement of the rolled-back Rollout: %s %q", fresh.Phase, fresh.Message)
	}
	r := p.Resume(analysisRun(), metric(cfg), m)
	if r.Phase != v1alpha1.AnalysisPhaseFailed || !strings.Contains(r.Message, "replaced by "+stable) || !strings.Contains(r.Message, hash) {
		t.Errorf("pinned judgement after the rollback: %s %q", r.Phase, r.Message)
	}
	// after an Error (an API server that did not answer) the controller starts a new measurement with
	// Run: the pin of the run's earlier measurement still holds
	errored := m.DeepCopy()
	errored.Phase, errored.Message, errored.ResumeAt = v1alpha1.AnalysisPhaseError, "did not answer within 10s", nil
	withError := analysisRun()
	withError.Status.MetricResults = []v1alpha1.MetricResult{{Name: "rollout-analysis", Measurements: []v1alpha1.Measurement{*errored}}}
	if again := p.Run(withError, metric(cfg)); again.Phase != v1alpha1.AnalysisPhaseFailed || again.Metadata["revision"] != hash {
		t.Errorf("a new measurement after an Error: %s %q pinned %q, want Failed pinned %s", again.Phase, again.Message, again.Metadata["revision"], hash)
	}

	// image: another image waits, the Freight's image is judged
	withImage := func(image string) string {
		return fmt.Sprintf(`{"name":"checkout","namespace":"shop","image":%q}`, image)
	}
	client = fakeClient(append([]map[string]any{success.Rollout}, success.AnalysisRuns...)...)
	if w := p.Run(analysisRun(), metric(withImage("ghcr.io/shop/checkout:9.9.9"))); w.Phase != v1alpha1.AnalysisPhaseRunning || !strings.Contains(w.Message, "to run the Freight's image ghcr.io/shop/checkout:9.9.9") || w.Metadata["revision"] != "" {
		t.Errorf("another image: %s %q %v", w.Phase, w.Message, w.Metadata)
	}
	if ok := p.Run(analysisRun(), metric(withImage(images[0]))); ok.Phase != v1alpha1.AnalysisPhaseSuccessful {
		t.Errorf("the Freight's image: %s %q", ok.Phase, ok.Message)
	}
	if bad := p.Run(analysisRun(), metric(withImage(`${{ imageFrom("x").Tag }}`))); bad.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(bad.Message, "Kargo expression") {
		t.Errorf("an unevaluated expression: %s %q", bad.Phase, bad.Message)
	}
}

type swapClient struct {
	c **dynamicfake.FakeDynamicClient
}

func (s swapClient) Resource(r schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return (*s.c).Resource(r)
}

func deepCopyMap(t *testing.T, m map[string]any) map[string]any {
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

// TestConfigUnderAnotherName: a plugin registered in argo-rollouts-config under another name (a second
// item with other args) reads the metric's one plugin entry; with two entries, or none under its name,
// the config is missing.
func TestConfigUnderAnotherName(t *testing.T) {
	f := loadFrame(t, "step-running")
	c := fakeClient(append([]map[string]any{f.Rollout}, f.AnalysisRuns...)...)
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil }})
	cfg := json.RawMessage(`{"name":"checkout","namespace":"shop"}`)
	for _, tc := range []struct {
		name    string
		entries map[string]json.RawMessage
		phase   v1alpha1.AnalysisPhase
	}{
		{"its own name", map[string]json.RawMessage{rolloutplugin.Name: cfg}, v1alpha1.AnalysisPhaseRunning},
		{"another name", map[string]json.RawMessage{"platform/rollout-analysis-direct": cfg}, v1alpha1.AnalysisPhaseRunning},
		{"two other names", map[string]json.RawMessage{"a/x": cfg, "b/y": cfg}, v1alpha1.AnalysisPhaseError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := v1alpha1.Metric{Name: "rollout-analysis", Provider: v1alpha1.MetricProvider{Plugin: tc.entries}}
			if got := p.Run(analysisRun(), m); got.Phase != tc.phase {
				t.Errorf("%s %q, want %s", got.Phase, got.Message, tc.phase)
			}
		})
	}
}
