package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/kubectl-argo-rollouts/info"
	"github.com/argoproj/gitops-engine/pkg/health"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/conformance/corpus"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
)

const (
	rolloutsModule = "github.com/argoproj/argo-rollouts"
	argoCDv2Module = "github.com/argoproj/argo-cd/v2"
	argoCDv3Module = "github.com/argoproj/argo-cd/v3"
)

// corpusSource is one upstream module's files.
type corpusSource struct {
	label   string // module@version, as the table shows it
	objects []corpus.Object
	// builtin evaluates Argo CD's built-in health script of this source's Argo CD version; nil for the
	// Rollouts module, whose objects are judged by Argo CD v2.14's (the main module's) built-ins.
	builtinScripts map[string]string
}

// corpusResult is one object's three verdicts.
type corpusResult struct {
	source     string
	obj        corpus.Object
	ours       engine.Health
	builtin    engine.Health
	kubectl    engine.Health // kubectl-argo-rollouts' status mapped to a health status, message as it prints
	kubectlRaw string        // the status as kubectl-argo-rollouts prints it
	decodeErr  error
}

// Rollouts' examples/helm-blue-green is a chart: its templates are rendered with its own values.
func rolloutsCharts(t *testing.T, root string) (skip func(string) bool, objs []corpus.Object) {
	t.Helper()
	var charts []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "Chart.yaml" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			charts = append(charts, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, c := range charts {
		ch, err := loader.Load(filepath.Join(root, c))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "corpus", Namespace: "default", IsInstall: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		out, err := helmengine.Render(ch, vals)
		if err != nil {
			t.Fatalf("%s: rendering: %v", c, err)
		}
		names := make([]string, 0, len(out))
		for n := range out {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			// n is "<chart name>/templates/x.yaml"; report it by its path in the module.
			file := path.Join(c, strings.SplitN(n, "/", 2)[1]) + " (rendered)"
			found, bad := corpus.Parse(file, []byte(out[n]))
			for _, b := range bad {
				t.Errorf("%v", b)
			}
			objs = append(objs, found...)
		}
	}
	skip = func(rel string) bool {
		for _, c := range charts {
			if strings.HasPrefix(rel, c+"/templates/") {
				return true
			}
		}
		return false
	}
	return skip, objs
}

// moduleDirIn is upstream.ModuleDir for another module of this repository (conformance/v3): the version
// that module requires, from the module cache.
func moduleDirIn(t *testing.T, moduleRel, path string) (dir, version string) {
	t.Helper()
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-mod=mod", "-m", "-f", "{{.Dir}} {{.Version}}", path)
	cmd.Dir = filepath.Join(root, moduleRel)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m %s in %s: %v", path, moduleRel, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		if dl := exec.Command("go", "mod", "download", path); true {
			dl.Dir = cmd.Dir
			_ = dl.Run()
		}
		out, _ = exec.Command("go", "list", "-mod=mod", "-m", "-f", "{{.Dir}} {{.Version}}", path).Output()
		f = strings.Fields(string(out))
		if len(f) != 2 {
			t.Fatalf("module %s (required by %s) is not in the module cache", path, moduleRel)
		}
	}
	return f[0], f[1]
}

func builtinSuiteObjects(t *testing.T, moduleDir string) []corpus.Object {
	t.Helper()
	var all []corpus.Object
	for _, k := range lua.Kinds() {
		dir := path.Join("resource_customizations", k.Group, k.Kind)
		objs, bad, err := corpus.Scan(filepath.Join(moduleDir, dir), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Errorf("%s: %v", moduleDir, b)
		}
		for i := range objs {
			objs[i].File = path.Join(dir, objs[i].File)
		}
		all = append(all, objs...)
	}
	return all
}

