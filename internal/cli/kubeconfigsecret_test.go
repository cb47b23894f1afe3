package cli_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/plugin/remote"
)

const exampleDir = "testdata/kubeconfig-secret"

type secretManifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Type       string `json:"type"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string][]byte `json:"data"`
}

func parseSecret(t *testing.T, out string) secretManifest {
	t.Helper()
	var s secretManifest
	if err := yaml.UnmarshalStrict([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return s
}

// TestKubeconfigSecretPassesPluginCheck: the Secret holds, under the key generate --format kargo names,
// a kubeconfig the plugin accepts (package remote's Config, the plugin's own check) of the server, the
// CA and the token given, and says when the token expires.
func TestKubeconfigSecretPassesPluginCheck(t *testing.T) {
	token, _ := os.ReadFile(filepath.Join(exampleDir, "token"))
	ca, _ := os.ReadFile(filepath.Join(exampleDir, "ca.crt"))
	for _, key := range []string{"", "config"} {
		args := []string{"kubeconfig", "--kubeconfig-secret", "shop-workload", "--project", "kargo-shop",
			"--server", "https://workload.example:6443", "--ca-file", filepath.Join(exampleDir, "ca.crt"), "--token-file", filepath.Join(exampleDir, "token")}
		want := "kubeconfig"
		if key != "" {
			args, want = append(args, "--kubeconfig-key", key), key
		}
		code, out, errOut := runIn(t, nil, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		s := parseSecret(t, out)
		if s.Kind != "Secret" || s.Metadata.Name != "shop-workload" || s.Metadata.Namespace != "kargo-shop" || s.Type != "Opaque" {
			t.Errorf("not the Secret asked for: %+v", s)
		}
		kc, ok := s.Data[want]
		if !ok || len(s.Data) != 1 {
			t.Fatalf("data keys %v, want only %q", keys(s.Data), want)
		}
		cfg, err := remote.Config(kc)
		if err != nil {
			t.Fatalf("the plugin refuses the kubeconfig: %v\n%s", err, kc)
		}
		if cfg.Host != "https://workload.example:6443" || cfg.BearerToken != strings.TrimSpace(string(token)) || string(cfg.CAData) != string(ca) {
			t.Errorf("kubeconfig: host %q, token ok %v, CA ok %v", cfg.Host, cfg.BearerToken == strings.TrimSpace(string(token)), string(cfg.CAData) == string(ca))
		}
		if got := s.Metadata.Annotations[cli.AnnotationTokenExpires]; got != "2030-01-01T00:00:00Z" {
			t.Errorf("expiry annotation %q, want the token's exp 2030-01-01T00:00:00Z", got)
		}
		if strings.Contains(out, strings.TrimSpace(string(token))) {
			t.Error("the token is in the manifest in clear (it belongs base64'd in data)")
		}
		if !strings.Contains(out, "#   analysis-health kubeconfig --kubeconfig-secret shop-workload --project kargo-shop") {
			t.Errorf("no renewal line:\n%s", out)
		}
	}
}

// TestKubeconfigSecretRefuses: what the plugin would refuse, or what names no token, is refused before
// anything is written, with exit status 2 and the flag to fix.
func TestKubeconfigSecretRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "two")
	if err := os.WriteFile(two, []byte("a b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ca, tok := filepath.Join(exampleDir, "ca.crt"), filepath.Join(exampleDir, "token")
	base := []string{"kubeconfig", "--kubeconfig-secret", "w", "--project", "kargo-shop"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--server", "http://workload:6443", "--ca-file", ca, "--token-file", tok}, "--server \"http://workload:6443\" is http://"},
		{[]string{"--server", "workload:6443", "--ca-file", ca, "--token-file", tok}, "--server"},
		{[]string{"--ca-file", ca, "--token-file", tok}, "--server is required"},
		{[]string{"--server", "https://u:p@workload:6443", "--ca-file", ca, "--token-file", tok}, "--server"},
		{[]string{"--server", "https://workload:6443", "--token-file", tok}, "--ca-file is required"},
		{[]string{"--server", "https://workload:6443", "--ca-file", bad, "--token-file", tok}, "--ca-file holds no PEM certificate"},
		{[]string{"--server", "https://workload:6443", "--ca-file", filepath.Join(dir, "missing"), "--token-file", tok}, "--ca-file"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca}, "give one of --token-file and --token-from-serviceaccount"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-file", empty}, "is empty"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-file", two}, "--token-file must hold one token"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-from-serviceaccount", "shop"}, "is not NAMESPACE/NAME"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-from-serviceaccount", "shop/r", "--duration", "1m"}, "--duration"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-file", tok, "--context", "x"}, "go with --token-from-serviceaccount"},
		{[]string{"--server", "https://workload:6443", "--ca-file", ca, "--token-file", tok, "--kubeconfig-key", "a/b"}, "--kubeconfig-key"},
	} {
		code, out, errOut := runIn(t, nil, append(append([]string{}, base...), c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, out, errOut, c.want)
		}
	}
	if code, _, errOut := runIn(t, nil, "kubeconfig-secret", "--project", "kargo-shop", "--server", "https://w", "--ca-file", ca, "--token-file", tok); code != 2 || !strings.Contains(errOut, "--kubeconfig-secret is required") {
		t.Errorf("no name: exit %d %q", code, errOut)
	}
	if code, _, errOut := runIn(t, nil, "kubeconfig", "--kubeconfig-secret", "w", "--server", "https://w", "--ca-file", ca, "--token-file", tok); code != 2 || !strings.Contains(errOut, "--project is required") {
		t.Errorf("no project: exit %d %q", code, errOut)
	}
}

// tokenServer answers TokenRequests for shop/analysis-health-rollout-reader to the admin's bearer, as
// kube-apiserver does (POST .../serviceaccounts/NAME/token, 201 with status.token).
func tokenServer(t *testing.T, admin string) (*httptest.Server, *[]map[string]any) {
	var got []map[string]any
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+admin {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/shop/serviceaccounts/analysis-health-rollout-reader/token" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"serviceaccounts %q not found","reason":"NotFound","code":404}`, r.URL.Path)
			return
		}
		var tr map[string]any
		_ = json.NewDecoder(r.Body).Decode(&tr)
		got = append(got, tr)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","status":{"token":"minted-token-0123456789","expirationTimestamp":"2026-12-14T00:00:00Z"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func caOf(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// TestKubeconfigSecretFromServiceAccount: --token-from-serviceaccount makes the TokenRequest with the
