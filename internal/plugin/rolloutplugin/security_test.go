package rolloutplugin_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
)

// The attacks of issue 44 on the plugin, each through the controller's RPC client. Who can write a
// Secret and an AnalysisRun (or a template, or a Stage) in a namespace the controller serves writes
// the kubeconfig and the config; the plugin runs with the controller's identity and files.

// countingServer counts the requests that reach it.
type countingServer struct {
	*httptest.Server
	n atomic.Int32
}

func newCounting(t *testing.T, tlsServer bool, h http.HandlerFunc) *countingServer {
	s := &countingServer{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	if tlsServer {
		s.Server = httptest.NewUnstartedServer(handler)
		s.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		s.StartTLS()
	} else {
		s.Server = httptest.NewServer(handler)
	}
	t.Cleanup(s.Close)
	return s
}

func caPEM(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// clientCert is a self-signed client certificate and its key, PEM.
func clientCert(t *testing.T) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "reader"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// kubeconfigOf is a kubeconfig of one cluster, user and context, from their fields (JSON is YAML).
func kubeconfigOf(t *testing.T, cluster, user map[string]any) string {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "x",
		"clusters": []any{map[string]any{"name": "c", "cluster": cluster}},
		"users":    []any{map[string]any{"name": "u", "user": user}},
		"contexts": []any{map[string]any{"name": "x", "context": map[string]any{"cluster": "c", "user": "u"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// remoteRun measures the Rollout shop/checkout through the kubeconfig in Secret kargo-shop/workload,
// with the real client-go client built from it.
func remoteRun(t *testing.T, kubeconfig, apiTimeout string) v1alpha1.Measurement {
	t.Helper()
	local := fakeClient(secret("kargo-shop", "workload", map[string]string{"config": kubeconfig}))
	p := serve(t, rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil }}))
	return p.Run(analysisRun(), metric(`{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"workload","key":"config"},"apiTimeout":"`+apiTimeout+`"}`))
}

// TestKubeconfigIsData: a kubeconfig field that would run a command, read a file of the controller's
// container or send its credentials elsewhere is an Error naming the field, and nothing runs and no
// request reaches any server named in it. The controller's own token stands in a file, as
// /var/run/secrets/kubernetes.io/serviceaccount/token does.
func TestKubeconfigIsData(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	controllerToken := filepath.Join(dir, "token")
	if err := os.WriteFile(controllerToken, []byte("the-controllers-own-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key := clientCert(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for f, b := range map[string][]byte{certFile: cert, keyFile: key} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	exec := map[string]any{"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "/bin/sh", "interactiveMode": "Never",
		"args": []any{"-c", `touch ` + marker + `; echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"from-exec"}}'`}}

	for _, tc := range []struct {
		name    string
		tls     bool
		cluster func(*countingServer) map[string]any
		user    map[string]any
		field   string
	}{
		{name: "exec", tls: true, user: map[string]any{"exec": exec}, field: "users[].user.exec"},
		{name: "auth-provider", tls: true, user: map[string]any{"auth-provider": map[string]any{"name": "oidc", "config": map[string]any{"idp-issuer-url": "https://127.0.0.1:1", "client-id": "x", "id-token": "y"}}}, field: "users[].user.auth-provider"},
		{name: "tokenFile", tls: true, user: map[string]any{"tokenFile": controllerToken}, field: "users[].user.tokenFile"},
		{name: "tokenFile and insecure-skip-tls-verify", tls: true, cluster: func(s *countingServer) map[string]any {
			return map[string]any{"server": s.URL, "insecure-skip-tls-verify": true}
		}, user: map[string]any{"tokenFile": controllerToken}, field: "clusters[].cluster.insecure-skip-tls-verify"},
		{name: "insecure-skip-tls-verify", tls: true, cluster: func(s *countingServer) map[string]any {
			return map[string]any{"server": s.URL, "insecure-skip-tls-verify": true}
		}, user: map[string]any{"token": token}, field: "clusters[].cluster.insecure-skip-tls-verify"},
		{name: "http://", cluster: func(s *countingServer) map[string]any { return map[string]any{"server": s.URL} }, user: map[string]any{"token": token}, field: "http:// is not https://"},
		{name: "certificate-authority", tls: true, cluster: func(s *countingServer) map[string]any {
			ca := filepath.Join(dir, "ca-"+strings.TrimPrefix(s.URL, "https://127.0.0.1:"))
			if err := os.WriteFile(ca, caPEM(s.Server), 0o600); err != nil {
				t.Fatal(err)
			}
			return map[string]any{"server": s.URL, "certificate-authority": ca}
		}, user: map[string]any{"token": token}, field: "clusters[].cluster.certificate-authority"},
		{name: "client-certificate and client-key", tls: true, user: map[string]any{"client-certificate": certFile, "client-key": keyFile}, field: "users[].user.client-certificate"},
		{name: "proxy-url", tls: true, cluster: func(s *countingServer) map[string]any {
			return map[string]any{"server": "https://kubernetes.default.svc", "certificate-authority-data": b64(caPEM(s.Server)), "proxy-url": "http://" + s.Listener.Addr().String()}
		}, user: map[string]any{"token": token}, field: "clusters[].cluster.proxy-url"},
		{name: "impersonation", tls: true, user: map[string]any{"token": token, "as": "system:admin"}, field: "users[].user.as"},
		{name: "impersonated groups", tls: true, user: map[string]any{"token": token, "as-groups": []any{"system:masters"}}, field: "users[].user.as-groups"},
		{name: "impersonated uid", tls: true, user: map[string]any{"token": token, "as-uid": "0"}, field: "users[].user.as-uid"},
		{name: "impersonated extra", tls: true, user: map[string]any{"token": token, "as-user-extra": map[string]any{"scopes": []any{"x"}}}, field: "users[].user.as-user-extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(marker)
			s := newCounting(t, tc.tls, nil)
			cluster := map[string]any{"server": s.URL}
			if tc.tls {
				cluster["certificate-authority-data"] = b64(caPEM(s.Server))
			}
			if tc.cluster != nil {
				cluster = tc.cluster(s)
			}
			m := remoteRun(t, kubeconfigOf(t, cluster, tc.user), "2s")
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, tc.field) {
				t.Errorf("%s %q, want Error naming %s", m.Phase, m.Message, tc.field)
			}
			if n := s.n.Load(); n != 0 {
				t.Errorf("%d requests reached the server the kubeconfig names", n)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the kubeconfig's exec command ran")
			}
		})
	}
}

// TestKubeconfigAccepted: a token or client certificate data, and the cluster's CA data, reach the
// server; its answer is the measurement's (here: no such Rollout).
func TestKubeconfigAccepted(t *testing.T) {
	cert, key := clientCert(t)
	for _, tc := range []struct {
		name string
		user map[string]any
		auth func(*http.Request) bool
	}{
		{"token", map[string]any{"token": token}, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }},
		{"client certificate data", map[string]any{"client-certificate-data": b64(cert), "client-key-data": b64(key)}, func(r *http.Request) bool {
			return r.TLS != nil && len(r.TLS.PeerCertificates) == 1 && r.TLS.PeerCertificates[0].Subject.CommonName == "reader"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var authed atomic.Int32
			s := newCounting(t, true, func(w http.ResponseWriter, r *http.Request) {
				if tc.auth(r) {
					authed.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"rollouts.argoproj.io \"checkout\" not found"}`)
			})
			m := remoteRun(t, kubeconfigOf(t, map[string]any{"server": s.URL, "certificate-authority-data": b64(caPEM(s.Server))}, tc.user), "2s")
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "Rollout shop/checkout not found in the cluster of the kubeconfig in Secret kargo-shop/workload") {
				t.Errorf("%s %q", m.Phase, m.Message)
			}
			if s.n.Load() == 0 || authed.Load() != s.n.Load() {
				t.Errorf("%d requests, %d with the kubeconfig's credentials", s.n.Load(), authed.Load())
			}
		})
	}
}

// TestRemoteAnswerNotQuoted: what a remote server answers is not copied into the measurement beyond
// its HTTP status.
func TestRemoteAnswerNotQuoted(t *testing.T) {
	const planted = "PLANTED-BY-THE-REMOTE-SERVER"
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"an error page", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, planted+" internal metadata of the network")
		}, "HTTP 500"},
		{"a Forbidden status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":%q}`, planted)
		}, "HTTP 403 Forbidden"},
		{"not an API answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"secret":%q}`, planted)
		}, "not a Kubernetes API response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCounting(t, true, tc.h)
			m := remoteRun(t, kubeconfigOf(t, map[string]any{"server": s.URL, "certificate-authority-data": b64(caPEM(s.Server))}, map[string]any{"token": token}), "2s")
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, tc.want) {
				t.Errorf("%s %q, want Error with %q", m.Phase, m.Message, tc.want)
			}
			if strings.Contains(measurementTexts(m), planted) {
				t.Errorf("the server's answer is in the measurement: %s", measurementTexts(m))
			}
		})
	}
}

