package rollouts110

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/corpus"
	"github.com/analysis-health/analysis-health/test/rollouts/kubectl"
)

const rolloutsModule = "github.com/argoproj/argo-rollouts"

// Objects (file#document) of v1.10.2's files that do not decode into its API types, on purpose.
var undecodable = map[string]string{
	"test/e2e/expectedfailures/malformed-analysisrun.yaml#1":       "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-experiment.yaml#1":        "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-rollout.yaml#1":           "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/e2e/expectedfailures/malformed-rollout-ephemeral.yaml#1": "upstream e2e input with an invalid resource quantity, to test the controller's rejection",
	"test/kustomize/rollout/rollout.yaml#1":                        "kustomize merge-test input: podAntiAffinity terms as a map, not a Pod spec",
	"test/kustomize/rollout/expected.yaml#9":                       "kustomize merge-test output: podAntiAffinity terms as a map, not a Pod spec",
}

// Documents that mention one of the kinds but are not YAML.
var unreadable = map[string]string{
	"test/e2e/expectedfailures/analysis-run-failfast.yaml": "upstream e2e input with broken YAML indentation (never parsed by any test upstream)",
	"examples/helm-blue-green/templates/rollout.yaml":      "a Helm template, byte-identical to v1.8.5's, which the main module's corpus renders with the chart's values",
}

// Every Rollout, AnalysisRun and Experiment in Argo Rollouts v1.10.2's module files, as the main module's
// TestUpstreamCorpus does for v1.8.5: our scripts answer without error and never Unknown or Missing; the
// status is compared with Argo CD v2.14.21's built-in scripts (read from the module cache at the version
// the main module pins, run in the engine with the full library as Argo CD runs built-ins; the engine is
// held to Argo CD's VM by the main module's conformance tests) and with v1.10.2's
// pkg/kubectl-argo-rollouts/info; the differences are this test's generated table in
// docs/health-semantics.md (`make docs` rewrites it).
func TestUpstreamCorpusRollouts110(t *testing.T) {
	ro := upstream.ModuleDir(t, rolloutsModule)
	version := upstream.ModuleVersion(t, rolloutsModule)
	objs, bad, err := corpus.Scan(ro, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range corpus.CheckUnreadable(bad, unreadable) {
		t.Errorf("%s@%s: %s", rolloutsModule, version, p)
	}
	argocd, argocdVersion := upstream.ModuleDirIn(t, "test/argocd-v2.14", "github.com/argoproj/argo-cd/v2")
	label := "argo-rollouts@" + version
	var results []corpus.Result
	for _, o := range objs {
		r := corpus.Result{Source: label, Obj: o}
		ours, err := lua.Health("argoproj.io", o.Kind)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ours, err = (engine.Engine{Profile: engine.V214}).Health(o.Obj, ours); err != nil {
			t.Errorf("%s: our script failed: %v", o.ID(), err)
			continue
		}
		builtin, err := os.ReadFile(filepath.Join(argocd, "resource_customizations", "argoproj.io", o.Kind, "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := (engine.Engine{Profile: engine.V214, OpenLibs: true}).Health(o.Obj, string(builtin)); err != nil {
			r.Builtin = engine.Health{Status: "error", Message: err.Error()}
		} else {
			r.Builtin = h
		}
		st, msg, err := kubectl.Status(o)
		r.DecodeErr, r.KubectlRaw = err, st
		r.Kubectl = engine.Health{Status: corpus.KubectlHealth(st), Message: msg}
		results = append(results, r)
	}
	if len(results) < 100 {
		t.Fatalf("only %d objects in %s", len(results), label)
	}
	rep := corpus.Compare(results, undecodable, unreadable,
		"Argo CD's built-in script (`argo-cd@"+argocdVersion+"`)",
		"kubectl-argo-rollouts (`"+label+"` `pkg/kubectl-argo-rollouts/info`)")
	for _, p := range rep.Problems {
		t.Error(p)
	}
	docblock.Check(t, "../../../docs/health-semantics.md", "test/rollouts-v1.10/corpus TestUpstreamCorpusRollouts110", []byte(rep.Markdown))
}
