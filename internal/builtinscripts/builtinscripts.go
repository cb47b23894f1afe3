// Package builtinscripts runs `verify`'s fuzzer and lint over one Argo CD release's own
// resource_customizations tree, replays every fuzz finding in that release's VM (each conformance module
// supplies the replay), and renders the result as that release's block of docs/argocd-builtin-scripts.md.
// It keeps the main module's and test/argocd-v3.2's runs identical but for the Argo CD code they call.
package builtinscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// Settings of the run in `make test`: deterministic and a few seconds per release on two cores.
const (
	Mutations      = 10
	Seed           = 1
	MinimizeBudget = 60
)

// Run is one release's tree and how to replay a finding in that release's own code.
type Run struct {
	// Version is the Argo CD release, e.g. "v2.14.21".
	Version string
	// Test names the Go test and module that produce the block, for the document.
	Test string
	FS   fs.FS
	// Engine is our VM profile for the release.
	Engine verify.Engine
	// ArgoCD builds the evaluation of a script in Argo CD's own VM, classified like verify's.
	ArgoCD func(s verify.ScriptFile) verify.Evaluator
}

// Result is what Execute found.
type Result struct {
	Run
	Scripts  []verify.ScriptFile
	Fuzz     verify.FuzzReport
	Lint     []verify.LintFinding
	Ours     verify.FuzzReport
	OursLint []verify.LintFinding
}

