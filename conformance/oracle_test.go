package conformance

import (
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// Every fixture, three ways: our engine, Argo CD v2.14's VM as the API server runs argocd-cm scripts, and
// the controller's path (SettingsManager → ResourceHealthOverrides → gitops-engine GetResourceHealth).
func TestFixturesMatchArgoCD(t *testing.T) {
	overrides, err := overridesFromConfigMap(t, bundledConfigMapData(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range fixtures(t) {
		t.Run(fx.Path, func(t *testing.T) {
			script, err := lua.Health(fx.Kind.Group, fx.Kind.Kind)
			if err != nil {
				t.Fatal(err)
			}
			obj := unstructuredFrom(t, fx.Raw)
			if obj.GetKind() != fx.Kind.Kind {
				// action outputs and referenced objects of other kinds are checked by their own kind's script
				script, err = lua.Health(obj.GroupVersionKind().Group, obj.GetKind())
				if err != nil {
					t.Fatalf("fixture of kind %s has no bundled script", obj.GetKind())
				}
			}
			ours, err := engine.Engine{Profile: engine.V214}.Health(obj.Object, script)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(obj.DeepCopy(), script)
			if err != nil {
				t.Fatalf("argo-cd util/lua: %v", err)
			}
			ctrl, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(overrides))
			if err != nil {
				t.Fatalf("gitops-engine GetResourceHealth: %v", err)
			}
			if ctrl == nil {
				t.Fatal("gitops-engine found no health script for the object")
			}
			if ours.Status != string(vm.Status) || ours.Message != vm.Message {
				t.Errorf("engine %+v != argo-cd VM %+v", ours, *vm)
			}
			// What the controller records: the engine's ResourceHealth (an object being deleted is
			// "Pending deletion" before any script runs in v2.14).
			rec, err := engine.Engine{Profile: engine.V214}.ResourceHealth(obj.Object, script)
			if err != nil || rec == nil {
				t.Fatalf("engine ResourceHealth: %v, %v", rec, err)
			}
			if rec.Status != string(ctrl.Status) || rec.Message != ctrl.Message {
				t.Errorf("engine %+v != controller path %+v", *rec, *ctrl)
			}
			// The scripts' contract: never Unknown or Missing, never an empty status.
			switch ours.Status {
			case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
			default:
				t.Errorf("script returned status %q", ours.Status)
			}
		})
	}
}
