package generator

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/lua"
)

// Regenerate with: go test ./generator/ -update (the flag belongs to internal/golden).

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
}

// Every format with every option set, compared with testdata/<option set>/<format>[.yaml].
func TestGolden(t *testing.T) {
	for _, set := range optionSets {
		for _, f := range Formats() {
			t.Run(set.name+"/"+string(f), func(t *testing.T) {
				files, err := Generate(f, set.opts)
				if err != nil {
					t.Fatal(err)
				}
				if f == Lua {
					files = withoutVerbatimCopies(t, files)
				}
				if f.IsDir() {
					assertGoldenDir(t, filepath.Join("testdata", set.name, string(f)), files)
					return
				}
				if len(files) != 1 {
					t.Fatalf("single-file format rendered %d files", len(files))
				}
				assertGoldenFile(t, filepath.Join("testdata", set.name, string(f)+".yaml"), files[0].Data)
			})
		}
	}
}

// withoutVerbatimCopies checks the lua tree's files that must be, or happen to be, byte-for-byte copies of
// the embedded tree (every fixture; scripts and suites the options leave alone) directly against it, checks
// that no embedded file of the selected kinds is missing (actions' only when actions are on), and returns
// the rest for the golden comparison: the golden folders hold what the generator computes, not more copies
// of the bundled scripts and fixtures.
func withoutVerbatimCopies(t *testing.T, files []File) []File {
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
		want, err := lua.FS.ReadFile(f.Path)
		if strings.Contains(f.Path, "/testdata/") {
			fixtures++
			if err != nil || !bytes.Equal(want, f.Data) {
				t.Errorf("%s: not a byte-for-byte copy of the embedded fixture (%v)", f.Path, err)
			}
			continue
		}
		if err == nil && (bytes.Equal(want, f.Data) || path.Ext(f.Path) == ".lua" && onlyOptionsDiffer(t, f.Path, want, f.Data)) {
			continue
		}
		rest = append(rest, f)
	}
	for dir := range kinds {
		err := fs.WalkDir(lua.FS, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.Contains(p, "/actions/") && !actions {
				return nil
			}
			if !present[p] {
				t.Errorf("%s: embedded file missing from the tree", p)
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

func assertGoldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.File(t, path, got)
}

// assertGoldenDir compares a folder format file by file, including files missing on either side.
func assertGoldenDir(t *testing.T, dir string, files []File) {
	t.Helper()
	byPath := make(map[string][]byte, len(files))
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	golden.Dir(t, dir, byPath)
}
