package generator

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// Regenerate with: go test ./generator/ -update (the flag belongs to internal/golden).
//
// The goldens prove formats, not copies of the scripts: TestGolden renders every format with every option
// set around the stub tree below (testdata/stub: a few-line health.lua per kind, tiny actions), and
// TestGoldenEmbedded pins the real bytes once per format, with the default options and the embedded
// scripts. An edit of a bundled script so changes one golden per format (and per form, forms_test.go).

// stubTree is the script tree the format goldens render, in package lua's layout: per kind a few-line
// health.lua with the options block (inconclusiveStatus; for Rollout humanGate too), and for Rollout a discovery.lua with its options
// block (blockBypassOnFailedAnalysis), one action, a health suite and an action suite whose expectations the
// options change; AnalysisRun has actions without options and no suites, Experiment no actions.
var stubTree = os.DirFS(filepath.Join("testdata", "stub"))

// optionSets are the option combinations every format is rendered with, by golden folder name.
var optionSets = []struct {
	name string
	opts Options
}{
	{"default", Options{}},
	{"degraded", Options{Inconclusive: InconclusiveDegraded}},
	{"rollout-only", Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "Rollout"}}, Namespace: "gitops"}},
	{"no-actions", Options{Actions: new(false)}},
	{"no-block-bypass", Options{BlockBypassOnFailedAnalysis: new(false)}},
	{"human-gate", Options{HumanGate: HumanGateHealthy}},
}

// Every format with every option set, rendered around the stub tree, compared with
// testdata/stubbed/<option set>/<format>[.yaml]: keys, nesting, quoting, block scalars, headers, the kinds
// selected, the namespace, actions on or off, the options' rewrites and the derived suites, and ordering.
// Every option set must change every format's output, so none of them passes for lack of a stub marker.
func TestGolden(t *testing.T) {
	for _, f := range Formats() {
		defaults, err := generate(stubTree, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range optionSets {
			t.Run(set.name+"/"+string(f), func(t *testing.T) {
				files, err := generate(stubTree, f, set.opts)
				if err != nil {
					t.Fatal(err)
				}
				if set.name != "default" && fmt.Sprint(files) == fmt.Sprint(defaults) {
					t.Errorf("the %s options change nothing in the stub's %s output", set.name, f)
				}
				assertFormatGolden(t, stubTree, filepath.Join("testdata", "stubbed", set.name), f, files)
			})
		}
	}
}

// The real bytes: every format with the default options and the embedded scripts, compared with
// testdata/embedded/<format>[.yaml] (the lua tree's verbatim copies against the embedded tree instead).
func TestGoldenEmbedded(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			files, err := Generate(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			assertFormatGolden(t, lua.FS, filepath.Join("testdata", "embedded"), f, files)
		})
	}
}

// The stub tree is a tree `verify` passes, like the bundled one (the lua format derives its suites for
// other options only from a bundled suite that holds), and so is the lua tree rendered from it with every
// option set.
func TestStubTreeVerifies(t *testing.T) {
	runner := verify.Runner{Engine: verify.Engine{Profile: verify.V214}}
	rep, err := runner.Tree(stubTree, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failures() {
		t.Error(f)
	}
	if len(rep.Results) == 0 {
		t.Error("the stub tree has no cases")
	}
	for _, set := range optionSets {
		files, err := generate(stubTree, Lua, set.opts)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), set.name)
		if err := WriteDir(dir, files); err != nil {
			t.Fatal(err)
		}
		rep, err := runner.Tree(os.DirFS(dir), ".")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Failures() {
			t.Errorf("%s: %s", set.name, f)
		}
		if len(rep.Results) == 0 {
			t.Errorf("%s: the rendered stub tree has no cases", set.name)
		}
	}
}

// assertFormatGolden compares format f's files, rendered from src, with dir/<format>[.yaml]; the lua
// tree's verbatim copies of src are checked against it (withoutVerbatimCopies) rather than stored.
func assertFormatGolden(t *testing.T, src fs.FS, dir string, f Format, files []File) {
	t.Helper()
	if f == Lua {
		files = withoutVerbatimCopies(t, src, files)
	}
	if f.IsDir() {
		assertGoldenDir(t, filepath.Join(dir, string(f)), files)
		return
	}
	if len(files) != 1 {
		t.Fatalf("single-file format rendered %d files", len(files))
	}
	assertGoldenFile(t, filepath.Join(dir, string(f)+".yaml"), files[0].Data)
}