// TestRemoteResponseBounded: a remote server's endless answer, on one line or on many, is an Error once
// one object passes MaxRemoteResponse; the plugin stops reading there, and its allocations stay within a
// few times that.
func TestRemoteResponseBounded(t *testing.T) {
	const size = 256 << 20
	for _, tc := range []struct {
		name  string
		chunk string
	}{
		{"one line", strings.Repeat("a", 1<<10)},
		{"many lines", strings.Repeat(`"a",`+"\n", 1<<8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var served atomic.Int64
			s := newCounting(t, true, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				chunk := []byte(strings.Repeat(tc.chunk, (1<<20)/len(tc.chunk)))
				n, _ := io.WriteString(w, `{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","padding":[`+"\n")
				served.Add(int64(n))
				for served.Load() < size {
					n, err := w.Write(chunk)
					served.Add(int64(n))
					if err != nil {
						return
					}
				}
				io.WriteString(w, `"a"]}`)
			})
			var before, after goruntime.MemStats
			goruntime.GC()
			goruntime.ReadMemStats(&before)
			m := remoteRun(t, kubeconfigOf(t, map[string]any{"server": s.URL, "certificate-authority-data": b64(caPEM(s.Server))}, map[string]any{"token": token}), "30s")
			goruntime.ReadMemStats(&after)
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "larger than 32 MiB") {
				t.Errorf("%s %q, want an Error naming the bound", m.Phase, m.Message)
			}
			// the server's writes stop once the client stops reading: what it wrote is the bound and
			// what the sockets' buffers held
			if got := served.Load(); got > 2*rolloutplugin.MaxRemoteResponse {
				t.Errorf("the server wrote %d MiB before the plugin stopped reading (bound %d MiB)", got>>20, rolloutplugin.MaxRemoteResponse>>20)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 6*rolloutplugin.MaxRemoteResponse {
				t.Errorf("the measurement allocated %d MiB (bound %d MiB)", alloc>>20, rolloutplugin.MaxRemoteResponse>>20)
			}
		})
	}
}