func builtinHealthScripts(t *testing.T, moduleDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range lua.Kinds() {
		raw, err := os.ReadFile(filepath.Join(moduleDir, "resource_customizations", k.Group, k.Kind, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		out[k.Kind] = string(raw)
	}
	return out
}

func corpusSources(t *testing.T) []corpusSource {
	t.Helper()
	var sources []corpusSource

	ro := upstream.ModuleDir(t, rolloutsModule)
	skip, rendered := rolloutsCharts(t, ro)
	objs, bad, err := corpus.Scan(ro, skip)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		if _, known := corpusUnreadable[b.File]; !known {
			t.Errorf("%s@%s: %v", rolloutsModule, upstream.ModuleVersion(t, rolloutsModule), b)
		}
	}
	for f := range corpusUnreadable {
		found := false
		for _, b := range bad {
			found = found || b.File == f
		}
		if !found {
			t.Errorf("%s is listed as unreadable but reads: drop it from the list", f)
		}
	}
	sources = append(sources, corpusSource{label: "argo-rollouts@" + upstream.ModuleVersion(t, rolloutsModule), objects: append(objs, rendered...)})

	v2 := upstream.ModuleDir(t, argoCDv2Module)
	sources = append(sources, corpusSource{label: "argo-cd@" + upstream.ModuleVersion(t, argoCDv2Module), objects: builtinSuiteObjects(t, v2)})

	v3, v3version := moduleDirIn(t, "conformance/v3", argoCDv3Module)
	sources = append(sources, corpusSource{label: "argo-cd@" + v3version, objects: builtinSuiteObjects(t, v3), builtinScripts: builtinHealthScripts(t, v3)})
	return sources
}

// kubectlStatus is what `kubectl argo rollouts get` shows for the object: pkg/kubectl-argo-rollouts/info
// of the main module's Argo Rollouts version, on the object decoded into its API types.
func kubectlStatus(o corpus.Object) (status, message string, err error) {
	switch o.Kind {
	case "Rollout":
		var ro v1alpha1.Rollout
		if err := yaml.Unmarshal(o.Raw, &ro); err != nil {
			return "", "", err
		}
		ri := info.NewRolloutInfo(&ro, nil, nil, nil, nil, nil)
		return ri.Status, ri.Message, nil
	case "Experiment":
		var ex v1alpha1.Experiment
		if err := yaml.Unmarshal(o.Raw, &ex); err != nil {
			return "", "", err
		}
		ei := info.NewExperimentInfo(&ex, nil, nil, nil)
		return ei.Status, ei.Message, nil
	case "AnalysisRun":
		var run v1alpha1.AnalysisRun
		if err := yaml.Unmarshal(o.Raw, &run); err != nil {
			return "", "", err
		}
		// kubectl-argo-rollouts shows AnalysisRuns under their owner: give the run one.
		owner := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "owner", UID: types.UID("corpus-owner")}}
		run.OwnerReferences = append(run.OwnerReferences, metav1.OwnerReference{UID: owner.UID, Name: owner.Name, Kind: "Rollout"})
		ri := info.NewRolloutInfo(owner, nil, nil, nil, []*v1alpha1.AnalysisRun{&run}, nil)
		if len(ri.AnalysisRuns) != 1 {
			return "", "", fmt.Errorf("kubectl-argo-rollouts listed %d AnalysisRuns", len(ri.AnalysisRuns))
		}
		return ri.AnalysisRuns[0].Status, run.Status.Message, nil
	}
	return "", "", fmt.Errorf("kind %s", o.Kind)
}

// kubectlHealth maps kubectl-argo-rollouts' vocabulary onto Argo CD's: a Rollout's phase
// (Healthy, Progressing, Paused, Degraded) and an AnalysisRun's or Experiment's phase (Pending, Running,
// Successful, Failed, Error, Inconclusive; empty before the controller's first write).
func kubectlHealth(kind, status string) string {
	switch status {
	case "Healthy", "Successful":
		return engine.Healthy
	case "Progressing", "Running", "Pending", "":
		return engine.Progressing
	case "Paused", "Inconclusive":
		return engine.Suspended
	case "Degraded", "Failed", "Error":
		return engine.Degraded
	}
	return "?" + status
}

