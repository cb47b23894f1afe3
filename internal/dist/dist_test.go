package dist_test

import (
	"bytes"
	"context"
	"debug/elf"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/dist"
)

const root = "../.."

// copyTree copies the module at root to dst, without .git and build outputs, so a second build runs
// from another path: a path that leaked into a binary (no -trimpath) would make the two differ.
func copyTree(t *testing.T, dst string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == ".git" || rel == "bin" || rel == "dist" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReproducible builds every release target twice, from two copies of the module at different paths, and requires byte-identical artifacts and SHA256SUMS. The build cache is shared (a cold second
// build costs minutes on CI); what the copy proves is that nothing of the build's place or time reaches
// the binaries. It also checks what the release promises: the linux binaries have no ELF interpreter
// (statically linked), and the CLI built for this machine prints the stamped version.
func TestReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cross-builds every release target twice")
	}
	ctx := context.Background()
	const version = "v0.0.0-reproducible"
	// Both copies first, so an edit during the builds cannot make them differ.
	first, src := filepath.Join(t.TempDir(), "analysis-health"), filepath.Join(t.TempDir(), "elsewhere", "deeper", "analysis-health")
	copyTree(t, first)
	copyTree(t, src)
	a, err := dist.Build(ctx, dist.Options{Dir: first, Out: filepath.Join(t.TempDir(), "a"), Version: version})
	if err != nil {
		t.Fatal(err)
	}
	b, err := dist.Build(ctx, dist.Options{Dir: src, Out: filepath.Join(t.TempDir(), "b"), Version: version})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(dist.Targets) || len(b) != len(a) {
		t.Fatalf("built %d and %d artifacts, want %d", len(a), len(b), len(dist.Targets))
	}
	for i := range a {
		ra, _ := os.ReadFile(a[i].Path)
		rb, _ := os.ReadFile(b[i].Path)
		if !bytes.Equal(ra, rb) || a[i].SHA256 != b[i].SHA256 {
			t.Errorf("%s differs between the two builds (%s, %s)", a[i].Target.Name(), a[i].SHA256, b[i].SHA256)
		}
		if bytes.Contains(ra, []byte(first)) || bytes.Contains(ra, []byte(src)) {
			t.Errorf("%s names a build path", a[i].Target.Name())
		}
		if a[i].Target.GOOS == "linux" {
			f, err := elf.Open(a[i].Path)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("%s is dynamically linked", a[i].Target.Name())
				}
			}
			f.Close()
		}
	}
	sa, _ := os.ReadFile(filepath.Join(filepath.Dir(a[0].Path), dist.SumsFile))
	sb, _ := os.ReadFile(filepath.Join(filepath.Dir(b[0].Path), dist.SumsFile))
	if !bytes.Equal(sa, sb) || len(strings.Split(strings.TrimSpace(string(sa)), "\n")) != len(dist.Targets) {
		t.Errorf("SHA256SUMS differ or miss a target:\n%s\n%s", sa, sb)
	}
	// sha256sum runs in the folder of the artifacts, as a user checking a download does.
	check := exec.Command("sha256sum", "-c", dist.SumsFile)
	check.Dir = filepath.Dir(a[0].Path)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	for _, art := range a {
		if art.Target == (dist.Target{Cmd: dist.CLI, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}) {
			out, err := exec.Command(art.Path, "--version").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "analysis-health version "+version {
				t.Errorf("--version: %v %q", err, out)
			}
		}
		if art.Target == (dist.Target{Cmd: dist.Plugin, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}) {
			out, err := exec.Command(art.Path, "-version").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "rollouts-plugin-metric-analysis-health "+version {
				t.Errorf("plugin -version: %v %q", err, out)
			}
		}
	}
}

// TestBuildFailureLeavesNothing: a target that does not build leaves no artifact and no SHA256SUMS.
func TestBuildFailureLeavesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	_, err := dist.Build(context.Background(), dist.Options{Dir: root, Out: out, Version: "v1",
		Targets: []dist.Target{{Cmd: "cmd/analysis-health", GOOS: "linux", GOARCH: "amd64"}, {Cmd: "cmd/no-such-command", GOOS: "linux", GOARCH: "amd64"}}})
	if err == nil || !strings.Contains(err.Error(), "cmd/no-such-command") {
		t.Fatalf("err %v, want one naming cmd/no-such-command", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
	if _, err := dist.Build(context.Background(), dist.Options{Dir: root, Out: out, Version: ""}); err == nil {
		t.Error("empty version accepted")
	}
}
