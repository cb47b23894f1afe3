// Package modules holds the docs' tables of what each module pins to what its go.mod says, so that
// the supported versions (docs/install.md) and the list of proof modules (test/README.md) cannot drift
// from the proofs. The go.mod files are read by the go command itself (`go mod edit -json`).
package modules

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/test/kargo/stage"
)

const root = "../.."

// pinsByName matches a module named by the release it pins (argocd-v3.6, rollouts-v1.10, …).
var pinsByName = regexp.MustCompile(`-v[0-9]+\.[0-9]+$`)

type goMod struct {
	Module  struct{ Path string }
	Go      string
	Require []struct{ Path, Version string }
	Replace []struct {
		Old struct{ Path, Version string }
		New struct{ Path, Version string }
	}
}

// module is one go.mod: where it is, its doc comment, and the upstream it pins.
type module struct {
	dir, about string
	mod        goMod
}

// pinned is the version of path the module builds with: a replace of it (any version) wins over the
// require, as in the go command.
func (m module) pinned(path string) string {
	version := ""
	for _, r := range m.mod.Require {
		if r.Path == path {
			version = r.Version
		}
	}
	if version == "" {
		return ""
	}
	for _, r := range m.mod.Replace {
		if r.Old.Path == path && r.New.Version != "" {
			return r.New.Version
		}
	}
	return version
}

func readModules(t *testing.T) []module {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "test", "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(root, "go.mod"), filepath.Join(root, "test", "go.mod")}, paths...)
	var mods []module
	for _, p := range paths {
		out, err := exec.Command("go", "mod", "edit", "-json", p).Output()
		if err != nil {
			t.Fatalf("go mod edit -json %s: %v", p, err)
		}
		var m module
		if err := json.Unmarshal(out, &m.mod); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m.about, _, _ = strings.Cut(docComment(string(raw)), ". ")
		m.about = strings.TrimSuffix(m.about, ".") + "."
		if m.about == "" {
			t.Errorf("%s: no comment above the module line says what the module is for", p)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		m.dir = filepath.ToSlash(rel)
		mods = append(mods, m)
	}
	sort.SliceStable(mods[2:], func(i, j int) bool { return mods[2+i].dir < mods[2+j].dir })
	return mods
}

// docComment is the // comment block above the module line, as one paragraph.
func docComment(gomod string) string {
	var lines []string
	for _, l := range strings.Split(gomod, "\n") {
		if strings.HasPrefix(l, "module ") {
			break
		}
		if c, ok := strings.CutPrefix(l, "//"); ok {
			lines = append(lines, strings.TrimSpace(c))
		}
	}
	return strings.Join(lines, " ")
}

// upstreams are the columns: the releases a module pins, by module path.
var upstreams = []struct{ name, path string }{
	{"Argo CD", "github.com/argoproj/argo-cd/v2"},
	{"Argo CD", "github.com/argoproj/argo-cd/v3"},
	{"Argo Rollouts", "github.com/argoproj/argo-rollouts"},
	{"Kargo", "github.com/akuity/kargo"},
	{"Kubernetes", "k8s.io/client-go"},
}

func pins(m module) string {
	var out []string
	seen := map[string]bool{}
	for _, u := range upstreams {
		if v := m.pinned(u.path); v != "" && !seen[u.name] {
			seen[u.name] = true
			if u.name == "Kubernetes" {
				v = "libraries " + v
			}
			out = append(out, u.name+" "+v)
		}
	}
	return strings.Join(out, ", ")
}

// TestModulesTable renders test/README.md's table of modules, one row a go.mod.
func TestModulesTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| module | Go | pins | what it is |\n|---|---|---|---|\n")
	for _, m := range readModules(t) {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.dir, m.mod.Go, orDash(pins(m)), m.about)
	}
	docblock.Check(t, filepath.Join(root, "test", "README.md"), "test/modules TestModulesTable", []byte(b.String()))
}

// TestSupportedVersions renders docs/install.md's supported versions: every release a proof module
// pins, and Kargo's, whose rules test/kargo/stage is read from.
func TestSupportedVersions(t *testing.T) {
	// version -> the modules that prove it, per upstream
	byUpstream := map[string]map[string][]string{}
	for _, m := range readModules(t) {
		// the modules named by the release they pin; the others (the adapter, the shared harnesses) only
		// carry a pin to build alone
		if !pinsByName.MatchString(m.dir) {
			continue
		}
		for _, u := range upstreams {
			if v := m.pinned(u.path); v != "" {
				if byUpstream[u.name] == nil {
					byUpstream[u.name] = map[string][]string{}
				}
				byUpstream[u.name][v] = append(byUpstream[u.name][v], "`"+m.dir+"`")
			}
		}
	}
	var b strings.Builder
	b.WriteString("| upstream | versions proven (modules) |\n|---|---|\n")
	for _, name := range []string{"Argo CD", "Argo Rollouts", "Kubernetes"} {
		if len(byUpstream[name]) == 0 {
			t.Fatalf("no module pins %s", name)
		}
		var vs []string
		for v, mods := range byUpstream[name] {
			vs = append(vs, v+" ("+strings.Join(mods, ", ")+")")
		}
		sort.Strings(vs)
		label := name
		if name == "Kubernetes" {
			label = "Kubernetes client libraries (the API server is v1.34.5)"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", label, strings.Join(vs, "; "))
	}
	kargo := byUpstream["Kargo"]
	if len(kargo) != 1 || kargo[stage.KargoVersion] == nil {
		t.Fatalf("the Kargo the modules pin (%v) is not the one test/kargo/stage is read from (%s)", kargo, stage.KargoVersion)
	}
	fmt.Fprintf(&b, "| Kargo | %s (%s: its controller and webhooks in the live suite; its rules re-implemented in `test/kargo/stage` for the replay, held to it) |\n",
		stage.KargoVersion, strings.Join(kargo[stage.KargoVersion], ", "))
	docblock.Check(t, filepath.Join(root, "docs", "install.md"), "test/modules TestSupportedVersions", []byte(b.String()))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
