package main_test

import (
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/argoproj/argo-rollouts/metricproviders/plugin/client"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	goPlugin "github.com/hashicorp/go-plugin"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/analysis-health/analysis-health/internal/dist"
	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// rootsEnv, set, turns this test binary into the program the Rollouts controller starts as a plugin:
// it moves into the empty root filesystem prepared for that plugin and execs the binary there.
const rootsEnv = "ANALYSIS_HEALTH_TEST_EMPTY_ROOTS"

// pluginInRoot is the binary's path inside an empty root: the only file there.
const pluginInRoot = "/plugin"

func TestMain(m *testing.M) {
	if roots := os.Getenv(rootsEnv); roots != "" {
		os.Exit(enterEmptyRoot(roots))
	}
	os.Exit(m.Run())
}

// enterEmptyRoot chroots into roots/<the plugin's folder below plugin-bin> and replaces itself with the
// binary there, so the process the controller talks to is the plugin alone in that root: no loader, no
// libc, no shell, as in distroless/static. Exit 3: chroot refused; 4: the kernel could not exec it.
func enterEmptyRoot(roots string) int {
	root := filepath.Join(roots, filepath.Base(filepath.Dir(os.Args[0])))
	if err := syscall.Chroot(root); err != nil {
		fmt.Fprintln(os.Stderr, "chroot:", err)
		return 3
	}
	if err := os.Chdir("/"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	err := syscall.Exec(pluginInRoot, []string{pluginInRoot}, os.Environ())
	fmt.Fprintf(os.Stderr, "exec %s in the empty root %s: %v\n", pluginInRoot, root, err)
	return 4
}

// TestStartsInEmptyRoot runs the release build of the plugin (internal/dist, as `make dist` builds it)
// in an empty root filesystem and completes the go-plugin handshake with Argo Rollouts' own plugin
// client (metricproviders/plugin/client.GetMetricPlugin: the plugin found by name in argo-rollouts-config
// below plugin-bin/, handshake, Dispense, InitPlugin, Ping), then measures through it. The same steps
// with a dynamically linked build of the same code (what `go build` gives with cgo) must fail: the kernel
// finds no ELF interpreter in the root. TestBinary shows that build handshakes where it has a libc.
func TestStartsInEmptyRoot(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the empty-root proof runs the linux/amd64 release build: this is " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	exe, err := os.Executable()
	must(t, err)
	base := t.TempDir()
	roots := filepath.Join(base, "roots")
	probe := exec.Command(exe)
	probe.Env = append(os.Environ(), rootsEnv+"="+roots)
	must(t, os.MkdirAll(filepath.Join(roots, "probe"), 0o755))
	probe.Args[0] = filepath.Join(base, "probe", "x")
	if err := probe.Run(); exitCode(err) == 3 {
		t.Skip("chroot is not allowed here (needs root or CAP_SYS_CHROOT)")
	}

	static, err := dist.Build(context.Background(), dist.Options{Dir: "../..", Out: filepath.Join(base, "dist"), Version: "v0.0.0-empty-root",
		Targets: []dist.Target{{Cmd: dist.Plugin, GOOS: "linux", GOARCH: "amd64"}}})
	if err != nil {
		t.Fatal(err)
	}
	dynamic := filepath.Join(base, "dynamic-build")
	build := exec.Command("go", "build", "-o", dynamic, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if !hasInterpreter(t, dynamic) {
		t.Fatal("the cgo build is statically linked: no C toolchain here, so the dynamic case proves nothing")
	}
	if hasInterpreter(t, static[0].Path) {
		t.Fatalf("%s is dynamically linked", static[0].Path)
	}

	// The plugin's socket goes to $TMPDIR (go-plugin): the root's only folder, reachable from this
	// process at the same path through a symlink, as the controller's /tmp is shared with its plugins.
	sock := filepath.Join(base, "sock")
	t.Setenv("TMPDIR", sock)
	t.Setenv("KUBECONFIG", "")
	t.Setenv(rootsEnv, roots)
	// Plugin name -> binary; each plugin gets a root of its own, named by its namespace part. The release
	// build goes by the name the generated argo-rollouts-config uses.
	cases := map[string]string{rolloutplugin.Name: static[0].Path, "dynamic-build/rollout-analysis": dynamic}
	work := filepath.Join(base, "controller")
	var items []string
	for name, bin := range cases {
		folder, _, _ := strings.Cut(name, "/")
		root := filepath.Join(roots, folder)
		must(t, os.MkdirAll(filepath.Join(root, sock), 0o755))
		raw, err := os.ReadFile(bin)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(root, pluginInRoot), raw, 0o755))
		// The controller finds a plugin at plugin-bin/<namespace>/<name> below its working directory
		// (utils/plugin.GetPluginInfo); there is this test binary, which enters the plugin's root.
		must(t, os.MkdirAll(filepath.Join(work, defaults.DefaultRolloutPluginFolder, folder), 0o755))
		must(t, os.Symlink(exe, filepath.Join(work, defaults.DefaultRolloutPluginFolder, name)))
		items = append(items, "- name: "+name+"\n  location: file://"+bin+"\n")
	}
	staticFolder, _, _ := strings.Cut(rolloutplugin.Name, "/")
	must(t, os.Symlink(filepath.Join(roots, staticFolder, sock), sock))
	t.Chdir(work)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: defaults.Namespace()},
		Data: map[string]string{"metricProviderPlugins": strings.Join(items, "")}}
	// NewSimpleClientset: the root module builds against client-go v0.29.3, Argo Rollouts v1.8.5's own pin.
	if _, err := config.InitializeConfig(fake.NewSimpleClientset(cm), defaults.DefaultRolloutsConfigMapName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(goPlugin.CleanupClients)

	metric := func(name string) v1alpha1.Metric {
		return v1alpha1.Metric{Name: "rollout-analysis", Provider: v1alpha1.MetricProvider{
			Plugin: map[string]json.RawMessage{name: json.RawMessage(`{"name":"checkout","namespace":"shop","apiTimeout":"2s"}`)}}}
	}
	if _, err := client.GetMetricPlugin(metric("dynamic-build/rollout-analysis")); err == nil {
		t.Error("the dynamically linked build completed the handshake in an empty root")
	} else {
		t.Logf("dynamically linked build, as expected: %v", err)
	}

	m := metric(rolloutplugin.Name)
	p, err := client.GetMetricPlugin(m)
	if err != nil {
		t.Fatalf("the release build in an empty root: %v", err)
	}
	if got := p.Type(); got != "RolloutAnalysis" {
		t.Errorf("Type %q", got)
	}
	// Served from inside the root: no kubeconfig and no service account there, which the measurement says
	// (with a kubeconfig on this machine's $HOME the plugin would get further).
	ar := &v1alpha1.AnalysisRun{}
	ar.Namespace, ar.Name = "shop", "checkout-1"
	if got := p.Run(ar, m); got.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(got.Message, "cannot build a client for the Rollouts controller's cluster") {
		t.Errorf("Run: %s %q, want an Error: no client for the controller's cluster in the empty root", got.Phase, got.Message)
	}
}

func hasInterpreter(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	must(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