func evaluateCorpus(t *testing.T) []corpusResult {
	t.Helper()
	var results []corpusResult
	for _, src := range corpusSources(t) {
		if len(src.objects) == 0 {
			t.Fatalf("%s: no objects found", src.label)
		}
		for _, o := range src.objects {
			r := corpusResult{source: src.label, obj: o}
			id := src.label + ":" + o.ID()
			script, err := lua.Health("argoproj.io", o.Kind)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: o.Obj}
			if r.ours, err = (engine.Engine{Profile: engine.V214}).Health(u.DeepCopy().Object, script); err != nil {
				t.Errorf("%s: our script failed: %v", id, err)
				continue
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(u.DeepCopy(), script)
			if err != nil || vm == nil || string(vm.Status) != r.ours.Status || vm.Message != r.ours.Message {
				t.Errorf("%s: Argo CD's VM %v (%v) != engine %+v", id, vm, err, r.ours)
			}
			switch r.ours.Status {
			case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
			default:
				t.Errorf("%s: our script returned %q", id, r.ours.Status)
			}
			var bs *health.HealthStatus
			if src.builtinScripts == nil {
				// The controller's path with no overrides: Argo CD's built-in script.
				bs, err = health.GetResourceHealth(u.DeepCopy(), argolua.ResourceHealthOverrides(nil))
			} else {
				bs, err = argolua.VM{UseOpenLibs: true}.ExecuteHealthLua(u.DeepCopy(), src.builtinScripts[o.Kind])
			}
			switch {
			case err != nil:
				r.builtin = engine.Health{Status: "error", Message: err.Error()}
			case bs == nil:
				r.builtin = engine.Health{Status: "none"}
			default:
				r.builtin = engine.Health{Status: string(bs.Status), Message: bs.Message}
			}
			st, msg, err := kubectlStatus(o)
			r.decodeErr = err
			r.kubectlRaw = st
			r.kubectl = engine.Health{Status: kubectlHealth(o.Kind, st), Message: msg}
			results = append(results, r)
		}
	}
	return results
}

// Upstream objects (file#document) that do not decode into Argo Rollouts' API types, on purpose: each is still
// evaluated by the scripts (which must answer), and the test fails if it starts decoding or if any other
// object does not decode.
var corpusUndecodable = map[string]string{
	"test/e2e/expectedfailures/malformed-analysisrun.yaml#1":                                  "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-experiment.yaml#1":                                   "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-rollout.yaml#1":                                      "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-rollout-ephemeral.yaml#1":                            "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/kustomize/rollout/rollout.yaml#1":                                                   "kustomize merge-test input: podAntiAffinity terms as a map, not a Pod spec",
	"test/kustomize/rollout/expected.yaml#9":                                                  "kustomize merge-test output: podAntiAffinity terms as a map, not a Pod spec",
	"resource_customizations/argoproj.io/Rollout/testdata/degraded_statusPhaseMessage.yaml#1": "Argo CD health-test input with status.conditions as a map",
}

// Documents that mention one of the kinds but are not YAML at all.
var corpusUnreadable = map[string]string{
	"test/e2e/expectedfailures/analysis-run-failfast.yaml": "upstream e2e input with broken YAML indentation (never parsed by any test upstream)",
}

// corpusReason explains why our status differs from a reference's on an object. Each predicate is
// narrow, so a new kind of difference fails the test until a rule is fixed or a reason written.
type corpusReason struct {
	rule  string
	match func(r corpusResult, ref engine.Health) bool
}

func legacyRollout(r corpusResult) bool {
	st, _ := r.obj.Obj["status"].(map[string]any)
	phase, _ := st["phase"].(string)
	return r.obj.Kind == "Rollout" && st != nil && phase == ""
}

var builtinReasons = []corpusReason{
	{"AnalysisRun `Inconclusive` is Suspended: Argo Rollouts pauses for a human on it, while Unknown makes Kargo's Stage Unhealthy and fails a sync hook (AnalysisRun table)",
		func(r corpusResult, ref engine.Health) bool {
			return r.obj.Kind == "AnalysisRun" && ref.Status == "Unknown" && r.ours.Status == engine.Suspended && r.kubectlRaw == "Inconclusive"
		}},
	{"the built-in raises a Lua error on this object (Argo CD then shows Unknown); ours type-checks every field it reads (sandbox rules)",
		func(r corpusResult, ref engine.Health) bool { return ref.Status == "error" }},
}

