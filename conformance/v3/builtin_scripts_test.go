package v3

import (
	"errors"
	"sort"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/builtinscripts"
	"github.com/analysis-health/analysis-health/lint"
	"github.com/analysis-health/analysis-health/mutate"
	"github.com/analysis-health/analysis-health/verify"
)

// verify --fuzz --lint over every built-in script of Argo CD v3.2.12, built-in wildcard folders included,
// every finding replayed through Argo CD v3.2's own code; the result is the v3.2.12 block of
// docs/argocd-builtin-scripts.md.
func TestArgoCDv3BuiltinScripts(t *testing.T) {
	res := builtinscripts.Execute(t, builtinscripts.Run{
		Version: "v3.2.12",
		Test:    "`TestArgoCDv3BuiltinScripts` in `conformance/v3` (module of its own)",
		FS:      resource_customizations.Embedded,
		Engine:  engine.Engine{Profile: engine.V32},
		ArgoCD:  argoEvaluator,
	})
	if len(res.Scripts) < 300 || res.Fuzz.Cases() < 5000 {
		t.Errorf("only %d scripts and %d evaluations: the tree was not found whole", len(res.Scripts), res.Fuzz.Cases())
	}
	builtinscripts.CheckDoc(t, "../../docs/argocd-builtin-scripts.md", "v3.2.12", res.Markdown())
}

// argoEvaluator evaluates a built-in script the way Argo CD v3.2 reaches it: the controller's health
// (the script resolved from the object's group and kind, wildcard folders included, with open libraries;
// gitops-engine wraps the error, the script's own error is compared) and the API server's discovery and
// actions (no open libraries, the suite's parameters).
func argoEvaluator(s verify.ScriptFile) verify.Evaluator {
	obj := func(o map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: mutate.DeepCopy(o).(map[string]any)}
	}
	vm := argolua.VM{}
	switch s.Role {
	case lint.Health:
		expectUnknown, expectEmpty := verify.HealthExpectations(resource_customizations.Embedded, s)
		return func(o map[string]any) (verify.FindingKind, string) {
			u := obj(o)
			if script, open, err := vm.GetHealthScript(u); err != nil || script != s.Source || !open {
				return "not-resolved", "Argo CD resolves another script, or no open libraries"
			}
			h, err := health.GetResourceHealth(u, argolua.ResourceHealthOverrides{})
			if err != nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner
				}
				return verify.Classify(err, false)
			}
			if h == nil {
				return "no-health", ""
			}
			return verify.ClassifyHealth(string(h.Status), h.Message, expectUnknown, expectEmpty)
		}
	case lint.Discovery:
		return func(o map[string]any) (verify.FindingKind, string) {
			u := obj(o)
			scripts, err := vm.GetResourceActionDiscovery(u)
			if err != nil || len(scripts) != 1 || scripts[0] != s.Source {
				return "not-resolved", "Argo CD resolves other discovery scripts"
			}
			if _, err := vm.ExecuteResourceActionDiscovery(u, scripts); err != nil {
				return verify.Classify(err, false)
			}
			return "", ""
		}
	default:
		var params []*application.ResourceActionParameters
		given := verify.ActionParams(resource_customizations.Embedded, s, engine.Engine{Profile: engine.V32})
		names := make([]string, 0, len(given))
		for k := range given {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			name, value := k, given[k]
			params = append(params, &application.ResourceActionParameters{Name: &name, Value: &value})
		}
		return func(o map[string]any) (verify.FindingKind, string) {
			u := obj(o)
			def, err := vm.GetResourceAction(u, s.Action)
			if err != nil || def.ActionLua != s.Source {
				return "not-resolved", "Argo CD resolves another action script"
			}
			if _, err := vm.ExecuteResourceAction(u, def.ActionLua, params); err != nil {
				return verify.Classify(err, true)
			}
			return "", ""
		}
	}
}
