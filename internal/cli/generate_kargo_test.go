package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

var zeroSHA = strings.Repeat("0", 64)

func TestGenerateKargoUsage(t *testing.T) {
	out := func() string { return filepath.Join(t.TempDir(), "kargo") }
	https := "https://example.com/rollouts-plugin-metric-analysis-health"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no --out", []string{"--plugin-location", https, "--plugin-sha256", zeroSHA}, "--out DIR"},
		{"no --plugin-location", []string{"--out", out()}, "needs --plugin-location"},
		{"https without sha256", []string{"--out", out(), "--plugin-location", https}, "needs the binary's sha256"},
		{"https without sha256 names the flags", []string{"--out", out(), "--plugin-location", https}, "give it with --plugin-sha256 HEX, or the binary with --plugin-file FILE"},
		{"bad sha256", []string{"--out", out(), "--plugin-location", https, "--plugin-sha256", "deadbeef"}, "not 64 lower-case hex digits"},
		{"bad sha256 names the flags", []string{"--out", out(), "--plugin-location", https, "--plugin-sha256", "deadbeef"}, `--plugin-sha256 "deadbeef" is not 64 lower-case hex digits (the binary's SHA-256; or give the binary with --plugin-file)`},
		{"unsupported scheme", []string{"--out", out(), "--plugin-location", "oci://x/y"}, "not an http://, https:// or file:// URL"},
		{"rollout without namespace", []string{"--out", out(), "--plugin-location", "file:///p", "--rollout", "checkout"}, "--rollout and --namespace go together"},
		{"namespace without rollout", []string{"--out", out(), "--plugin-location", "file:///p", "--namespace", "shop"}, "--rollout and --namespace go together"},
		{"both sha256 and file", []string{"--out", out(), "--plugin-location", https, "--plugin-sha256", zeroSHA, "--plugin-file", "x"}, "not both"},
		{"key without secret", []string{"--out", out(), "--plugin-location", "file:///p", "--kubeconfig-key", "k"}, "needs the kubeconfig Secret's name"},
		{"bad project", []string{"--out", out(), "--plugin-location", "file:///p", "--project", "Kargo_Shop"}, "not a valid namespace name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(append([]string{"generate", "--format", "kargo", "--rollouts-values", "none"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	t.Run("kargo flag with another format", func(t *testing.T) {
		code, _, stderr := run("generate", "--format", "patch", "--project", "shop")
		if code != 2 || !strings.Contains(stderr, "--project only applies to --format kargo") {
			t.Fatalf("exit %d %q", code, stderr)
		}
	})
}

