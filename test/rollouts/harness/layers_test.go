package harness

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJobsImportNoSibling holds the recorder's layers: cluster under the harness, the harness and
// kargoverify under the jobs, and no job importing another (the version modules wire them and hand the
// catalogue to the proofs that play it).
func TestJobsImportNoSibling(t *testing.T) {
	const module = "github.com/analysis-health/analysis-health/test/rollouts/"
	allowed := map[string][]string{
		"cluster":     nil,
		"harness":     {"cluster"},
		"kargoverify": {"cluster", "harness"},
		"installs":    {"cluster"},
		"scenarios":   {"harness"},
		"pluginproof": {"cluster", "harness", "kargoverify"},
		"reliability": {"cluster", "harness", "kargoverify"},
		"live":        {"cluster", "harness", "installs", "kargoui", "kargoverify"},
		// two API servers of its own, the plugin's token rotation between them: no harness World
		"tokenrotation": {"cluster"},
	}
	for pkg, may := range allowed {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range ast.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if ok && !slices.Contains(may, dep) {
					t.Errorf("%s imports %s: package %s may import only %v", f, dep, pkg, may)
				}
			}
		}
	}
	// every package of the module is placed
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := allowed[e.Name()]; !ok && e.IsDir() && !slices.Contains([]string{"cmd", "kargoui", "kubectl"}, e.Name()) {
			t.Errorf("package %s has no place in the layers of this test", e.Name())
		}
	}
}
