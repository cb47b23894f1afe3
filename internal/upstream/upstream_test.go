package upstream

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSkipsAndRecords: a proof whose vendored folder (Vendored) or program (Missing) is absent stops
// there, and its skip is one line of the log naming the package, the test and what is missing.
func TestSkipsAndRecords(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-vendor")
	for _, tc := range []struct {
		name  string
		skip  func(t *testing.T)
		parts []string // what the one line must hold (the whole line, with its newline, when it is known)
	}{
		{"Vendored", func(t *testing.T) { Vendored(t, "argo-helm/charts/argo-cd") },
			[]string{filepath.Join(missing, "argo-helm", "charts", "argo-cd"), "make upstream"}},
		{"Missing", func(t *testing.T) { Missing(t, "Chromium (apt-get install -y chromium)") },
			[]string{"./internal/upstream: TestSkipsAndRecords/Missing/proof: Chromium (apt-get install -y chromium)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "skips")
			t.Setenv(EnvVendor, missing)
			t.Setenv(EnvSkipLog, log)
			var reached bool
			ok := t.Run("proof", func(t *testing.T) {
				tc.skip(t)
				reached = true
			})
			if !ok || reached {
				t.Fatalf("the proof ran past what is missing (ok=%v reached=%v)", ok, reached)
			}
			raw, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"./internal/upstream: TestSkipsAndRecords/" + tc.name + "/proof: "}, tc.parts...)
			ok = strings.Count(string(raw), "\n") == 1
			for _, w := range want {
				ok = ok && strings.Contains(string(raw), w)
			}
			if !ok {
				t.Errorf("skip log = %q, want one line naming ./internal/upstream and %q", raw, want)
			}
		})
	}
}

func TestVendoredFound(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "kargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVendor, dir)
	t.Setenv(EnvSkipLog, filepath.Join(dir, "skips"))
	if got := Vendored(t, "kargo"); got != filepath.Join(dir, "kargo") {
		t.Errorf("Vendored = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "skips")); err == nil {
		t.Error("a found folder was recorded as a skip")
	}
}

// TestVendorDirDefault: without $ANALYSIS_HEALTH_VENDOR the tree is the first candidate that exists, the
// candidates being, in order, the assembled tree, ../shared/vendor and third_party/.
func TestVendorDirDefault(t *testing.T) {
	t.Setenv(EnvVendor, "")
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "upstream", "upstream.go")); err != nil {
		t.Fatalf("RepoRoot %s is not the repository root", root)
	}
	cands := VendorCandidates(root)
	want := []string{filepath.Join(root, "bin", "upstream"), filepath.Join(filepath.Dir(root), "shared", "vendor"), filepath.Join(root, "third_party")}
	if strings.Join(cands, "\n") != strings.Join(want, "\n") {
		t.Fatalf("VendorCandidates = %q, want %q", cands, want)
	}
	got, err := VendorDir()
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, c := range cands {
		if dirExists(c) {
			first = c
			break
		}
	}
	if got != first { // third_party/ is committed: one always exists
		t.Errorf("VendorDir = %s, want the first existing candidate %q", got, first)
	}
}

// TestResolveVendor: the order of VendorDir's choice, on folders made for it: the variable first, then
// each candidate that exists in turn, and the first candidate (the tree `make upstream` assembles, which
// the skip line then names) when none does.
func TestResolveVendor(t *testing.T) {
	dir := t.TempDir()
	assembled, shared, thirdParty := filepath.Join(dir, "bin", "upstream"), filepath.Join(dir, "shared"), filepath.Join(dir, "third_party")
	cands := []string{assembled, shared, thirdParty}
	for _, tc := range []struct {
		name, env string
		exist     []string
		want      string
	}{
		{"the variable over everything", filepath.Join(dir, "mine"), cands, filepath.Join(dir, "mine")},
		{"the assembled tree over ../shared", "", cands, assembled},
		{"../shared without an assembled tree", "", []string{shared, thirdParty}, shared},
		{"third_party alone: a clone before make upstream", "", []string{thirdParty}, thirdParty},
		{"none: the assembled tree, for the skip line", "", nil, assembled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			for _, d := range tc.exist {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := resolveVendor(tc.env, cands, dirExists)
			if err != nil || got != tc.want {
				t.Errorf("resolveVendor = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
	// a file where a folder is expected is not the tree
	if err := os.MkdirAll(filepath.Dir(assembled), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(assembled, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(thirdParty, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := resolveVendor("", cands, dirExists); got != thirdParty {
		t.Errorf("resolveVendor with a file at %s = %s, want %s", assembled, got, thirdParty)
	}
	if rel, err := resolveVendor("rel/dir", cands, dirExists); err != nil || !filepath.IsAbs(rel) {
		t.Errorf("a relative variable: %s, %v; want an absolute path", rel, err)
	}
}

func TestModuleDir(t *testing.T) {
	dir := ModuleDir(t, "github.com/argoproj/argo-rollouts")
	if !strings.Contains(filepath.ToSlash(dir), "github.com/argoproj/argo-rollouts@"+ModuleVersion(t, "github.com/argoproj/argo-rollouts")) {
		t.Errorf("ModuleDir = %s: not the required version's module-cache folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifests", "crds", "rollout-crd.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := moduleDir("example.com/not-a-dependency"); err == nil {
		t.Error("a module outside the graph was found")
	}
}

func TestNewerGo(t *testing.T) {
	if newerGo("1.20") || !newerGo("99.0") || newerGo("") {
		t.Errorf("newerGo: 1.20 %v, 99.0 %v (running %s)", newerGo("1.20"), newerGo("99.0"), runtime.Version())
	}
	if !semverLess("1.26.8", "1.27.0") || semverLess("1.27.0", "1.26.10") || semverLess("1.26.10", "1.26.10") {
		t.Error("semverLess")
	}
}

// A Go user runs `go test ./...` at the root with the committed go.work in effect (no GOWORK=off, which
// only the Makefile sets): the module lookups must answer as in module mode.
func TestModuleDirInWorkspace(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOWORK", filepath.Join(root, "go.work"))
	modMu.Lock()
	delete(modDirs, "github.com/argoproj/argo-rollouts")
	modMu.Unlock()
	dir, err := moduleDir("github.com/argoproj/argo-rollouts")
	if err != nil {
		t.Fatalf("in workspace mode: %v", err)
	}
	if !strings.Contains(filepath.ToSlash(dir), "github.com/argoproj/argo-rollouts@"+ModuleVersion(t, "github.com/argoproj/argo-rollouts")) {
		t.Errorf("ModuleDir = %s: not the version the module requires", dir)
	}
	if d, _ := ModuleDirIn(t, ".", "github.com/argoproj/argo-rollouts"); d != dir {
		t.Errorf("ModuleDirIn = %s, ModuleDir = %s", d, dir)
	}
}