// workload cluster's kubeconfig (its context's server, CA and user), whose server and CA become the
// Secret's unless --server or --ca-file say otherwise; a user that runs a program is refused with the
// kubectl way.
func TestKubeconfigSecretFromServiceAccount(t *testing.T) {
	srv, got := tokenServer(t, "admin-token")
	dir := t.TempDir()
	caPath := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caPath, caOf(srv), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "config")
	// two contexts, the CA as a file relative to the kubeconfig, as kind and kubeadm write them
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: other
clusters:
- name: workload
  cluster: {server: %q, certificate-authority: ca.pem}
- name: other
  cluster: {server: "https://other.invalid:6443"}
users:
- name: admin
  user: {token: admin-token}
- name: cloud
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}
contexts:
- name: workload
  context: {cluster: workload, user: admin}
- name: other
  context: {cluster: other, user: admin}
- name: cloud
  context: {cluster: workload, user: cloud}
`, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "secret.yaml")
	code, _, errOut := runIn(t, nil, "kubeconfig", "--kubeconfig-secret", "shop-workload", "--project", "kargo-shop",
		"--token-from-serviceaccount", "shop/analysis-health-rollout-reader", "--kubeconfig", kubeconfig, "--context", "workload", "--duration", "24h", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(*got) != 1 {
		t.Fatalf("%d TokenRequests, want 1", len(*got))
	}
	spec, _ := (*got)[0]["spec"].(map[string]any)
	if (*got)[0]["kind"] != "TokenRequest" || spec["expirationSeconds"] != float64(86400) {
		t.Errorf("TokenRequest %v, want kind TokenRequest, expirationSeconds 86400", (*got)[0])
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("--out: %v %v, want mode 0600", fi, err)
	}
	raw, _ := os.ReadFile(out)
	s := parseSecret(t, string(raw))
	cfg, err := remote.Config(s.Data["kubeconfig"])
	if err != nil {
		t.Fatalf("the plugin refuses the kubeconfig: %v", err)
	}
	if cfg.Host != srv.URL || cfg.BearerToken != "minted-token-0123456789" || string(cfg.CAData) != string(caOf(srv)) {
		t.Errorf("kubeconfig host %q token %q, CA the kubeconfig's: %v", cfg.Host, cfg.BearerToken, string(cfg.CAData) == string(caOf(srv)))
	}
	if s.Metadata.Annotations[cli.AnnotationTokenExpires] != "2026-12-14T00:00:00Z" {
		t.Errorf("expiry %q", s.Metadata.Annotations[cli.AnnotationTokenExpires])
	}
	// --server says how the control plane reaches the workload cluster, when that is another address
	code, stdout, errOut := runIn(t, nil, "kubeconfig", "--kubeconfig-secret", "shop-workload", "--project", "kargo-shop",
		"--token-from-serviceaccount", "shop/analysis-health-rollout-reader", "--kubeconfig", kubeconfig, "--context", "workload", "--server", "https://workload.internal:6443")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if cfg, err := remote.Config(parseSecret(t, stdout).Data["kubeconfig"]); err != nil || cfg.Host != "https://workload.internal:6443" {
		t.Errorf("--server not used: %v %v", cfg, err)
	}
	// a user that runs a program: the kubectl way
	code, _, errOut = runIn(t, nil, "kubeconfig", "--kubeconfig-secret", "w", "--project", "kargo-shop",
		"--token-from-serviceaccount", "shop/analysis-health-rollout-reader", "--kubeconfig", kubeconfig, "--context", "cloud")
	if code == 0 || !strings.Contains(errOut, "kubectl create token") || !strings.Contains(errOut, "--token-file") {
		t.Errorf("exec user: exit %d %q", code, errOut)
	}
	// a ServiceAccount the cluster does not hold: the API server's answer
	code, _, errOut = runIn(t, nil, "kubeconfig", "--kubeconfig-secret", "w", "--project", "kargo-shop",
		"--token-from-serviceaccount", "shop/nobody", "--kubeconfig", kubeconfig, "--context", "workload")
	if code == 0 || !strings.Contains(errOut, "404 Not Found") {
		t.Errorf("missing ServiceAccount: exit %d %q", code, errOut)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
