// Package upstream locates the upstream files the proofs read, for every test module of the repository
// (the main module, test/argocd-v3.2, e2e/..., test/argocd-v3.6). There are two kinds, found in two ways:
//
//   - Files that are not Go packages (the argo-helm charts, the argocd-operator and Kargo CRDs, Kargo's
//     nested Go modules, chart and UI source) are read from one tree (tree.go): $ANALYSIS_HEALTH_VENDOR
//     when set, else the tree `make upstream` assembles in bin/upstream (the files vendored in
//     third_party/ and those it fetches through the Go module proxy, each checked against
//     third_party/SHA256SUMS), else ../shared/vendor next to the repository, else third_party/ itself
//     (VendorDir). Vendored returns a path below it, or skips the test with one line naming the missing
//     path and `make upstream`, and records the skip for `make test`'s summary.
//   - Files that are in a Go module (Argo Rollouts' manifests/crds, examples and test data, Argo CD's
//     manifests/ and resource_customizations) are read from the module cache at the version the calling
//     test's module requires: ModuleDir. They are never copied into the repository.
//
// `make test` assembles the tree first, so a clone runs every proof; CI fails when any proof was skipped
// (.ci/run).
package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// MainModule is the module path whose go.mod marks the repository root.
const MainModule = "github.com/analysis-health/analysis-health"

// Environment variables.
const (
	// EnvVendor overrides where the upstream tree is (default: VendorDir's candidates).
	EnvVendor = "ANALYSIS_HEALTH_VENDOR"
	// EnvSkipLog names a file every skipped proof appends one line to; `make test` sets it, prints the
	// lines at the end, and .ci/run fails when the file is not empty.
	EnvSkipLog = "ANALYSIS_HEALTH_SKIPLOG"
)

// RepoRoot is the folder holding the main module's go.mod, found by walking up from the working
// directory (a test runs in its package's folder, whatever module it belongs to).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePath(raw) == MainModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", MainModule)
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// VendorDir is the folder of the upstream tree, as an absolute path: $ANALYSIS_HEALTH_VENDOR when set,
// else the first of VendorCandidates that exists, else the assembled tree (which `make upstream` creates).
// It does not check that the files a proof needs are there: Vendored does.
func VendorDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		if v := os.Getenv(EnvVendor); v != "" {
			return filepath.Abs(v)
		}
		return "", err
	}
	return resolveVendor(os.Getenv(EnvVendor), VendorCandidates(root), dirExists)
}

// VendorCandidates are the folders VendorDir looks for, in order, for the repository at root: the tree
// `make upstream` assembled (complete and checked), ../shared/vendor next to the repository (the
// developers' reference copy), and third_party/ (the committed files alone: the proofs that need a
// fetched file skip, naming `make upstream`).
func VendorCandidates(root string) []string {
	return []string{
		filepath.Join(root, filepath.FromSlash(AssembledDir)),
		filepath.Join(filepath.Dir(root), "shared", "vendor"),
		filepath.Join(root, ThirdPartyDir),
	}
}

// resolveVendor is VendorDir's choice: env (made absolute) when set, else the first candidate for which
// exists holds, else the first candidate.
func resolveVendor(env string, candidates []string, exists func(string) bool) (string, error) {
	if env != "" {
		return filepath.Abs(env)
	}
	if len(candidates) == 0 {
		return "", errors.New("no candidate folder for the upstream tree")
	}
	for _, c := range candidates {
		if exists(c) {
			return c, nil
		}
	}
	return candidates[0], nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Vendored is the absolute path of rel (slash-separated, e.g. "argo-helm/charts/argo-cd") below the
// vendor folder. When it does not exist the test is skipped with one line naming the missing path, and
// the skip is recorded in $ANALYSIS_HEALTH_SKIPLOG.
func Vendored(t testing.TB, rel string) string {
	t.Helper()
	base, err := VendorDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(base, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		msg := MissingMessage(p)
		if err := recordSkip(t.Name(), msg); err != nil {
			t.Fatalf("%s; recording the skip: %v", msg, err)
		}
		t.Skip(msg)
	}
	return p
}

// MissingMessage is the one line of a proof whose upstream file p (below VendorDir) is not there: what is
// missing, and the command that fetches it.
func MissingMessage(p string) string {
	if v := os.Getenv(EnvVendor); v != "" {
		return fmt.Sprintf("upstream files not found: %s (%s=%s does not hold them; unset it and run `make upstream`)", p, EnvVendor, v)
	}
	return fmt.Sprintf("upstream files not found: %s (run `make upstream`: it assembles %s from %s/ and the Go module proxy)", p, AssembledDir, ThirdPartyDir)
}

// Missing skips the test with one line naming what it needs and is not there (msg), and records the
// skip in $ANALYSIS_HEALTH_SKIPLOG as Vendored does: for a proof whose prerequisite is not a vendored
// file but a program the Makefile builds or the machine installs (a browser), so that CI, which has
// them all, fails on it too.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if err := recordSkip(t.Name(), msg); err != nil {
		t.Fatalf("%s; recording the skip: %v", msg, err)
	}
	t.Skip(msg)
}

