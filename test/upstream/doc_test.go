package upstream

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/bench/benchdoc"
	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/probe"
)

const docPath = repoRoot + "/docs/upstream.md"

// TestUpstreamDoc renders docs/upstream.md, the pull request's description, from the upstream format
// generated against v3.6.2 and v2.14.21, the recorded cases, the conformance modules' list of deviations
// and the committed benchmark data, and fails when the committed page differs (`make docs` rewrites it).
func TestUpstreamDoc(t *testing.T) {
	var baseCases []generator.UpstreamCase
	for _, tr := range trees {
		_, cases, err := generator.UpstreamTree(generator.UpstreamOptions{Base: os.DirFS(tr.dir(t)), ArgoCDVersion: tr.version})
		if err != nil {
			t.Fatal(err)
		}
		changed := map[string]bool{}
		for _, c := range cases {
			if c.Changed() {
				changed[c.Kind.Kind+"/"+c.InputPath] = true
			}
		}
		// The conformance modules' list (test/probe) and the generator's edit are two computations
		// of the same set: every listed deviation is an edited expectation, and nothing else is.
		for id := range probe.BuiltinDeviations {
			if !changed[id] {
				t.Errorf("%s: deviation %s is listed by the conformance modules but the upstream suite keeps its expectation", tr.version, id)
			}
		}
		for id := range changed {
			if _, ok := probe.BuiltinDeviations[id]; !ok {
				t.Errorf("%s: the upstream suite changes %s, which the conformance modules do not list as a deviation", tr.version, id)
			}
		}
		if tr == base {
			baseCases = cases
		} else if !sameChanges(baseCases, cases) {
			t.Errorf("%s: the pull request changes other expectations than on %s", tr.version, base.version)
		}
	}
	docblock.Check(t, docPath, "test/upstream TestUpstreamDoc", []byte(renderDoc(t, baseCases)))
}

func sameChanges(a, b []generator.UpstreamCase) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].InputPath != b[i].InputPath || a[i].Old != b[i].Old || a[i].New != b[i].New {
			return false
		}
	}
	return true
}

// TestUpstreamKeepsInputs holds the generated tree to the pull request's terms on both releases: no file
// of Argo CD's is replaced but health.lua and health_test.yaml, and each health_test.yaml is Argo CD's,
// line for line, but for the status and message lines of the cases it changes and the cases it appends.
func TestUpstreamKeepsInputs(t *testing.T) {
	for _, tr := range trees {
		src := tr.dir(t)
		files, cases, err := generator.UpstreamTree(generator.UpstreamOptions{Base: os.DirFS(src), ArgoCDVersion: tr.version})
		if err != nil {
			t.Fatal(err)
		}
		changed := map[string]int{}
		for _, c := range cases {
			if c.Changed() {
				changed[c.Kind.Kind]++
			}
		}
		for _, f := range files {
			orig, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.Path)))
			if err != nil {
				continue // a file the pull request adds
			}
			switch path.Base(f.Path) {
			case "health.lua":
			case "health_test.yaml":
				kind := path.Base(path.Dir(f.Path))
				o, g := strings.Split(strings.TrimRight(string(orig), "\n"), "\n"), strings.Split(string(f.Data), "\n")
				diff := 0
				for i := range o {
					if i >= len(g) {
						diff = len(o)
						break
					}
					if o[i] != g[i] {
						diff++
					}
				}
				// A changed case rewrites at most its status and its message line.
				if diff > 2*changed[kind] || diff < min(1, changed[kind]) {
					t.Errorf("%s %s: %d of Argo CD's lines differ for %d changed cases", tr.version, f.Path, diff, changed[kind])
				}
			default:
				t.Errorf("%s: the upstream format replaces Argo CD's %s; its inputs must be kept", tr.version, f.Path)
			}
		}
	}
}

