package main_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/metricproviders/plugin/rpc"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/hashicorp/go-hclog"
	goPlugin "github.com/hashicorp/go-plugin"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// build compiles this command into a temporary folder.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rollouts-plugin-metric-analysis-health")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary starts the built binary the way the Rollouts controller does
// (metricproviders/plugin/client/client.go startPluginSystem: exec.Command, go-plugin handshake with the
// metricprovider magic cookie, net/rpc) and calls every method through the controller's RPC client. The
// controller cluster's kubeconfig points at a closed port.
func TestBinary(t *testing.T) {
	bin := build(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://`+addr+`"}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// the platform admin's policy, as argo-rollouts-config's args give it
	cmd := exec.Command(bin, "--allow-namespace-pair=kargo-shop=shop")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	plugins := map[string]goPlugin.Plugin{rolloutplugin.PluginMapKey: &rpc.RpcMetricProviderPlugin{}}
	client := goPlugin.NewClient(&goPlugin.ClientConfig{HandshakeConfig: rolloutplugin.Handshake, Plugins: plugins, Cmd: cmd,
		Managed: true, Logger: hclog.NewNullLogger()})
	defer client.Kill()
	proto, err := client.Client()
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	raw, err := proto.Dispense(rolloutplugin.PluginMapKey)
	if err != nil {
		t.Fatal(err)
	}
	p := raw.(rpc.MetricProviderPlugin)
	if err := p.InitPlugin(); err.HasError() {
		t.Fatalf("InitPlugin: %v", err)
	}
	if got := p.Type(); got != "RolloutAnalysis" {
		t.Errorf("Type %q", got)
	}
	ar := &v1alpha1.AnalysisRun{}
	ar.Namespace, ar.Name = "kargo-shop", "prod.x.y"
	metric := func(cfg string) v1alpha1.Metric {
		m := v1alpha1.Metric{Name: "rollout-analysis", Provider: v1alpha1.MetricProvider{Plugin: map[string]json.RawMessage{}}}
		if cfg != "" {
			m.Provider.Plugin[rolloutplugin.Name] = json.RawMessage(cfg)
		}
		return m
	}
	for _, tc := range []struct{ config, message string }{
		{"", "failed to run via plugin: metric has no provider.plugin"},
		{`{"name":"checkout"}`, "namespace is required"},
		{`{"name":"checkout","namespace":"shop","apiTimeout":"2s"}`, "Rollout shop/checkout: cannot reach the Rollouts controller's cluster"},
		{`{"name":"checkout","namespace":"team-b-private"}`, `add "--allow-namespace-pair=kargo-shop=team-b-private" to the plugin's args`},
	} {
		m := p.Run(ar, metric(tc.config))
		if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, tc.message) || !json.Valid([]byte(m.Value)) {
			t.Errorf("Run(%s): %s %q %s, want Error containing %q", tc.config, m.Phase, m.Message, m.Value, tc.message)
		}
	}
	if err := p.GarbageCollect(ar, metric(""), 10); err.HasError() {
		t.Errorf("GarbageCollect: %v", err)
	}
	if md := p.GetMetadata(metric("")); md["provider"] != rolloutplugin.Name {
		t.Errorf("GetMetadata %v", md)
	}
	if client.Exited() {
		t.Error("the plugin process exited")
	}
}

// TestCopyTo: what the generated init container runs (generator PluginImageBinary --copy-to LOCATION)
// leaves an executable copy of the binary at the location and nothing else; a folder that cannot be
// written is an error naming it, with a non-zero exit and no file left behind.
func TestCopyTo(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "rollouts-plugin-metric-analysis-health")
	if out, err := exec.Command(bin, "--copy-to", dst).CombinedOutput(); err != nil {
		t.Fatalf("--copy-to: %v: %s", err, out)
	}
	want, _ := os.ReadFile(bin)
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the copy differs from the binary (%d and %d bytes): %v", len(got), len(want), err)
	}
	if info, _ := os.Stat(dst); info.Mode().Perm()&0o111 == 0 {
		t.Errorf("the copy is not executable: %v", info.Mode())
	}
	if out, err := exec.Command(dst, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "rollouts-plugin-metric-analysis-health") {
		t.Errorf("the copy does not run: %v %s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the copy alone", len(entries))
	}
	missing := filepath.Join(dir, "no-such-folder", "p")
	out, err := exec.Command(bin, "--copy-to", missing).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), missing) {
		t.Errorf("--copy-to into a missing folder: %v: %s", err, out)
	}
}

// TestNotAPluginHost: started by hand, the binary says what it is and exits 1.
func TestNotAPluginHost(t *testing.T) {
	out, err := exec.Command(build(t)).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "metric-provider plugin") {
		t.Fatalf("%v: %s", err, out)
	}
}

// TestHelp: --help and its spellings print the usage on stdout and exit 0; a bad flag prints the error
// and the usage on stderr and exits 2; --version prints the version.
func TestHelp(t *testing.T) {
	bin := build(t)
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // substrings; "" wants the stream empty
		usageOnStdout  bool
	}{
		{[]string{"--help"}, 0, "Usage:", "", true},
		{[]string{"-h"}, 0, "Usage:", "", true},
		{[]string{"-help"}, 0, "Usage:", "", true},
		{[]string{"--bogus"}, 2, "", "flag provided but not defined: -bogus", false},
		{[]string{"--version"}, 0, "rollouts-plugin-metric-analysis-health ", "", false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Args[0] = "./plugin-bin/analysis-health/rollout-analysis"
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, s := range []struct {
				name, got, want string
			}{{"stdout", stdout.String(), tc.stdout}, {"stderr", stderr.String(), tc.stderr}} {
				if s.want == "" && s.got != "" || !strings.Contains(s.got, s.want) {
					t.Errorf("%s %q, want %q", s.name, s.got, s.want)
				}
			}
			if tc.usageOnStdout {
				for _, want := range []string{rolloutplugin.Name, "  --kubeconfig FILE\n", "  --copy-to PATH\n", "  --version\n",
					"https://github.com/analysis-health/analysis-health/blob/main/docs/kargo.md"} {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("usage lacks %q:\n%s", want, stdout.String())
					}
				}
				// The usage names the command, not the path it was started by; flags are spelled --name.
				if !strings.HasPrefix(stdout.String(), "rollouts-plugin-metric-analysis-health is ") || strings.Contains(stdout.String(), "\n  -copy-to") ||
					strings.Contains(stdout.String(), " docs/kargo.md") {
					t.Errorf("usage:\n%s", stdout.String())
				}
			}
			if code == 2 && !strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("a bad flag should show the usage on stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestAnalysisHealthStaysLight: the CLI binary's import graph has no Kubernetes client, go-plugin or
// Argo Rollouts code; only this plugin binary has.
func TestAnalysisHealthStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../analysis-health").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"k8s.io/client-go", "github.com/hashicorp/go-plugin", "github.com/argoproj/", "rolloutplugin"} {
			if strings.HasPrefix(pkg, heavy) || strings.HasSuffix(pkg, "/"+heavy) {
				t.Errorf("cmd/analysis-health imports %s", pkg)
			}
		}
	}
}
