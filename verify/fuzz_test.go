package verify_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// generous is the deadline of evaluations in tests that are not about the deadline (a loaded CI machine
// must not turn a slow evaluation into a timeout finding).
const generous = 30 * time.Second

// testdata/classes holds one health script per finding kind (each under its own kind), plus a discovery
// that indexes a missing field, an action that refuses an object on purpose or fails in the VM, and one
// that returns a string.
func kindTree() fstest.MapFS {
	fsys := fstest.MapFS{}
	files, err := readTree("testdata/classes")
	if err != nil {
		panic(err)
	}
	for p, b := range files {
		fsys[p] = &fstest.MapFile{Data: b}
	}
	return fsys
}

func readTree(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	return out, err
}

func TestFuzzFindingKinds(t *testing.T) {
	rep, err := verify.Fuzz(kindTree(), verify.FuzzOptions{Engine: verify.Engine{Profile: verify.V32, Timeout: 2 * time.Second}, N: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]map[verify.FindingKind]bool{}
	for _, f := range rep.Findings() {
		if kinds[f.Script] == nil {
			kinds[f.Script] = map[verify.FindingKind]bool{}
		}
		kinds[f.Script][f.Kind] = true
	}
	want := map[string]verify.FindingKind{
		"example.com/Crash/health.lua":     verify.LuaError,
		"example.com/Slow/health.lua":      verify.Timeout,
		"example.com/Text/health.lua":      verify.NonTable,
		"example.com/Lowercase/health.lua": verify.InvalidStatus,
		"example.com/Unknown/health.lua":   verify.UnknownStatus,
		"example.com/Empty/health.lua":     verify.NoStatus,
		// discovery indexes obj.spec without a guard
		"example.com/Fine/actions/discovery.lua": verify.LuaError,
		// concatenates a retyped field; its error("no spec") is an answer, not a finding
		"example.com/Fine/actions/touch/action.lua": verify.LuaError,
		"example.com/Fine/actions/spin/action.lua":  verify.NonTable,
	}
	for script, kind := range want {
		if len(kinds[script]) != 1 || !kinds[script][kind] {
			t.Errorf("%s: findings %v, want only %s", script, kinds[script], kind)
		}
	}
	for script := range kinds {
		if _, ok := want[script]; !ok {
			t.Errorf("%s: unexpected findings %v", script, kinds[script])
		}
	}
	for _, f := range rep.Findings() {
		if f.Script == "example.com/Fine/actions/touch/action.lua" && f.Message == "no spec" {
			t.Errorf("a deliberate error() reported: %s", f.Summary())
		}
	}
	for _, s := range rep.Scripts {
		if s.Cases != 30 || s.Seeds != 1 {
			t.Errorf("%s: %d seeds, %d cases, want 1 and 30", s.Path, s.Seeds, s.Cases)
		}
	}
}

// The suite saying Unknown or no status is expected turns those outcomes into intent.
func TestFuzzExpectedOutcomesAreNotFindings(t *testing.T) {
	fsys := kindTree()
	fsys["example.com/Unknown/health_test.yaml"].Data = []byte("tests:\n- healthStatus: {status: Unknown, message: no idea}\n  inputPath: testdata/w.yaml\n")
	fsys["example.com/Empty/health_test.yaml"].Data = []byte("tests:\n- healthStatus: {}\n  inputPath: testdata/w.yaml\n")
	rep, err := verify.Fuzz(fsys, verify.FuzzOptions{Engine: verify.Engine{Profile: verify.V32, Timeout: 2 * time.Second}, N: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings() {
		if strings.Contains(f.Script, "/Unknown/") || strings.Contains(f.Script, "/Empty/") {
			t.Errorf("expected outcome reported: %s", f.Summary())
		}
	}
}

func TestFuzzIsReproducible(t *testing.T) {
	run := func(seed int64) verify.FuzzReport {
		rep, err := verify.Fuzz(os.DirFS("testdata/buggy"), verify.FuzzOptions{Engine: verify.Engine{Profile: verify.V214, Timeout: generous}, N: 40, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b, c := run(7), run(7), run(8)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with the same seed differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("runs with different seeds are identical")
	}
}

// Our own scripts: no finding of any kind, under every profile.
func TestFuzzBundledTreeIsClean(t *testing.T) {
	for _, p := range engine.Profiles() {
		rep, err := verify.Fuzz(lua.FS, verify.FuzzOptions{Engine: verify.Engine{Profile: verify.Profile(p), Timeout: generous}, N: 6, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Cases() < 1000 {
			t.Errorf("%s: only %d evaluations", p, rep.Cases())
		}
		for _, f := range rep.Findings() {
			t.Errorf("%s: %s", p, f.Summary())
		}
		findings, err := verify.Lint(lua.FS, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			t.Error(f)
		}
	}
}

func TestWriteFindingsStaysInsideDir(t *testing.T) {
	rep, err := verify.Fuzz(os.DirFS("testdata/buggy"), verify.FuzzOptions{Engine: verify.Engine{Profile: verify.V214, Timeout: generous}, N: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	findings := rep.Findings()
	if len(findings) == 0 {
		t.Fatal("no findings to write")
	}
	findings[0].Script = "../../etc/passwd" // a hostile name stays a file name
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	paths, err := verify.WriteFindings(dir, findings)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "out" {
		t.Errorf("wrote outside --fuzz-out: %v", entries)
	}
	files, _ := os.ReadDir(dir)
	if len(files) != len(findings) || len(paths) != len(findings) {
		t.Fatalf("%d files for %d findings", len(files), len(findings))
	}
	for i, p := range paths {
		if filepath.Dir(p) != dir {
			t.Errorf("%s is not directly in %s", p, dir)
		}
		obj, err := verify.LoadObject(os.DirFS(dir), filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(obj, findings[i].Object) {
			t.Errorf("%s does not hold the finding's object", p)
		}
	}
}

func ExampleFuzz() {
	rep, err := verify.Fuzz(os.DirFS("testdata/buggy"), verify.FuzzOptions{
		Engine: verify.Engine{Profile: verify.V32, Timeout: 30 * time.Second}, N: 20, Seed: 1,
	})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings() {
		fmt.Println(f.Kind, f.Message)
	}
	// Output:
	// lua-error <string>:2: attempt to index a non-table object(nil) with key 'phase'
	// lua-error <string>:4: attempt to index a non-table object(nil) with key 'find'
	// lua-error <string>:2: attempt to index a non-table object(string) with key 'phase'
}

// A user's own test: every suite, lint and fuzz of the tree as subtests.
func TestExampleTree(t *testing.T) {
	verify.Test(t, os.DirFS("testdata/example"), verify.Options{ArgoCD: "v3", Fuzz: 20, Seed: 1, Timeout: generous})
}

// Issue 44 #8: --fuzz-out names its files predictably, and /tmp/crashers (the help's example) is a
// shared folder: a symbolic link planted at the first name must not be followed.
func TestWriteFindingsFollowsNoPlantedLink(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "crashers")
	victim := filepath.Join(root, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	findings := []verify.FuzzFinding{{Script: "g/K/health.lua", Kind: "lua-error", Message: "boom", Object: map[string]any{"kind": "K"}}}
	planted := filepath.Join(dir, "g_K_health.lua-error.1.yaml")
	if err := os.Symlink(victim, planted); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "g_K_health.lua-error.2.yaml")
	if err := os.Symlink(filepath.Join(root, "created-through-link"), dangling); err != nil {
		t.Fatal(err)
	}
	paths, err := verify.WriteFindings(dir, findings)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "created-through-link")); err == nil {
		t.Error("a file was created through a dangling link")
	}
	if len(paths) != 1 || paths[0] != filepath.Join(dir, "g_K_health.lua-error.3.yaml") {
		t.Fatalf("wrote %v, want the first free name", paths)
	}
	if info, err := os.Lstat(paths[0]); err != nil || !info.Mode().IsRegular() {
		t.Errorf("%s: %v %v, want a regular file", paths[0], info, err)
	}
}

// TestFuzzProgress: Progress is called while Fuzz runs and once at the end, with the mutations evaluated
// so far, never going back, and the last call counts every planned mutation.
func TestFuzzProgress(t *testing.T) {
	type call struct{ done, total int }
	var calls []call
	rep, err := verify.Fuzz(os.DirFS("testdata/buggy"), verify.FuzzOptions{
		Engine: verify.Engine{Profile: verify.V214, Timeout: 30 * time.Second}, N: 40, Seed: 1,
		Progress:         func(done, total int) { calls = append(calls, call{done, total}) },
		ProgressInterval: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("Progress was never called")
	}
	last := calls[len(calls)-1]
	if last.done != rep.Cases() || last.total != rep.Cases() {
		t.Errorf("last call %d/%d, want %d/%d", last.done, last.total, rep.Cases(), rep.Cases())
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].done < calls[i-1].done || calls[i].total != last.total {
			t.Errorf("call %d: %v after %v", i, calls[i], calls[i-1])
		}
	}
}
