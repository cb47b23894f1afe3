package v3

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/builtinscripts"
	"github.com/analysis-health/analysis-health/lint"
	"github.com/analysis-health/analysis-health/mutate"
	"github.com/analysis-health/analysis-health/verify"
)

// Every kind of fuzz finding, produced by the scripts of verify/testdata/classes, is what Argo CD v3.2's
// own code does with the same object (v3.2 here; gitops-engine wraps the controller's error, whose cause is compared) when the scripts come from argocd-cm: the controller's
// GetResourceHealth returns the same error (or invalid, Unknown, empty health), the API server's discovery
// and action code the same error. The built-in run covers the classes Argo CD's own scripts exhibit; this
// covers all of them, timeouts included.
func TestFuzzFindingClassesInArgoCDv3(t *testing.T) {
	const tree = "../../verify/testdata/classes"
	fsys := os.DirFS(tree)
	rep, err := verify.Fuzz(fsys, verify.FuzzOptions{Engine: engine.Engine{Profile: engine.V32, Timeout: 3 * time.Second}, N: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := verify.Scripts(fsys)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]verify.ScriptFile{}
	for _, s := range scripts {
		byPath[s.Path] = s
	}
	seen := map[verify.FindingKind]bool{}
	for _, f := range rep.Findings() {
		seen[f.Kind] = true
		kind, msg := builtinscripts.Replay(argoCMEvaluator(t, fsys, scripts, byPath[f.Script]), f)
		if kind != f.Kind || msg != f.Message {
			t.Errorf("%s: ours %s %q, Argo CD %s %q", f.Script, f.Kind, f.Message, kind, msg)
		}
	}
	for _, k := range verify.FindingKinds {
		if !seen[k] {
			t.Errorf("no %s finding to confirm", k)
		}
	}
}

// argoCMEvaluator runs a script as argocd-cm would hold it for its kind: the health script under
// resource.customizations.health (no open libraries), discovery and every action of the kind under
// resource.customizations.actions.
func argoCMEvaluator(t *testing.T, fsys fs.FS, scripts []verify.ScriptFile, s verify.ScriptFile) verify.Evaluator {
	key := s.Key()
	override := v1alpha1.ResourceOverride{}
	actions := map[string]any{}
	var defs []map[string]string
	for _, o := range scripts {
		switch {
		case o.Key() != key:
		case o.Role == lint.Health:
			override.HealthLua = o.Source
		case o.Role == lint.Discovery:
			actions["discovery.lua"] = o.Source
		default:
			defs = append(defs, map[string]string{"name": o.Action, "action.lua": o.Source})
		}
	}
	if len(actions) > 0 {
		actions["definitions"] = defs
		b, err := yaml.Marshal(actions)
		if err != nil {
			t.Fatal(err)
		}
		override.Actions = string(b)
	}
	overrides := map[string]v1alpha1.ResourceOverride{key: override}
	vm := argolua.VM{ResourceOverrides: overrides}
	obj := func(o map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: mutate.DeepCopy(o).(map[string]any)}
	}
	switch s.Role {
	case lint.Health:
		expectUnknown, expectEmpty := verify.HealthExpectations(fsys, s)
		return func(o map[string]any) (verify.FindingKind, string) {
			h, err := health.GetResourceHealth(obj(o), argolua.ResourceHealthOverrides(overrides))
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
			if err != nil {
				t.Fatal(err)
			}
			if _, err := vm.ExecuteResourceActionDiscovery(u, scripts); err != nil {
				return verify.Classify(err, false)
			}
			return "", ""
		}
	default:
		return func(o map[string]any) (verify.FindingKind, string) {
			u := obj(o)
			def, err := vm.GetResourceAction(u, s.Action)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := vm.ExecuteResourceAction(u, def.ActionLua, nil); err != nil {
				return verify.Classify(err, true)
			}
			return "", ""
		}
	}
}
