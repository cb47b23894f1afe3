package cli_test

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

// argoCDTree writes a minimal Argo CD source tree: per kind a one-case suite on a bundled fixture.
func argoCDTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, k := range lua.Kinds() {
		fixtures, err := lua.Fixtures()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, generator.UpstreamRoot, k.Group, k.Kind)
		for _, f := range fixtures {
			if f.Kind == k {
				if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "testdata", path.Base(f.Path)), f.Raw, 0o644); err != nil {
					t.Fatal(err)
				}
				suite := "tests:\n- healthStatus:\n    status: Healthy\n    message: \"\"\n  inputPath: testdata/" + path.Base(f.Path) + "\n"
				if err := os.WriteFile(filepath.Join(dir, "health_test.yaml"), []byte(suite), 0o644); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return root
}

func TestGenerateUpstreamUsage(t *testing.T) {
	tree := argoCDTree(t)
	out := func() string { return filepath.Join(t.TempDir(), "pr") }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no --out", []string{"--format", "upstream", "--argocd-source", tree}, "--out DIR"},
		{"no --argocd-source", []string{"--format", "upstream", "--out", out()}, "--argocd-source DIR"},
		{"not an Argo CD tree", []string{"--format", "upstream", "--out", out(), "--argocd-source", t.TempDir()}, "no resource_customizations folder there"},
		{"--argocd-source with another format", []string{"--format", "patch", "--argocd-source", tree}, "--argocd-source only applies to --format upstream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(append([]string{"generate"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// The folder holds exactly what the generator renders against the same tree; a tree the edit cannot read
// fails naming it and leaves nothing behind.
func TestGenerateUpstream(t *testing.T) {
	tree := argoCDTree(t)
	dir := filepath.Join(t.TempDir(), "pr")
	code, stdout, stderr := run("generate", "--format", "upstream", "--argocd-source", tree, "--out", dir)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "wrote "+dir) {
		t.Fatalf("exit %d %q %q", code, stdout, stderr)
	}
	files, err := generator.GenerateUpstream(generator.UpstreamOptions{Base: os.DirFS(tree), ArgoCDVersion: "v3.6"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || !reflect.DeepEqual(got, f.Data) {
			t.Errorf("%s: not what the generator renders (%v)", f.Path, err)
		}
	}

	suite := filepath.Join(tree, generator.UpstreamRoot, "argoproj.io", "Experiment", "health_test.yaml")
	if err := os.WriteFile(suite, []byte("tests: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "pr")
	code, _, stderr = run("generate", "--format", "upstream", "--argocd-source", tree, "--out", bad)
	if code == 0 || !strings.Contains(stderr, "Experiment/health_test.yaml") {
		t.Fatalf("exit %d %q: want a failure naming the suite", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s behind", bad)
	}
}
