package conformance

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/corpus"
	"github.com/analysis-health/analysis-health/test/rollouts/kubectl"
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
	for _, p := range corpus.CheckUnreadable(bad, corpusUnreadable) {
		t.Errorf("%s@%s: %s", rolloutsModule, upstream.ModuleVersion(t, rolloutsModule), p)
	}
	sources = append(sources, corpusSource{label: "argo-rollouts@" + upstream.ModuleVersion(t, rolloutsModule), objects: append(objs, rendered...)})

	v2 := upstream.ModuleDir(t, argoCDv2Module)
	sources = append(sources, corpusSource{label: "argo-cd@" + upstream.ModuleVersion(t, argoCDv2Module), objects: builtinSuiteObjects(t, v2)})

	v3, v3version := upstream.ModuleDirIn(t, "test/argocd-v3.2", argoCDv3Module)
	sources = append(sources, corpusSource{label: "argo-cd@" + v3version, objects: builtinSuiteObjects(t, v3), builtinScripts: builtinHealthScripts(t, v3)})

	v36, v36version := upstream.ModuleDirIn(t, "test/argocd-v3.6", argoCDv3Module)
	sources = append(sources, corpusSource{label: "argo-cd@" + v36version, objects: builtinSuiteObjects(t, v36), builtinScripts: builtinHealthScripts(t, v36)})
	return sources
}

func evaluateCorpus(t *testing.T) []corpus.Result {
	t.Helper()
	var results []corpus.Result
	for _, src := range corpusSources(t) {
		if len(src.objects) == 0 {
			t.Fatalf("%s: no objects found", src.label)
		}
		for _, o := range src.objects {
			r := corpus.Result{Source: src.label, Obj: o}
			id := src.label + ":" + o.ID()
			script, err := lua.Health("argoproj.io", o.Kind)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: o.Obj}
			if r.Ours, err = (engine.Engine{Profile: engine.V214}).Health(u.DeepCopy().Object, script); err != nil {
				t.Errorf("%s: our script failed: %v", id, err)
				continue
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(u.DeepCopy(), script)
			if err != nil || vm == nil || string(vm.Status) != r.Ours.Status || vm.Message != r.Ours.Message {
				t.Errorf("%s: Argo CD's VM %v (%v) != engine %+v", id, vm, err, r.Ours)
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
				r.Builtin = engine.Health{Status: "error", Message: err.Error()}
			case bs == nil:
				r.Builtin = engine.Health{Status: "none"}
			default:
				r.Builtin = engine.Health{Status: string(bs.Status), Message: bs.Message}
			}
			st, msg, err := kubectl.Status(o)
			r.DecodeErr = err
			r.KubectlRaw = st
			r.Kubectl = engine.Health{Status: corpus.KubectlHealth(st), Message: msg}
			results = append(results, r)
		}
	}
	return results
}

// Upstream objects (file#document) that do not decode into Argo Rollouts' API types, on purpose: each is
// still evaluated by the scripts (which must answer), and the test fails if it starts decoding or if any
// other object does not decode.
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

// Every Rollout, AnalysisRun and Experiment in Argo Rollouts' module files and in Argo CD's built-in
// suites: our scripts answer each without error and never Unknown or Missing (Argo CD's VM and our engine
// alike); each is compared with Argo CD's built-in script and with kubectl-argo-rollouts; every status
// difference must have a reason (corpus.BuiltinReasons, corpus.KubectlReasons), and the table of them in
// docs/health-semantics.md is generated here (`make docs` rewrites it).
func TestUpstreamCorpus(t *testing.T) {
	rep := corpus.Compare(evaluateCorpus(t), corpusUndecodable, corpusUnreadable,
		"Argo CD's built-in script (of the object's Argo CD version; v2.14.21's for Rollouts' files)",
		"kubectl-argo-rollouts (`argo-rollouts@"+upstream.ModuleVersion(t, rolloutsModule)+"` `pkg/kubectl-argo-rollouts/info`)")
	for _, p := range rep.Problems {
		t.Error(p)
	}
	docblock.Check(t, "../../docs/health-semantics.md", "test/argocd-v2.14 TestUpstreamCorpus", []byte(rep.Markdown))
}