// recordSkip appends "<package dir>: <test>: <msg>" to the skip log, if one is set.
func recordSkip(test, msg string) error {
	logPath := os.Getenv(EnvSkipLog)
	if logPath == "" {
		return nil
	}
	pkg, _ := os.Getwd()
	if root, err := RepoRoot(); err == nil {
		if rel, err := filepath.Rel(root, pkg); err == nil {
			pkg = "./" + filepath.ToSlash(rel)
		}
	}
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	// One write of one line: appends from parallel test binaries do not interleave.
	_, err = fmt.Fprintf(f, "%s: %s: %s\n", pkg, test, msg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var (
	modMu   sync.Mutex
	modDirs = map[string]string{}
)

// ModuleDir is the module-cache folder of module path, at the version the calling test's module requires
// (replacements applied), downloading it if needed. It fails the test when the module is not in the
// module graph: a proof must name the upstream version it reads.
func ModuleDir(t testing.TB, path string) string {
	t.Helper()
	dir, err := moduleDir(path)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func moduleDir(path string) (string, error) {
	modMu.Lock()
	defer modMu.Unlock()
	if d, ok := modDirs[path]; ok {
		return d, nil
	}
	// -mod=mod: test modules may not list every file's module in vendor/modules.txt; go list -m reads
	// only go.mod and go.sum here.
	out, err := goCmd("list", "-mod=mod", "-m", "-f", "{{.Dir}}", path)
	if err != nil {
		return "", fmt.Errorf("module %s: %w", path, err)
	}
	dir := strings.TrimSpace(out)
	if dir == "" {
		// In the graph but not extracted yet (only its go.mod was needed so far).
		if _, err := goCmd("mod", "download", path); err != nil {
			return "", fmt.Errorf("module %s: %w", path, err)
		}
		if out, err = goCmd("list", "-mod=mod", "-m", "-f", "{{.Dir}}", path); err != nil {
			return "", fmt.Errorf("module %s: %w", path, err)
		}
		dir = strings.TrimSpace(out)
	}
	if dir == "" {
		return "", fmt.Errorf("module %s: not found in the module cache", path)
	}
	modDirs[path] = dir
	return dir, nil
}

// ModuleDirIn is ModuleDir for the module of this repository at moduleRel (slash path from the
// repository root, "." for the main module): the folder and version of module path that module
// requires. A proof in one module can so read files of an upstream version another module pins.
func ModuleDirIn(t testing.TB, moduleRel, path string) (dir, version string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(root, filepath.FromSlash(moduleRel))
	// A module on a newer Go than the machine's (test/argocd-v3.6, test/rollouts-v1.10/corpus) is read with
	// the toolchain its Makefile target uses; the go command fetches it through the module proxy.
	env := moduleEnv()
	if raw, err := os.ReadFile(filepath.Join(in, "go.mod")); err == nil && newerGo(goDirective(raw)) {
		env = append(env, "GOTOOLCHAIN="+NewerToolchain)
	}
	list := func() []string {
		cmd := exec.Command("go", "list", "-mod=mod", "-m", "-f", "{{.Dir}} {{.Version}}", path)
		cmd.Dir, cmd.Env = in, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -m %s in %s: %v", path, moduleRel, err)
		}
		return strings.Fields(string(out))
	}
	f := list()
	if len(f) != 2 {
		dl := exec.Command("go", "mod", "download", path)
		dl.Dir, dl.Env = in, env
		if out, err := dl.CombinedOutput(); err != nil {
			t.Fatalf("go mod download %s in %s: %v: %s", path, moduleRel, err, out)
		}
		if f = list(); len(f) != 2 {
			t.Fatalf("module %s (required by %s) is not in the module cache", path, moduleRel)
		}
	}
	return f[0], f[1]
}

// NewerToolchain is the Go toolchain of the repository's modules that need a newer Go than the
// machine's (the Makefile's V36_TOOLCHAIN).
const NewerToolchain = "go1.27.3"

func goDirective(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go" {
			return f[1]
		}
	}
	return ""
}

// newerGo reports whether go version v (a go.mod directive, "1.27.0") is newer than the running Go.
func newerGo(v string) bool {
	if v == "" {
		return false
	}
	return semverLess(strings.TrimPrefix(runtime.Version(), "go"), v)
}

func semverLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, y := 0, 0
		if i < len(pa) {
			fmt.Sscanf(pa[i], "%d", &x)
		}
		if i < len(pb) {
			fmt.Sscanf(pb[i], "%d", &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// ModuleVersion is the version of module path the calling test's module requires.
func ModuleVersion(t testing.TB, path string) string {
	t.Helper()
	out, err := goCmd("list", "-mod=mod", "-m", "-f", "{{.Version}}", path)
	if err != nil {
		t.Fatalf("module %s: %v", path, err)
	}
	return strings.TrimSpace(out)
}

// moduleEnv is the environment of the go commands above: module mode (GOWORK=off), whatever the caller
// runs in. The answer is the version the calling test's module requires, and a workspace (the committed
// go.work, which a Go user's `go test ./...` at the root picks up) has one build list for all its modules
// and refuses -mod=mod (docs/architecture.md, "The workspace").
func moduleEnv() []string {
	return append(os.Environ(), "GOWORK=off")
}

func goCmd(args ...string) (string, error) {
	cmd := exec.Command(goBinary(), args...)
	cmd.Env = moduleEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return "", err
		}
		return "", errors.New(msg)
	}
	return stdout.String(), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
