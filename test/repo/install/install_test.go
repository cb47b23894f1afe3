// Package install proves the install path a user without a checkout takes (README.md "Use",
// docs/install.md): `go install …/cmd/analysis-health@latest` and the plugin's `go install …@version`,
// from a module proxy on disk built from `git archive HEAD`, run outside the checkout; the installed CLI
// on the bundled example; and a module of the user's own that `go get`s ours and runs verify.Test.
//
// The go command refuses `go install pkg@version` for a module whose go.mod has a replace directive, so
// this test fails the day the root module grows one. Everything but our module comes from the machine's
// GOPROXY, as it would for the user.
package install

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

const modulePath = "github.com/analysis-health/analysis-health"

var repoRoot = filepath.Join("..", "..", "..")

func TestInstall(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to archive HEAD:", err)
	}
	work := t.TempDir()
	version, tree := archiveHead(t, work)
	proxy := buildProxy(t, work, tree, version)
	env := goEnv(t, work, proxy)

	gobin := filepath.Join(work, "bin")
	outside := filepath.Join(work, "elsewhere")
	must(t, os.MkdirAll(outside, 0o755))

	// README's command, word for word but for the proxy: @latest resolves to the version of HEAD.
	run(t, outside, env, "go", "install", modulePath+"/cmd/analysis-health@latest")
	run(t, outside, env, "go", "install", modulePath+"/cmd/rollouts-plugin-metric-analysis-health@"+version)

	t.Run("CLI on the bundled example", func(t *testing.T) {
		out := run(t, outside, env, filepath.Join(gobin, "analysis-health"), "health", "-f", filepath.Join(tree, "testdata", "examples", "canary-analysis.yaml"))
		want := readmeExampleOutput(t)
		if out != want {
			t.Errorf("the installed CLI printed\n%s\nREADME.md shows\n%s", out, want)
		}
		ver := run(t, outside, env, filepath.Join(gobin, "analysis-health"), "--version")
		if !strings.Contains(ver, version) {
			t.Errorf("--version printed %q, want the version go install recorded (%s)", ver, version)
		}
	})
	t.Run("plugin", func(t *testing.T) {
		ver := run(t, outside, env, filepath.Join(gobin, "rollouts-plugin-metric-analysis-health"), "--version")
		if !strings.Contains(ver, version) {
			t.Errorf("--version printed %q, want %s", ver, version)
		}
	})
	t.Run("verify.Test in a user module", func(t *testing.T) {
		user := filepath.Join(work, "user")
		must(t, os.MkdirAll(user, 0o755))
		must(t, os.WriteFile(filepath.Join(user, "go.mod"), []byte("module example.com/user\n\ngo 1.26\n"), 0o644))
		// The user's own tree is the bundled one, copied as a user would vendor ours into theirs.
		// Only the scripts, suites and fixtures: lua/ is also our Go package (its embed and its tests).
		copyScripts(t, filepath.Join(tree, "lua"), filepath.Join(user, "resource_customizations"))
		must(t, os.WriteFile(filepath.Join(user, "scripts_test.go"), []byte(userTest), 0o644))
		run(t, user, env, "go", "get", modulePath+"@"+version)
		run(t, user, env, "go", "mod", "tidy")
		cmd := exec.Command("go", "test", "-count=1", "-json", "./...")
		cmd.Dir, cmd.Env = user, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		passed, failed := countTests(out)
		if err != nil || failed > 0 {
			t.Fatalf("the user's go test: %v, %d failed:\n%s\nstderr:\n%s", err, failed, failures(out), stderr.Bytes())
		}
		// Every bundled suite case and lint check is a subtest; the bundled tree has over a hundred.
		if passed < 100 {
			t.Fatalf("the user's go test passed %d tests, want every case of the bundled suites (over 100)", passed)
		}
		t.Logf("the user's verify.Test: %d tests and subtests passed", passed)
	})
}

const userTest = `package user_test

import (
	"os"
	"testing"

	"github.com/analysis-health/analysis-health/verify"
)

func TestArgoCDLua(t *testing.T) {
	verify.Test(t, os.DirFS("resource_customizations"), verify.Options{ArgoCD: "v3.6", Fuzz: 5, Seed: 1})
}
`

