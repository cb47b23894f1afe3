package suite

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/corpus"
)

var corpusRow = regexp.MustCompile("^\\| `([^`]+)` \\(([^)]+)\\) \\| \\*\\*([^*]+)\\*\\*")

// UpstreamCorpus: the upstream-corpus table of docs/health-semantics.md is computed in the main module,
// where a v3 release's built-in scripts run in v2.14's VM. Here every object of the release's built-in
// suites goes through the release's own code: our script through its util/lua (equal to the engine's
// profile, never Unknown or Missing), the built-in through its controller path (gitops-engine
// GetResourceHealth without overrides); every status difference must be a row of the table with the
// release's built-in status, and every such row must still differ.
func UpstreamCorpus(t *testing.T, r Release) {
	mod := upstream.ModuleDir(t, r.Module())
	label := "argo-cd@" + upstream.ModuleVersion(t, r.Module())
	doc, err := os.ReadFile(RepoFile(t, "docs/health-semantics.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{} // file → built-in status in the table, for rows with a built-in difference
	for _, line := range strings.Split(string(doc), "\n") {
		if m := corpusRow.FindStringSubmatch(line); m != nil && m[2] == label && strings.Contains(line, "built-in: ") {
			documented[m[1]] = m[3]
		}
	}
	if len(documented) == 0 {
		t.Fatalf("docs/health-semantics.md lists no built-in difference for %s: was the table generated?", label)
	}
	argo := Defaults(r)
	e := engine.Engine{Profile: r.Profile()}
	seen := map[string]bool{}
	n := 0
	for _, k := range lua.Kinds() {
		dir := path.Join("resource_customizations", k.Group, k.Kind)
		objs, bad, err := corpus.Scan(filepath.Join(mod, dir), nil)
		if err != nil || len(bad) > 0 {
			t.Fatalf("%s: %v %v", dir, err, bad)
		}
		for _, o := range objs {
			n++
			file := path.Join(dir, o.File)
			script, err := lua.Health("argoproj.io", o.Kind)
			if err != nil {
				t.Fatal(err)
			}
			ours, err := e.Health(Copy(o.Obj), script)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			vm, err := argo.ExecuteHealth(o.Obj, script, false)
			if err != nil || vm == nil || vm.Status != ours.Status || vm.Message != ours.Message {
				t.Errorf("%s: %s VM %s (%v) != engine %+v", file, r.Version(), Show(vm), err, ours)
			}
			switch ours.Status {
			case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
			default:
				t.Errorf("%s: our script returned %q", file, ours.Status)
			}
			builtin := "error"
			if hs, err := argo.ResourceHealth(o.Obj); err == nil && hs != nil {
				builtin = hs.Status
			}
			if builtin == ours.Status {
				continue
			}
			seen[file] = true
			if got, ok := documented[file]; !ok || got != builtin {
				t.Errorf("%s: ours %s, %s's built-in %s; the table says %q", file, ours.Status, r.Version(), builtin, got)
			}
		}
	}
	for f := range documented {
		if !seen[f] {
			t.Errorf("the table lists %s as differing from %s's built-in, but in %s it does not", f, label, r.Version())
		}
	}
	if n < 50 {
		t.Errorf("only %d objects in %s's suites", n, label)
	}
}