// TestAPITimeoutBounded: an apiTimeout that would hold one of the analysis controller's threads for a
// year is refused, naming the field.
func TestAPITimeoutBounded(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{{"60s", true}, {"1m0s", true}, {"61s", false}, {"8760h", false}} {
		_, err := rolloutplugin.ParseConfig([]byte(`{"name":"checkout","namespace":"shop","apiTimeout":"` + tc.v + `"}`))
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), `apiTimeout "`+tc.v+`"`)) {
			t.Errorf("apiTimeout %s: %v", tc.v, err)
		}
	}
	m := remoteRun(t, kubeconfigFor("https://127.0.0.1:1"), "8760h")
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "apiTimeout") {
		t.Errorf("%s %q", m.Phase, m.Message)
	}
}

// TestOtherNamespaceNeedsPolicy: a run in team-a naming team-b-private/checkout, read with the
// controller's identity, is an Error that names the policy to change, and reads and watches nothing there.
func TestOtherNamespaceNeedsPolicy(t *testing.T) {
	f := loadFrame(t, "step-successful")
	ro := deepCopyMap(t, f.Rollout)
	ro["metadata"].(map[string]any)["namespace"] = "team-b-private"
	local, watches := fakeClient(ro), fakeClient(ro)
	p := serve(t, rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil },
		LocalWatch: func() (dynamic.Interface, error) { return watches, nil }, Watch: &watchcache.Options{}}))
	run := analysisRun()
	run.Namespace = "team-a"
	m := p.Run(run, metric(`{"name":"checkout","namespace":"team-b-private"}`))
	if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "--allow-namespace-pair=team-a=team-b-private") || !strings.Contains(m.Message, "argo-rollouts-config") {
		t.Errorf("%s %q, want an Error naming the policy", m.Phase, m.Message)
	}
	time.Sleep(200 * time.Millisecond) // informers would have listed by now
	for _, c := range []*dynamicfake.FakeDynamicClient{local, watches} {
		for _, a := range c.Actions() {
			t.Errorf("the plugin called %s %s in %s", a.GetVerb(), a.GetResource().Resource, a.GetNamespace())
		}
	}
}