var kubectlReasons = []corpusReason{
	{"rule 1: the workloadRef generation gate; kubectl-argo-rollouts applies it only when `spec.templateResolvedFromRef`, which the controller sets in memory and never writes (`json:\"-\"`), so on a stored object it never does",
		func(r corpusResult, ref engine.Health) bool {
			sp, _ := r.obj.Obj["spec"].(map[string]any)
			return r.obj.Kind == "Rollout" && sp["workloadRef"] != nil && r.ours.Status == engine.Progressing && r.builtin == r.ours
		}},
	{"rule 10: a controller before v0.8 kept the stable ReplicaSet in `status.canary.stableRS`, and blue-green ones set none; kubectl-argo-rollouts' client-side fallback reads only `status.stableRS` and waits forever, Argo CD's legacy logic (and ours) reads both",
		func(r corpusResult, ref engine.Health) bool {
			st, _ := r.obj.Obj["status"].(map[string]any)
			return legacyRollout(r) && st["stableRS"] == nil && r.ours.Status == engine.Healthy && r.builtin == r.ours &&
				(ref.Message == "waiting for all steps to complete" || ref.Message == "waiting for post-promotion verification to complete")
		}},
	{"not applied on purpose: kubectl-argo-rollouts' client-side \"unpausing\" gate (`controllerPause` with no pause conditions), which lasts one reconcile; the phase `Paused` maps to Suspended (Rollout, \"Not done, on purpose\")",
		func(r corpusResult, ref engine.Health) bool {
			return r.obj.Kind == "Rollout" && ref.Message == "waiting for rollout to unpause" && r.ours.Status == engine.Suspended
		}},
}

func explain(reasons []corpusReason, r corpusResult, ref engine.Health) string {
	for _, reason := range reasons {
		if reason.match(r, ref) {
			return reason.rule
		}
	}
	return ""
}

func cell(h engine.Health) string {
	msg := h.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 140 {
		msg = msg[:140] + "…"
	}
	msg = strings.ReplaceAll(msg, "|", "\\|")
	if msg == "" {
		return "**" + h.Status + "**"
	}
	return "**" + h.Status + "** " + msg
}