// withoutVerbatimCopies checks the lua tree's files that must be, or happen to be, byte-for-byte copies of
// the tree src they were rendered from (lua.FS, or the stub; every fixture, scripts and suites the options
// leave alone) directly against it, checks that no file of src of the selected kinds is missing (actions'
// only when actions are on), and returns the rest for the golden comparison: the golden folders hold what
// the generator computes, not more copies of the bundled scripts and fixtures.
func withoutVerbatimCopies(t *testing.T, src fs.FS, files []File) []File {
	t.Helper()
	var rest []File
	present := map[string]bool{}
	kinds := map[string]bool{}
	actions, fixtures := false, 0
	for _, f := range files {
		present[f.Path] = true
		parts := strings.SplitN(f.Path, "/", 3)
		if len(parts) == 3 {
			kinds[path.Join(parts[0], parts[1])] = true
		}
		if strings.Contains(f.Path, "/actions/") {
			actions = true
		}
		want, err := fs.ReadFile(src, f.Path)
		if strings.Contains(f.Path, "/testdata/") {
			fixtures++
			if err != nil || !bytes.Equal(want, f.Data) {
				t.Errorf("%s: not a byte-for-byte copy of the source tree's fixture (%v)", f.Path, err)
			}
			continue
		}
		if err == nil && (bytes.Equal(want, f.Data) || path.Ext(f.Path) == ".lua" && onlyOptionsDiffer(t, f.Path, want, f.Data)) {
			continue
		}
		rest = append(rest, f)
	}
	for dir := range kinds {
		err := fs.WalkDir(src, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.Contains(p, "/actions/") && !actions {
				return nil
			}
			if !present[p] {
				t.Errorf("%s: file of the source tree missing from the rendered tree", p)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if fixtures == 0 {
		t.Error("the tree has no fixtures")
	}
	return rest
}

// onlyOptionsDiffer reports whether got is the embedded script with nothing changed outside its options
// block (the options' values themselves are what the conformance tests evaluate); a change anywhere else is
// reported as an error.
func onlyOptionsDiffer(t *testing.T, name string, embedded, got []byte) bool {
	t.Helper()
	w, g := strings.Split(string(embedded), "\n"), strings.Split(string(got), "\n")
	if len(w) != len(g) {
		t.Errorf("%s: %d lines, the embedded script has %d", name, len(g), len(w))
		return true
	}
	inBlock := false
	for i := range w {
		switch strings.TrimSpace(w[i]) {
		case "-- analysis-health:options":
			inBlock = true
		case "-- analysis-health:end-options":
			inBlock = false
		}
		if w[i] != g[i] && !inBlock {
			t.Errorf("%s:%d differs from the embedded script outside its options block:\n%s\n%s", name, i+1, w[i], g[i])
		}
	}
	return true
}

// goldensRead records every golden file and folder the tests compared (or wrote), for TestMain's check that
// no golden under testdata is left unused.
var goldensRead = struct {
	sync.Mutex
	files, dirs map[string]bool
}{files: map[string]bool{}, dirs: map[string]bool{}}

// assertGoldenFile compares got with the golden file at path (golden.File), and records it as used.
func assertGoldenFile(t testing.TB, path string, got []byte) {
	t.Helper()
	goldensRead.Lock()
	goldensRead.files[filepath.Clean(path)] = true
	goldensRead.Unlock()
	golden.File(t, path, got)
}

// assertGoldenDir compares a folder format file by file, including files missing on either side
// (golden.Dir), and records the folder as used: golden.Dir fails on a file in it the output does not have.
func assertGoldenDir(t testing.TB, dir string, files []File) {
	t.Helper()
	goldensRead.Lock()
	goldensRead.dirs[filepath.Clean(dir)] = true
	goldensRead.Unlock()
	byPath := make(map[string][]byte, len(files))
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	golden.Dir(t, dir, byPath)
}

// goldenRoot holds the goldens; stubRoot, below it, is test input (the stub tree), not goldens.
var goldenRoot, stubRoot = "testdata", filepath.Join("testdata", "stub")

// TestMain fails a run of the whole package (no -run, -skip or -list) that passed but left a file under
// testdata unused: a golden no test compares any more (with or without -update) must be deleted, or it
// would keep a stale copy of the scripts that no test checks.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && wholePackageRan() {
		unused, err := unusedGoldens()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if len(unused) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: golden files no test reads; delete them:\n  %s\n", strings.Join(unused, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// wholePackageRan reports whether every test of the package ran, so every golden it uses was recorded.
func wholePackageRan() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// unusedGoldens lists the files under goldenRoot, the stub tree aside, that no assertGoldenFile or
// assertGoldenDir of this run compared.
func unusedGoldens() ([]string, error) {
	var unused []string
	err := filepath.WalkDir(goldenRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == stubRoot {
				return filepath.SkipDir
			}
			return nil
		}
		if goldensRead.files[p] {
			return nil
		}
		for dir := filepath.Dir(p); dir != "." && dir != string(filepath.Separator); dir = filepath.Dir(dir) {
			if goldensRead.dirs[dir] {
				return nil
			}
		}
		unused = append(unused, filepath.ToSlash(p))
		return nil
	})
	return unused, err
}