func status(h engine.Health) string {
	if h.Status == "" {
		return "no status"
	}
	if h.Message == "" {
		return "`" + h.Status + "`"
	}
	return "`" + h.Status + "` " + mdEscape(h.Message)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`).Replace(s)
}

// What Argo CD does with a resource's health, per status (sources in the rendered doc).
func waveTask(s string) string { // a non-hook resource of a sync with several waves or a hook
	switch s {
	case engine.Healthy:
		return "succeeds"
	case engine.Degraded:
		return "fails the sync"
	}
	return "waits"
}

func hookTask(s string) string { // the resource is itself a hook
	switch s {
	case engine.Healthy, "": // getOperationPhase keeps its default, Succeeded, for a status it does not know
		return "succeeds"
	case engine.Degraded, engine.Unknown:
		return "fails the sync"
	}
	return "waits"
}

func appWait(s string) string { // argocd app wait --health, on the application health this resource gives
	switch s {
	case engine.Healthy:
		return "returns"
	case engine.Degraded:
		return "fails (turned Degraded)"
	}
	return "keeps waiting"
}

func notifies(s string) string {
	if s == engine.Degraded {
		return "on-health-degraded fires"
	}
	return "no health notification"
}

func move(f func(string) string, old, new string) string {
	if f(old) == f(new) {
		return "—"
	}
	return f(old) + " → " + f(new)
}

// renderDoc is the page below its title, which is the doc's own, above the block.
func renderDoc(t *testing.T, cases []generator.UpstreamCase) string {
	t.Helper()
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("\n")
	w("Every Argo CD installation runs the built-in `resource_customizations/argoproj.io/Rollout/health.lua`, which passes\n")
	w("Argo Rollouts' `status.phase` through and has not looked at analysis since 2021; its AnalysisRun script maps an\n")
	w("Inconclusive run to `Unknown`. `analysis-health generate --format upstream` writes the pull request that makes\n")
	w("this project's scripts the built-ins, and this page is its description.\n\n")
	w("```\nanalysis-health generate --format upstream --argocd-source ~/src/argo-cd --out pr/\ncp -r pr/. ~/src/argo-cd/\n```\n\n")
	w("It writes, per kind (Rollout, AnalysisRun, Experiment), under `resource_customizations/argoproj.io/<Kind>/`:\n\n")
	w("- `health.lua`: the script in source form, without this project's header and options (the defaults apply);\n")
	w("- `health_test.yaml`: Argo CD's own, every case kept with its input file untouched, only the status and message\n")
	w("  lines of the cases whose expectation changes rewritten, and our cases appended;\n")
	w("- `testdata/%s/`: the inputs of our cases, frames recorded from Argo Rollouts' own controllers (v1.8.5 and\n", generator.UpstreamCasesDir)
	w("  v1.10.2, on a real kube-apiserver) with the server-set metadata trimmed.\n\n")
	w("No action changes: Argo CD already ships `pause`, `skip-current-step` and the AnalysisRun's `terminate`, and this\n")
	w("project's remaining action rules (disabling promote-full and skip-current-step while an analysis of the current\n")
	w("revision has failed, an Experiment `terminate`) are policy better proposed on their own.\n\n")

	var changed, own, kept []generator.UpstreamCase
	for _, c := range cases {
		switch {
		case c.Changed():
			changed = append(changed, c)
		case c.Upstream:
			kept = append(kept, c)
		default:
			own = append(own, c)
		}
	}
	w("## What changes for users of the built-in\n\n")
	w("%d of Argo CD's %d cases for these kinds change expectation (the %d deviations the conformance modules list against\n", len(changed), len(changed)+len(kept), len(probe.BuiltinDeviations))
	w("Argo CD's suites); the same %d on %s and %s:\n\n", len(changed), base.version, backport.version)
	w("| Case | Built-in today | With this change | Why |\n|---|---|---|---|\n")
	for _, c := range changed {
		w("| %s `%s` | %s | %s | %s |\n", c.Kind.Kind, c.InputPath, status(c.Old), status(c.New), mdEscape(probe.BuiltinDeviations[c.Kind.Kind+"/"+c.InputPath].Why))
	}
	w("\nThe new cases, each a recorded state where the built-in and this script answer differently (one per kind and pair\n")
	w("of statuses, the first in the recordings):\n\n")
	w("| Case | Built-in today | With this change |\n|---|---|---|\n")
	for _, c := range own {
		old := builtinAnswer(t, base, c)
		w("| %s `%s` | %s | %s |\n", c.Kind.Kind, path.Base(c.InputPath), status(old), status(c.New))
	}
	w("\n## What moves in Argo CD\n\n")
	w("Per changed expectation, what a user sees and what Argo CD does differently (— = nothing moves). A Rollout is\n")
	w("managed by its Application; the AnalysisRuns and Experiments a Rollout creates carry ownerReferences and are not,\n")
	w("so their health shows in the resource tree and reaches application health, waves, hooks and `app wait` only where\n")
	w("an Application manages the object itself (as a hook, say).\n\n")
	w("| Case | UI | Notifications on health | Sync waves | Hooks | `argocd app wait --health` |\n|---|---|---|---|---|---|\n")
	for _, c := range append(append([]generator.UpstreamCase(nil), changed...), own...) {
		old := c.Old
		if !c.Upstream {
			old = builtinAnswer(t, base, c)
		}
		ui := "message only"
		if old.Status != c.New.Status {
			ui = "health " + cmp.Or(old.Status, "(none)") + " → " + c.New.Status + ", new message"
		}
		w("| %s `%s` | %s | %s | %s | %s | %s |\n", c.Kind.Kind, path.Base(c.InputPath), ui,
			move(notifies, old.Status, c.New.Status), move(waveTask, old.Status, c.New.Status),
			move(hookTask, old.Status, c.New.Status), move(appWait, old.Status, c.New.Status))
	}
	w("\nThe one change to what a sync does with a status: an inconclusive AnalysisRun that is itself a hook (a PostSync\n")
	w("verification, say) no longer fails the sync but holds it, as an inconclusive pause holds a Rollout, until someone\n")
	w("terminates or deletes the run; Argo CD sets no sync timeout by default.\n")
	w("\nSources, in Argo CD %s and gitops-engine/v3 %s: application health is the worst resource health in the order\n", base.version, base.version)
	w("Healthy, Suspended, Progressing, Missing, Degraded, Unknown (`controller/health.go` `setApplicationHealth`,\n")
	w("`pkg/health/health.go` `healthOrder`); a resource of a sync with several waves or phases succeeds when Healthy,\n")
	w("fails the sync when Degraded and is waited for otherwise, and a hook fails on Unknown or Degraded and is waited for\n")
	w("while Progressing or Suspended (`pkg/sync/sync_context.go` `Sync`, `getOperationPhase`); `argocd app wait --health`\n")
	w("returns once the application is Healthy and fails when a resource turns Degraded (`cmd/argocd/commands/app.go`\n")
	w("`checkResourceStatus`, `waitOnApplicationStatus`); the catalog's `on-health-degraded` trigger fires on\n")
	w("`app.status.health.status == 'Degraded'` (`notifications_catalog/install.yaml`).\n\n")

	w("## What does not change\n\n")
	perKind := map[string][2]int{}
	for _, c := range cases {
		if c.Upstream {
			n := perKind[c.Kind.Kind]
			n[1]++
			if !c.Changed() {
				n[0]++
			}
			perKind[c.Kind.Kind] = n
		}
	}
	var kinds []string
	for k := range perKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		w("- %s: %d of Argo CD's %d cases keep their expectation.\n", k, perKind[k][0], perKind[k][1])
	}
	w("- Every status the changed cases had, but AnalysisRun's Inconclusive (`Unknown` → `Suspended`): the other changes\n")
	w("  are messages that now name the metric, measurement or analysis behind the verdict.\n")
	w("- A Rollout whose analysis is settled gets the built-in's answer: Argo Rollouts' phase and message, the generation\n")
	w("  gates, and the legacy logic for controllers older than v1.0.\n")
	w("- No options, no new fields read outside `status`, no action; the scripts run without the string, math and os\n")
	w("  libraries, so they also run from argocd-cm.\n\n")

	w("## Cost\n\n")
	renderCost(t, &b)

	w("## Linked issues\n\n")
	for _, l := range []string{
		"argoproj/argo-cd#4669: a PostSync hook ran on a Rollout's stale health; the comment on `delayBetweenSyncWaves` (`controller/sync.go`) names a health.lua that checks the observed generation as the real fix",
		"argoproj/argo-cd#13514: whether a missing Rollout makes its Application Missing depends on an argocd-cm health override existing; a built-in needs none",
		"argoproj/argo-cd#6380, argoproj/argo-cd#6967 (2021): the last change to the Rollout script's analysis handling, which passes `status.phase` and `status.message` through",
		"argoproj/argo-rollouts#771: Argo CD's PostSync ran before the Rollout was healthy; the maintainers' answer: Argo CD's health.lua governs it",
		"akuity/kargo#3777: users read a Rollout's analysis from Argo CD's health check and ask Kargo not to run it twice",
	} {
		w("- %s\n", l)
	}
	w("\n## Proof in Argo CD's own tree\n\n")
	w("`make test-upstream` (module `test/upstream`, part of `make test`) copies the module source of\n")
	w("`%s@%s` and `%s@%s` out of the Go module cache, overlays what `generate --format upstream` writes\n", base.module, base.version, backport.module, backport.version)
	w("against each, and runs Argo CD's own tests of `%s` there, unmodified: `TestLuaHealthScript` (every\n", strings.Join(argoPackages, " "))
	w("`health_test.yaml`), `TestLuaResourceActionsScript` (every `action_test.yaml`) and the rest of the package, which runs\n")
	w("the built-in scripts through `GetHealthScript`, the script cache and the wildcard lookup. The test fails unless\n")
	w("every test passes and `TestLuaHealthScript` ran every case of the edited suites. It then puts Argo CD's own\n")
	w("scripts back and runs `TestLuaHealthScript` on Argo CD's suites with our recorded cases appended at the built-in's\n")
	w("answers: the \"Built-in today\" column above is Argo CD's own evaluation too. %s's go.mod replaces\n", base.version)
	w("`github.com/argoproj/argo-cd/gitops-engine/v3` with `./gitops-engine`, a nested module the module zip leaves out:\n")
	w("the test puts back that module at the version go.mod requires, and changes nothing else.\n")
	return b.String()
}

// builtinAnswer is the built-in script's answer on one of our recorded inputs, run as Argo CD runs its
// built-ins (open libraries); TestArgoCDOwnTests holds it to Argo CD's own evaluation.
func builtinAnswer(t *testing.T, tr tree, c generator.UpstreamCase) engine.Health {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(tr.kindDir(t, c.Kind.Kind), "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, "generator", "upstreamcases", c.Kind.Key(), path.Base(c.InputPath)))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := loadYAML(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, err := openLibs.Health(obj, string(script))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// renderCost reads the committed `make bench` output: one evaluation through each VM's real path, ours
// (the form the generator emits for that VM from argocd-cm) against the built-in, per kind and path, and
// the cluster-weighted mix of benchdoc.Mix.
func renderCost(t *testing.T, b *strings.Builder) {
	t.Helper()
	vms := []struct{ name, file, form string }{
		{"", "v2.14.txt", "minified, parsed on every evaluation"},
		{"", "v3.6.txt", "the long strings inlined, compiled once and cached"},
	}
	// Each file is named by the release it was measured on, as benchdoc (docs/performance.md) names it.
	for i := range vms {
		for _, v := range benchdoc.VMs {
			if v.File == vms[i].file {
				vms[i].name = v.Name
			}
		}
		if vms[i].name == "" {
			t.Fatalf("benchdoc.VMs has no %s", vms[i].file)
		}
	}
	fmt.Fprintf(b, "From the committed `make bench` output (`internal/bench/benchdoc/testdata`, the data of docs/performance.md): CPU time\n")
	fmt.Fprintf(b, "and allocations of one health evaluation through Argo CD's own path, this script against the built-in, per kind\n")
	fmt.Fprintf(b, "and path. The benchmarks measure the form `generate` ships for argocd-cm on that VM; the pull request ships the\n")
	fmt.Fprintf(b, "source form, the same rules, which on %s compiles its long-string chunks on the evaluations that reach them.\n\n", vms[1].name)
	fmt.Fprintf(b, "| Kind | Path |")
	for _, vm := range vms {
		fmt.Fprintf(b, " %s ours / built-in (µs) | allocs |", vm.name)
	}
	fmt.Fprintf(b, "\n|---|---|")
	for range vms {
		fmt.Fprintf(b, "---|---|")
	}
	fmt.Fprintf(b, "\n")
	results := make([]map[string]benchdoc.Result, len(vms))
	for i, vm := range vms {
		f, err := os.Open(filepath.Join(repoRoot, "internal", "bench", "benchdoc", "testdata", vm.file))
		if err != nil {
			t.Fatal(err)
		}
		results[i], err = benchdoc.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	mixOurs, mixBuiltin := make([]float64, len(vms)), make([]float64, len(vms))
	for _, wgt := range benchdoc.Mix {
		fmt.Fprintf(b, "| %s | %s |", wgt.Kind, wgt.Path)
		for i := range vms {
			key := "BenchmarkCost/" + wgt.Kind + "/" + wgt.Path + "/"
			o, okO := results[i][key+"ours"]
			bi, okB := results[i][key+"builtin"]
			if !okO || !okB {
				t.Fatalf("%s: no %sours or %sbuiltin in the committed bench data", vms[i].name, key, key)
			}
			fmt.Fprintf(b, " %.1f / %.1f (%.2f×) | %.0f / %.0f |", o.NsPerOp/1000, bi.NsPerOp/1000, o.NsPerOp/bi.NsPerOp, o.AllocsPerOp, bi.AllocsPerOp)
			mixOurs[i] += wgt.Percent * o.NsPerOp
			mixBuiltin[i] += wgt.Percent * bi.NsPerOp
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\nOn the cluster-weighted mix of docs/performance.md (share of evaluations per kind and path):")
	for i, vm := range vms {
		fmt.Fprintf(b, " %s %.2f× the built-in (%s);", vm.name, mixOurs[i]/mixBuiltin[i], vm.form)
	}
	s := strings.TrimSuffix(b.String(), ";")
	b.Reset()
	b.WriteString(s + ".\n\n")
}