// TestSecretNotLogged: a Secret-sourced argument templated into the config's namespace appears in no
// line of the plugin's log, the watches' included.
func TestSecretNotLogged(t *testing.T) {
	ns := "s3cr3t-namespace-never-printed"
	local := fakeClient()
	var watchClients atomic.Int32
	log := &syncLog{}
	p := serve(t, rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil },
		LocalWatch: func() (dynamic.Interface, error) {
			watchClients.Add(1)
			return failingLists(), nil
		}, Watch: &watchcache.Options{}, Log: log}))
	run := analysisRun(v1alpha1.Argument{Name: "ns", Value: &ns, ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: "s", Key: "k"}}})
	run.Namespace = ns // the run's own namespace: the policy lets it read there
	cfg := metric(`{"name":"checkout","namespace":"` + ns + `"}`)
	m := p.Run(run, cfg)
	m = p.Resume(run, cfg, m)
	// a failed watch logs within a moment
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(log.String(), "watching again") {
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(log.String(), ns) || strings.Contains(measurementTexts(m), ns) {
		t.Errorf("the Secret's value is in the log or measurement:\n%s\n%s", log.String(), m.Message)
	}
	if n := watchClients.Load(); n != 0 {
		t.Errorf("a namespace named by a Secret was watched (%d watch clients)", n)
	}
	if !strings.Contains(log.String(), "*****") {
		t.Errorf("the measurement's failure was not logged, redacted:\n%s", log.String())
	}
}

// failingLists is a client whose every list is refused, so that a watch fails and logs.
func failingLists() *dynamicfake.FakeDynamicClient {
	c := fakeClient()
	c.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: a.GetResource().Resource}, "", errForbiddenWatch)
	})
	return c
}

// TestClientLogsSilenced: client-go's klog, which prints request URLs (a Secret-named namespace) and
// remote answers, writes nothing once the command silenced it.
func TestClientLogsSilenced(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	rolloutplugin.SilenceClientLogs()
	klog.Errorf("GET https://127.0.0.1/apis/argoproj.io/v1alpha1/namespaces/%s/rollouts/checkout", token)
	klog.Flush()
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Errorf("klog wrote: %s", out)
	}
}
