package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

// argoPackages are the packages of Argo CD whose tests read resource_customizations: util/lua's
// TestLuaHealthScript walks every health.lua and its health_test.yaml, TestLuaResourceActionsScript every
// actions/action_test.yaml, and the rest of the package runs the built-in scripts through GetHealthScript,
// the script cache and the wildcard lookup (lua_test.go, script_cache_test.go). No other package of
// either release reads the folder (grep resource_customizations over their *_test.go); the actions list
// in docs (hack/generate-actions-list.sh) only changes with an action.lua, and the upstream format adds none.
var argoPackages = []string{"./util/lua/"}

// TestArgoCDOwnTests copies each Argo CD release's module source out of the module cache, overlays the
// upstream format generated against it, and runs Argo CD's own tests there, unmodified. Every one must
// pass, TestLuaHealthScript must have run every case of our edited suites, and `analysis-health verify`
// must pass every case of the tree that Argo CD's own tests pass (checkVerify).
func TestArgoCDOwnTests(t *testing.T) {
	for _, tr := range trees {
		t.Run(tr.version, func(t *testing.T) {
			src := tr.dir(t)
			files, cases, err := generator.UpstreamTree(generator.UpstreamOptions{Base: os.DirFS(src), ArgoCDVersion: tr.version})
			if err != nil {
				t.Fatal(err)
			}
			// A fixed path under the temporary directory, emptied before and after: the go command's build
			// cache keys a package by its directory, so Argo CD's own packages compiled here are reused by the
			// next run, and the dependencies in the module cache by the conformance modules' builds.
			work := filepath.Join(os.TempDir(), "analysis-health-upstream", "argo-cd@"+tr.version)
			if err := os.RemoveAll(work); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(work) })
			start := time.Now()
			copyTree(t, src, work)
			fillLocalReplaces(t, work, tr)
			for _, f := range files {
				p := filepath.Join(work, filepath.FromSlash(f.Path))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("copied %s@%s and overlaid %d files in %s", tr.module, tr.version, len(files), time.Since(start).Round(time.Second))

			res := runArgoTests(t, tr, work, "")
			// verify passes what Argo CD's own tests pass, our scripts and suites included.
			checkVerify(t, tr, work, res)
			perKind := map[string]int{}
			for _, c := range cases {
				perKind[c.Kind.Key()]++
				if name := tr.caseName(c); !res.passedAs(name) {
					t.Errorf("%s did not run and pass", name)
				}
			}
			if tr.kindInName {
				checkPerKind(t, res, perKind)
			}

			// The other column of docs/upstream.md, "Built-in today", in Argo CD's own VM: Argo CD's scripts
			// put back, its suites with our recorded cases appended at the built-in's answers.
			var own []generator.UpstreamCase
			for _, c := range cases {
				if !c.Upstream {
					own = append(own, c)
				}
			}
			for _, k := range lua.Kinds() {
				dir := filepath.Join(generator.UpstreamRoot, k.Group, k.Kind)
				for _, name := range []string{"health.lua", "health_test.yaml"} {
					raw, err := os.ReadFile(filepath.Join(src, dir, name))
					if err != nil {
						t.Fatal(err)
					}
					if name == "health_test.yaml" {
						raw = bytes.TrimRight(raw, "\n")
						for _, c := range own {
							if c.Kind == k {
								h := builtinAnswer(t, tr, c)
								raw = fmt.Appendf(raw, "\n- healthStatus:\n    status: %s\n    message: %s\n  inputPath: %s", yamlString(h.Status), yamlString(h.Message), c.InputPath)
							}
						}
						raw = append(raw, '\n')
					}
					if err := os.WriteFile(filepath.Join(work, dir, name), raw, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			res = runArgoTests(t, tr, work, "^TestLuaHealthScript$")
			for _, c := range own {
				if name := tr.caseName(c); !res.passedAs(name) {
					t.Errorf("built-in scripts: %s did not run and pass", name)
				}
			}
		})
	}
}

// checkPerKind holds the cases TestLuaHealthScript passed per kind to the number in the edited suites.
func checkPerKind(t *testing.T, res testRun, perKind map[string]int) {
	t.Helper()
	for key, want := range perKind {
		ran := 0
		for name := range res.passed {
			if strings.HasPrefix(name, "TestLuaHealthScript/"+key+"/") {
				ran++
			}
		}
		t.Logf("TestLuaHealthScript ran and passed %d cases of %s (the edited suite has %d)", ran, key, want)
		if ran != want {
			t.Errorf("TestLuaHealthScript passed %d cases of %s, the edited suite has %d", ran, key, want)
		}
	}
}

// caseName is the name the release's TestLuaHealthScript gives a case.
func (tr tree) caseName(c generator.UpstreamCase) string {
	if tr.kindInName {
		return "TestLuaHealthScript/" + path.Join(c.Kind.Key(), c.InputPath)
	}
	return "TestLuaHealthScript/" + c.InputPath
}

// yamlString writes s as a YAML double-quoted scalar (JSON string syntax is a subset of it).
func yamlString(s string) string {
	raw, _ := json.Marshal(s) // a string always marshals
	return string(raw)
}

// runArgoTests runs Argo CD's own tests of argoPackages (only those matching run, if set) in the tree at
// work and fails the test unless every one passed.
func runArgoTests(t *testing.T, tr tree, work, run string) testRun {
	t.Helper()
	start := time.Now()
	args := []string{"test", "-count=1", "-json"}
	if run != "" {
		args = append(args, "-run", run)
	}
	cmd := exec.Command("go", append(args, argoPackages...)...)
	cmd.Dir = work
	// The tree's own go.mod and replace block; -mod=mod lets the go command complete go.sum for the
	// nested module put back above.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+tr.toolchain)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	res := parseTestJSON(t, out)
	t.Logf("go test %s in the overlaid tree: %s", strings.Join(append(args[3:], argoPackages...), " "), time.Since(start).Round(time.Second))
	for _, line := range res.summary() {
		t.Log(line)
	}
	if runErr != nil || len(res.failed) > 0 || len(res.passed) == 0 {
		t.Errorf("Argo CD %s's own tests fail on the overlaid tree (%v): %s\n%s", tr.version, runErr, strings.Join(res.failed, ", "), tail(stderr.String()+res.output, 60))
	}
	return res
}

// testRun is what `go test -json` reported.
type testRun struct {
	passed  map[string]bool
	failed  []string
	skipped []string
	// counts per top-level test: subtests passed, failed
	top    map[string]*[3]int // pass, fail, skip of the test itself and its subtests
	output string
}

// passedAs reports whether a test of that name passed, or one go test renamed name#NN because another
// test had its name.
func (r testRun) passedAs(name string) bool {
	if r.passed[name] {
		return true
	}
	for n := range r.passed {
		if rest, ok := strings.CutPrefix(n, name+"#"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

func parseTestJSON(t *testing.T, out []byte) testRun {
	t.Helper()
	r := testRun{passed: map[string]bool{}, top: map[string]*[3]int{}}
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			text.WriteString(sc.Text() + "\n")
			continue
		}
		if ev.Action == "output" {
			text.WriteString(ev.Output)
			continue
		}
		if ev.Test == "" {
			continue
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		c := r.top[top]
		if c == nil {
			c = &[3]int{}
			r.top[top] = c
		}
		switch ev.Action {
		case "pass":
			r.passed[ev.Test] = true
			c[0]++
		case "fail":
			r.failed = append(r.failed, ev.Test)
			c[1]++
		case "skip":
			r.skipped = append(r.skipped, ev.Test)
			c[2]++
		}
	}
	r.output = text.String()
	return r
}

// summary is one line per top-level test: its name and how many of it and its subtests passed, failed
// and were skipped.
func (r testRun) summary() []string {
	var names []string
	total := [3]int{}
	for n, c := range r.top {
		names = append(names, n)
		for i := range total {
			total[i] += c[i]
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		c := r.top[n]
		out = append(out, fmt.Sprintf("  %s: %d passed, %d failed, %d skipped (the test and its subtests)", n, c[0], c[1], c[2]))
	}
	return append(out, fmt.Sprintf("  all: %d tests (%d top-level): %d passed, %d failed, %d skipped", total[0]+total[1]+total[2], len(names), total[0], total[1], total[2]))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyTree copies a module's source (read-only in the module cache) to a writable dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	localReplace = regexp.MustCompile(`(?m)^(?:replace\s+|\s+)(\S+)\s+=>\s+(\./\S+)\s*$`)
	requireLine  = `(?m)^\s*(?:require\s+)?%s\s+(v\S+)`
)

// fillLocalReplaces puts back the nested modules a module zip leaves out: v3.6.2's go.mod replaces
// github.com/argoproj/argo-cd/gitops-engine/v3 with ./gitops-engine, a module of its own in the same
// repository, so the module cache copy has no such folder. The module at the version go.mod requires is
// the one released from that folder (tagged gitops-engine/vX.Y.Z with the release).
func fillLocalReplaces(t *testing.T, work string, tr tree) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(work, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range localReplace.FindAllStringSubmatch(string(gomod), -1) {
		module, dir := m[1], filepath.Join(work, filepath.FromSlash(m[2]))
		if _, err := os.Stat(dir); err == nil {
			continue
		}
		v := regexp.MustCompile(fmt.Sprintf(requireLine, regexp.QuoteMeta(module))).FindStringSubmatch(string(gomod))
		if v == nil {
			t.Fatalf("%s@%s replaces %s with %s, which the module source lacks, and requires no version of it", tr.module, tr.version, module, m[2])
		}
		copyTree(t, moduleDir(t, module, v[1], tr.toolchain), dir)
		t.Logf("put back %s as %s@%s (left out of the module zip)", m[2], module, v[1])
	}
}
