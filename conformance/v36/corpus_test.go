package v36

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/conformance/corpus"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
)

var corpusRow = regexp.MustCompile("^\\| `([^`]+)` \\(([^)]+)\\) \\| \\*\\*([^*]+)\\*\\*")

// The upstream-corpus table of docs/health-semantics.md is computed in the main module, where Argo CD
// v3.6.1's built-in scripts run in v2.14's VM. Here every object of v3.6.1's built-in suites goes
// through v3.6's own code: our script through v3.6's util/lua (equal to the engine's v3.6 profile,
// never Unknown or Missing), the built-in through v3.6's controller path (gitops-engine
// GetResourceHealth without overrides); every status difference must be a row of the table with v3.6's
// built-in status, and every such row must still differ.
func TestUpstreamCorpusArgoCDv36(t *testing.T) {
	mod := upstream.ModuleDir(t, "github.com/argoproj/argo-cd/v3")
	label := "argo-cd@" + upstream.ModuleVersion(t, "github.com/argoproj/argo-cd/v3")
	doc, err := os.ReadFile("../../docs/health-semantics.md")
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
			u := &unstructured.Unstructured{Object: o.Obj}
			ours, err := engine.Engine{Profile: engine.V36}.Health(u.DeepCopy().Object, script)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(u.DeepCopy(), script)
			if err != nil || vm == nil || string(vm.Status) != ours.Status || vm.Message != ours.Message {
				t.Errorf("%s: v3.6 VM %v (%v) != engine %+v", file, vm, err, ours)
			}
			switch ours.Status {
			case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
			default:
				t.Errorf("%s: our script returned %q", file, ours.Status)
			}
			builtin := "error"
			if hs, err := health.GetResourceHealth(u.DeepCopy(), argolua.ResourceHealthOverrides(nil)); err == nil && hs != nil {
				builtin = string(hs.Status)
			}
			if builtin == ours.Status {
				continue
			}
			seen[file] = true
			if got, ok := documented[file]; !ok || got != builtin {
				t.Errorf("%s: ours %s, v3.6's built-in %s; the table says %q", file, ours.Status, builtin, got)
			}
		}
	}
	for f := range documented {
		if !seen[f] {
			t.Errorf("the table lists %s as differing from %s's built-in, but in v3.6 it does not", f, label)
		}
	}
	if n < 50 {
		t.Errorf("only %d objects in %s's suites", n, label)
	}
}