// archiveHead extracts `git archive HEAD` and names it with the pseudo-version of HEAD's commit, so a
// module cache shared with earlier runs never serves another commit's zip under the same version.
func archiveHead(t *testing.T, work string) (version, tree string) {
	hash := strings.TrimSpace(run(t, repoRoot, nil, "git", "rev-parse", "HEAD"))
	secs := strings.TrimSpace(run(t, repoRoot, nil, "git", "show", "-s", "--format=%ct", "HEAD"))
	var ts int64
	if _, err := fmt.Sscan(secs, &ts); err != nil {
		t.Fatal(err)
	}
	version = module.PseudoVersion("v0", "", time.Unix(ts, 0), hash[:12])
	tree = filepath.Join(work, "tree")
	must(t, os.MkdirAll(tree, 0o755))
	tarball := filepath.Join(work, "head.tar")
	run(t, repoRoot, nil, "git", "archive", "-o", tarball, "HEAD")
	run(t, tree, nil, "tar", "-xf", tarball)
	return version, tree
}

// buildProxy writes a GOPROXY file tree (go help goproxy) that serves our module at version.
func buildProxy(t *testing.T, work, tree, version string) string {
	proxy := filepath.Join(work, "proxy")
	dir := filepath.Join(proxy, modulePath, "@v")
	must(t, os.MkdirAll(dir, 0o755))
	mod, err := os.ReadFile(filepath.Join(tree, "go.mod"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, version+".mod"), mod, 0o644))
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	must(t, err)
	// CreateFromDir leaves out what a module zip leaves out: nested modules (test/), vendor/, VCS files.
	if err := zip.CreateFromDir(f, module.Version{Path: modulePath, Version: version}, tree); err != nil {
		f.Close()
		t.Fatal("the module zip:", err)
	}
	must(t, f.Close())
	info, err := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, version+".info"), info, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(proxy, modulePath, "@latest"), info, 0o644))
	return proxy
}

// goEnv: the machine's go environment, with our proxy first, our module out of the checksum database
// (it is not published), no workspace and no GOFLAGS of the caller.
func goEnv(t *testing.T, work, proxy string) []string {
	upstream := strings.TrimSpace(run(t, work, nil, "go", "env", "GOPROXY"))
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOPROXY", "GONOSUMDB", "GOFLAGS", "GOWORK", "GOBIN", "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOPROXY=file://"+filepath.ToSlash(proxy)+","+upstream, "GONOSUMDB="+modulePath,
		"GOWORK=off", "GOBIN="+filepath.Join(work, "bin"), "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw")
}

// readmeExampleOutput is the output README.md shows under its first command.
func readmeExampleOutput(t *testing.T) string {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	must(t, err)
	_, after, ok := strings.Cut(string(raw), "\n```\nKIND ")
	if !ok {
		t.Fatal("README.md: no example output block (a ``` block starting with KIND)")
	}
	block, _, _ := strings.Cut(after, "\n```\n")
	return "KIND " + block + "\n"
}

func countTests(jsonOut []byte) (passed, failed int) {
	sc := bufio.NewScanner(bytes.NewReader(jsonOut))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct{ Action, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue
		}
		switch ev.Action {
		case "pass":
			passed++
		case "fail":
			failed++
		}
	}
	return passed, failed
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", name, strings.Join(args, " "), dir, err, out, stderr.Bytes())
	}
	return string(out)
}

// failures are the events of a failed go test -json run that say why: failed tests and packages, build
// output; the whole tail when there are none.
func failures(b []byte) string {
	var keep []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"Action":"fail"`) || strings.Contains(line, `"Action":"build-output"`) || strings.Contains(line, `"Action":"build-fail"`) {
			keep = append(keep, line)
		}
	}
	if len(keep) == 0 {
		return tail(b)
	}
	return tail([]byte(strings.Join(keep, "\n")))
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// copyScripts copies the tree below src to dst without its Go files.
func copyScripts(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	must(t, err)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		_, file, line, _ := runtime.Caller(1)
		t.Fatalf("%s:%d: %v", filepath.Base(file), line, err)
	}
}