// Every Rollout, AnalysisRun and Experiment in Argo Rollouts' module files and in Argo CD's built-in
// suites: our scripts answer each without error and never Unknown or Missing (Argo CD's VM and our engine
// alike); each is compared with Argo CD's built-in script and with kubectl-argo-rollouts; every status
// difference must have a reason, and the table of them in docs/health-semantics.md is generated here
// (-update rewrites it).
func TestUpstreamCorpus(t *testing.T) {
	results := evaluateCorpus(t)
	var rows []string
	kinds := map[string]int{}
	perSource := map[string]int{}
	var sourceOrder []string
	agreeBuiltin, differBuiltin, agreeKubectl, differKubectl, undecodable := 0, 0, 0, 0, 0
	seenUndecodable := map[string]bool{}
	var undecodableLines []string
	for _, r := range results {
		kinds[r.obj.Kind]++
		if perSource[r.source] == 0 {
			sourceOrder = append(sourceOrder, r.source)
		}
		perSource[r.source]++
		id := r.source + ":" + r.obj.ID()
		var rules []string
		if r.ours.Status == r.builtin.Status {
			agreeBuiltin++
		} else if why := explain(builtinReasons, r, r.builtin); why != "" {
			differBuiltin++
			rules = append(rules, "built-in: "+why)
		} else {
			t.Errorf("%s: ours %+v, Argo CD's built-in %+v: no reason; fix the rule or explain it", id, r.ours, r.builtin)
		}
		kubectl := "n/a (does not decode)"
		if why, known := corpusUndecodable[r.obj.ID()]; known {
			if r.decodeErr == nil {
				t.Errorf("%s: listed as not decodable (%s) but decodes: drop it from the list", id, why)
			}
			undecodableLines = append(undecodableLines, fmt.Sprintf("* `%s` (%s): %s", r.obj.ID(), r.source, why))
			seenUndecodable[r.obj.ID()] = true
			undecodable++
		} else if r.decodeErr != nil {
			t.Errorf("%s: %s %s does not decode into Argo Rollouts' API types: %v", id, r.obj.Kind, r.obj.Name, r.decodeErr)
			continue
		} else {
			kubectl = cell(r.kubectl) + " (`" + r.kubectlRaw + "`)"
			if r.kubectlRaw == "" {
				kubectl = cell(r.kubectl) + " (no status)"
			}
			if r.ours.Status == r.kubectl.Status {
				agreeKubectl++
			} else if why := explain(kubectlReasons, r, r.kubectl); why != "" {
				differKubectl++
				rules = append(rules, "kubectl-argo-rollouts: "+why)
			} else {
				t.Errorf("%s: ours %+v, kubectl-argo-rollouts %s %+v: no reason; fix the rule or explain it", id, r.ours, r.kubectlRaw, r.kubectl)
			}
		}
		if len(rules) > 0 {
			rows = append(rows, fmt.Sprintf("| `%s` (%s) | %s | %s | %s | %s |", r.obj.File, r.source, cell(r.builtin), kubectl, cell(r.ours), strings.Join(rules, "<br>")))
		}
	}
	for f := range corpusUndecodable {
		if !seenUndecodable[f] {
			t.Errorf("%s is listed as not decodable but holds no object of the corpus", f)
		}
	}
	var sources []string
	for _, s := range sourceOrder {
		sources = append(sources, fmt.Sprintf("`%s` %d", s, perSource[s]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Corpus: **%d objects** (%d Rollouts, %d AnalysisRuns, %d Experiments): %s.\n\n",
		len(results), kinds["Rollout"], kinds["AnalysisRun"], kinds["Experiment"], strings.Join(sources, ", "))
	b.WriteString("| reference | same status | documented difference | not compared |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| Argo CD's built-in script (of the object's Argo CD version; v2.14.21's for Rollouts' files) | %d | %d | 0 |\n", agreeBuiltin, differBuiltin)
	fmt.Fprintf(&b, "| kubectl-argo-rollouts (`%s` `pkg/kubectl-argo-rollouts/info`) | %d | %d | %d (do not decode) |\n\n",
		"argo-rollouts@"+upstream.ModuleVersion(t, rolloutsModule), agreeKubectl, differKubectl, undecodable)
	b.WriteString("Not decodable into Argo Rollouts' API types, on purpose (evaluated by the scripts, no kubectl-argo-rollouts verdict):\n\n")
	sort.Strings(undecodableLines)
	b.WriteString(strings.Join(undecodableLines, "\n") + "\n")
	var unreadable []string
	for f, why := range corpusUnreadable {
		unreadable = append(unreadable, fmt.Sprintf("* `%s`: %s", f, why))
	}
	sort.Strings(unreadable)
	b.WriteString("\nNot YAML, so not in the corpus:\n\n" + strings.Join(unreadable, "\n") + "\n\n")
	b.WriteString("| file | built-in | kubectl-argo-rollouts | ours | the rule that makes ours right |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
	assertDocSection(t, "../docs/health-semantics.md", "corpus", b.String())
}

// assertDocSection compares the text between <!-- NAME:begin --> and <!-- NAME:end --> in a doc with
// want, or rewrites it under -update.
func assertDocSection(t *testing.T, doc, name, want string) {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	s := string(raw)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s … %s section", doc, begin, end)
	}
	i += strings.Index(s[i:], "-->") + len("-->\n")
	if s[i:j] == want {
		return
	}
	if golden.Updating() {
		if err := os.WriteFile(doc, []byte(s[:i]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the generated %s section differs from the corpus (regenerate with: go test ./conformance/ -run TestUpstreamCorpus -update)", doc, name)
}