// Execute fuzzes and lints the release's tree under the built-ins' real settings (health scripts with
// open libraries, discovery and actions without) and our bundled tree under argocd-cm's (no open
// libraries), and fails t for every fuzz finding Argo CD's own VM does not reproduce exactly.
func Execute(t *testing.T, r Run) Result {
	t.Helper()
	res := Result{Run: r}
	if r.Engine.Timeout == 0 {
		// The report must not depend on the machine: a slow evaluation on a loaded CI machine is not a
		// timeout finding (none of the built-ins comes near Argo CD's 1 s).
		r.Engine.Timeout = 30 * time.Second
	}
	var err error
	if res.Scripts, err = verify.Scripts(r.FS); err != nil {
		t.Fatal(err)
	}
	opts := verify.FuzzOptions{Engine: r.Engine, HealthOpenLibs: true, N: Mutations, Seed: Seed, MinimizeBudget: MinimizeBudget}
	if res.Fuzz, err = verify.Fuzz(r.FS, opts); err != nil {
		t.Fatal(err)
	}
	if res.Lint, err = verify.Lint(r.FS, true); err != nil {
		t.Fatal(err)
	}
	opts.HealthOpenLibs = false
	if res.Ours, err = verify.Fuzz(lua.FS, opts); err != nil {
		t.Fatal(err)
	}
	if res.OursLint, err = verify.Lint(lua.FS, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Ours.Findings() {
		t.Errorf("our bundled tree: %s", f.Summary())
	}
	for _, f := range res.OursLint {
		t.Errorf("our bundled tree: %s", f)
	}

	byPath := map[string]verify.ScriptFile{}
	for _, s := range res.Scripts {
		byPath[s.Path] = s
	}
	for _, f := range res.Fuzz.Findings() {
		kind, msg := Replay(r.ArgoCD(byPath[f.Script]), f)
		if kind != f.Kind || msg != f.Message {
			b, _ := json.Marshal(f.Object)
			t.Errorf("%s: ours %s %q, Argo CD %s: %s %q\nobject: %s", f.Script, f.Kind, f.Message, r.Version, kind, msg, b)
		}
	}
	return res
}

// Replay evaluates a finding's object in Argo CD. Argo CD's 1 s deadline cannot be raised, so on a
// loaded machine an evaluation that is not a timeout finding may still hit it: such a replay is tried
// again, up to three times.
func Replay(argo verify.Evaluator, f verify.FuzzFinding) (verify.FindingKind, string) {
	kind, msg := argo(f.Object)
	for try := 1; try < 3 && kind == verify.Timeout && f.Kind != verify.Timeout; try++ {
		kind, msg = argo(f.Object)
	}
	return kind, msg
}

type counts map[string]int

func (c counts) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, c[k]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func kindCounts(fs []verify.FuzzFinding) counts {
	c := counts{}
	for _, f := range fs {
		c[string(f.Kind)]++
	}
	return c
}

func ruleCounts(fs []verify.LintFinding) counts {
	c := counts{}
	for _, f := range fs {
		c[f.Rule]++
	}
	return c
}

// Markdown renders the release's block: totals beside our tree, then one row per script.
func (r Result) Markdown() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## Argo CD %s\n\n", r.Version)
	fmt.Fprintf(&b, "Produced by %s: seed %d, %d mutations per script and test object, each finding shrunk with at most %d evaluations. "+
		"Built-in health scripts run with open libraries and discovery and actions without, as Argo CD runs them; our scripts run as argocd-cm runs them (no open libraries).\n\n",
		r.Test, Seed, Mutations, MinimizeBudget)
	fmt.Fprintf(&b, "Every fuzz finding was replayed in Argo CD %s's own code (health: gitops-engine `health.GetResourceHealth` with `util/lua.ResourceHealthOverrides`, which resolves the built-in script; discovery: `VM.GetResourceActionDiscovery` + `ExecuteResourceActionDiscovery`; actions: `VM.GetResourceAction` + `ExecuteResourceAction`) and gave the same error or health.\n\n", r.Version)

	b.WriteString("| tree | scripts | test objects | evaluations | fuzz findings | by kind | lint findings | by rule |\n|---|---:|---:|---:|---:|---|---:|---|\n")
	row := func(name string, rep verify.FuzzReport, lf []verify.LintFinding, counted bool) {
		seeds, cases := "every fixture", "all of them × "+fmt.Sprint(Mutations)
		if counted {
			n := 0
			for _, s := range rep.Scripts {
				n += s.Seeds
			}
			seeds, cases = fmt.Sprint(n), fmt.Sprint(rep.Cases())
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %d | %s |\n", name, len(rep.Scripts), seeds, cases,
			len(rep.Findings()), kindCounts(rep.Findings()), len(lf), ruleCounts(lf))
	}
	row("Argo CD "+r.Version+" built-ins", r.Fuzz, r.Lint, true)
	// Our fixtures grow with our scripts; their count is not this report's business, the zero is.
	row("analysis-health `lua/`", r.Ours, r.OursLint, false)

	withFindings := 0
	for _, s := range r.Fuzz.Scripts {
		if len(s.Findings) > 0 {
			withFindings++
		}
	}
	fmt.Fprintf(&b, "\n%d of %d built-in scripts have fuzz findings; %d have no test object to start from (no suite names one) and were linted only.\n\n",
		withFindings, len(r.Fuzz.Scripts), noSeeds(r.Fuzz))

	lintBy := map[string][]verify.LintFinding{}
	for _, f := range r.Lint {
		lintBy[f.Path] = append(lintBy[f.Path], f)
	}
	b.WriteString("| script | evaluations | fuzz findings | lint | smallest crashing object (JSON) |\n|---|---:|---|---|---|\n")
	for _, s := range r.Fuzz.Scripts {
		min := ""
		if f, ok := smallest(s.Findings); ok {
			obj, _ := json.Marshal(f.Object)
			min = fmt.Sprintf("`%s` → %s `%s`", obj, f.Kind, cell(f.Message))
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s | %s |\n", s.Path, s.Cases, kindCounts(s.Findings), ruleCounts(lintBy[s.Path]), min)
	}
	return b.String()
}

func noSeeds(rep verify.FuzzReport) int {
	n := 0
	for _, s := range rep.Scripts {
		if s.Seeds == 0 {
			n++
		}
	}
	return n
}

// smallest picks the finding with the smallest object, errors before other kinds.
func smallest(fs []verify.FuzzFinding) (verify.FuzzFinding, bool) {
	var best verify.FuzzFinding
	found := false
	rank := func(f verify.FuzzFinding) int {
		if f.Kind == verify.LuaError {
			return 0
		}
		return 1
	}
	for _, f := range fs {
		size := len(mustJSON(f.Object))
		if !found || rank(f) < rank(best) || (rank(f) == rank(best) && size < len(mustJSON(best.Object))) {
			best, found = f, true
		}
	}
	return best, found
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "`", "'")
}