// The folder holds exactly what the generator renders for the same options; --plugin-file hashes the file.
// TestFlagsThatDoNotApply: every flag that a format ignores is refused with that format, the same way
// for the kargo flags and the others.
func TestFlagsThatDoNotApply(t *testing.T) {
	kargo := []string{"--format", "kargo", "--rollouts-values", "none", "--plugin-location", "file:///p", "--out", filepath.Join(t.TempDir(), "k")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "helm", "--project", "x"}, "--project only applies to --format kargo"},
		{[]string{"--format", "helm", "--argocd-name", "gitops"}, "--argocd-name only applies to --format operator, operator-json6902"},
		{[]string{"--format", "patch", "--argocd-name", "gitops"}, "--argocd-name only applies to --format operator"},
		{append(kargo, "--argocd-name", "gitops"), "--argocd-name only applies to --format operator"},
		{append(kargo, "--kinds", "Rollout"), "--kinds only applies to --format argocd-cm"},
		{append(kargo, "--actions=false"), "--actions only applies to --format argocd-cm"},
		{append(kargo, "--block-bypass-on-failed-analysis=false"), "--block-bypass-on-failed-analysis only applies to --format argocd-cm"},
		{append(kargo, "--argocd-version", "v3.2"), "--argocd-version only applies to --format argocd-cm"},
		{[]string{"--format", "helm", "--remove"}, "--remove only applies to --format patch"},
	} {
		code, stdout, stderr := run(append([]string{"generate"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d %q %q, want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if code, _, stderr := run("generate", "--format", "operator", "--argocd-name", "gitops"); code != 0 {
		t.Errorf("--format operator --argocd-name: exit %d %s", code, stderr)
	}
}

// TestGenerateKargoInconclusive: --inconclusive degraded reaches the plugin's config, as the plugin
// itself parses it, so the verification and the scripts judge an inconclusive analysis alike.
func TestGenerateKargoInconclusive(t *testing.T) {
	for _, tc := range []struct {
		flag []string
		want string
	}{{nil, ""}, {[]string{"--inconclusive", "suspended"}, ""}, {[]string{"--inconclusive", "degraded"}, "degraded"}} {
		dir := filepath.Join(t.TempDir(), "kargo")
		args := append([]string{"generate", "--format", "kargo", "--rollouts-values", "none", "--plugin-location", "file:///p", "--out", dir}, tc.flag...)
		if code, _, stderr := run(args...); code != 0 {
			t.Fatalf("%v: exit %d %s", tc.flag, code, stderr)
		}
		raw, err := os.ReadFile(filepath.Join(dir, generator.KargoTemplateFile))
		if err != nil {
			t.Fatal(err)
		}
		var tmpl v1alpha1.ClusterAnalysisTemplate
		if err := yaml.UnmarshalStrict(raw, &tmpl); err != nil {
			t.Fatal(err)
		}
		// The plugin's own config type; ParseConfig would refuse the template's {{args.…}} placeholders,
		// which only the AnalysisRun fills.
		var cfg rolloutplugin.Config
		if err := json.Unmarshal(tmpl.Spec.Metrics[0].Provider.Plugin[rolloutplugin.Name], &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Inconclusive != tc.want {
			t.Errorf("%v: the plugin reads inconclusive %q, want %q", tc.flag, cfg.Inconclusive, tc.want)
		}
		if wantFlag := tc.want != ""; strings.Contains(string(raw), "--inconclusive degraded") != wantFlag {
			t.Errorf("%v: the regenerate command in the header misses the flag:\n%s", tc.flag, raw)
		}
	}
}

// TestGenerateKargoNoAnalysis: --no-analysis reaches the plugin's config as the plugin parses it, the
// default leaves the field out (the plugin's default is the same), the header's regenerate command keeps
// the flag, and a value that is not a policy is a usage error.
func TestGenerateKargoNoAnalysis(t *testing.T) {
	for _, tc := range []struct {
		flag []string
		want string
	}{{nil, ""}, {[]string{"--no-analysis", "successful"}, ""}, {[]string{"--no-analysis", "inconclusive"}, "inconclusive"},
		{[]string{"--no-analysis", "Failed"}, "failed"}} {
		dir := filepath.Join(t.TempDir(), "kargo")
		args := append([]string{"generate", "--format", "kargo", "--rollouts-values", "none", "--project", "shop", "--plugin-location", "file:///p", "--out", dir}, tc.flag...)
		if code, _, stderr := run(args...); code != 0 {
			t.Fatalf("%v: exit %d %s", tc.flag, code, stderr)
		}
		raw, err := os.ReadFile(filepath.Join(dir, generator.KargoTemplateFile))
		if err != nil {
			t.Fatal(err)
		}
		var tmpl v1alpha1.AnalysisTemplate
		if err := yaml.UnmarshalStrict(raw, &tmpl); err != nil {
			t.Fatal(err)
		}
		var cfg rolloutplugin.Config
		if err := json.Unmarshal(tmpl.Spec.Metrics[0].Provider.Plugin[rolloutplugin.Name], &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.NoAnalysis != tc.want {
			t.Errorf("%v: the plugin reads noAnalysis %q, want %q", tc.flag, cfg.NoAnalysis, tc.want)
		}
		// the config, with the Stage's args filled as Kargo would, is one the plugin accepts
		cfg.Name, cfg.Namespace, cfg.Revision, cfg.Image = "checkout", "shop", "", ""
		filled, _ := json.Marshal(cfg)
		if _, err := rolloutplugin.ParseConfig(filled); err != nil {
			t.Errorf("%v: %v", tc.flag, err)
		}
		if wantFlag := tc.want != ""; strings.Contains(string(raw), "--no-analysis "+tc.want+" --out") != wantFlag {
			t.Errorf("%v: the regenerate command in the header:\n%s", tc.flag, raw)
		}
		if tc.want == "" && !strings.Contains(string(raw), "is Successful, the default") {
			t.Errorf("the header does not name the default:\n%s", raw)
		}
	}
	code, stdout, stderr := run("generate", "--format", "kargo", "--rollouts-values", "none", "--plugin-location", "file:///p", "--out", filepath.Join(t.TempDir(), "k"), "--no-analysis", "degraded")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `"degraded" is not one of successful, inconclusive, failed`) {
		t.Errorf("--no-analysis degraded: exit %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := run("generate", "--format", "helm", "--no-analysis", "failed"); code != 2 || !strings.Contains(stderr, "--no-analysis only applies to --format kargo") {
		t.Errorf("--no-analysis with --format helm: exit %d %q", code, stderr)
	}
}

func TestGenerateKargo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(bin, linuxELF(""), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kargo")
	code, stdout, stderr := run("generate", "--format", "kargo", "--rollouts-values", "none", "--project", "kargo-shop", "--rollout", "checkout", "--namespace", "shop",
		"--plugin-location", "https://example.com/p", "--plugin-file", bin, "--kubeconfig-secret", "workload", "--out", dir)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "wrote "+dir) {
		t.Fatalf("exit %d %q %q", code, stdout, stderr)
	}
	files, err := generator.GenerateKargo(generator.KargoOptions{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop",
		PluginLocation: "https://example.com/p", PluginSHA256: generator.PluginSHA256Of(linuxELF("")),
		KubeconfigSecret: "workload", Version: cli.Version})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, f := range files {
		want = append(want, f.Path)
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != string(f.Data) {
			t.Errorf("%s differs from the generator's output", f.Path)
		}
	}
	for _, n := range tree(t, dir) {
		if n != "." {
			got = append(got, n)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}
