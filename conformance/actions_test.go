package conformance

import (
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// actionsConfigMapData is argocd-cm data holding our health scripts and our actions, the actions as
// resource.customizations.actions.<group>_<Kind> values in Argo CD's ResourceActions YAML, built here from
// lua.Actions rather than by the generator so that this oracle does not depend on the code it checks.
func actionsConfigMapData(t testing.TB) map[string]string {
	t.Helper()
	data := bundledConfigMapData(t)
	for _, k := range lua.ActionKinds() {
		discovery, defs, err := lua.Actions(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		type definition struct {
			Name      string `json:"name"`
			ActionLua string `json:"action.lua"`
		}
		value := struct {
			MergeBuiltinActions bool         `json:"mergeBuiltinActions"`
			DiscoveryLua        string       `json:"discovery.lua"`
			Definitions         []definition `json:"definitions"`
		}{MergeBuiltinActions: true, DiscoveryLua: discovery}
		for _, d := range defs {
			value.Definitions = append(value.Definitions, definition{Name: d.Name, ActionLua: d.Script})
		}
		raw, err := yaml.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.actions."+k.ConfigMapSuffix()] = string(raw)
	}
	return data
}

// builtinActions are Argo CD v2.14's own actions per kind (resource_customizations/<kind>/actions).
var builtinActions = map[string][]string{
	"argoproj.io/Rollout":     {"abort", "promote-full", "restart", "resume", "retry"},
	"argoproj.io/AnalysisRun": {"terminate"},
	"argoproj.io/Experiment":  nil,
}

// Argo CD v2.14's settings code loads our actions from argocd-cm; its API-server path (VM with the loaded
// overrides, no open libraries) discovers ours merged with the built-ins and runs ours; and the engine,
// given the same discovery scripts and action scripts, returns exactly what Argo CD returns, over every
// fixture of each kind.
func TestActionsThroughArgoCD(t *testing.T) {
	ov, err := overridesFromConfigMap(t, actionsConfigMapData(t))
	if err != nil {
		t.Fatal(err)
	}
	kinds := lua.ActionKinds()
	if len(kinds) != 3 {
		t.Fatalf("want actions for Rollout, AnalysisRun and Experiment, got %v", kinds)
	}
	for _, k := range kinds {
		discovery, defs, err := lua.Actions(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		override, ok := ov[k.Key()]
		if !ok {
			t.Fatalf("%s: no override loaded", k.Key())
		}
		actions, err := override.GetActions()
		if err != nil {
			t.Fatalf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
		}
		if !actions.MergeBuiltinActions || actions.ActionDiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Fatalf("%s: loaded %+v", k.Key(), actions)
		}
		builtin, known := builtinActions[k.Key()]
		if !known {
			t.Fatalf("%s: list its Argo CD built-in actions in builtinActions", k.Key())
		}
		vm := argolua.VM{ResourceOverrides: ov}
		checked := 0
		for _, fx := range fixtures(t) {
			obj := unstructuredFrom(t, fx.Raw)
			if obj.GroupVersionKind().Group != k.Group || obj.GetKind() != k.Kind {
				continue
			}
			checked++
			t.Run(fx.Path, func(t *testing.T) {
				scripts, err := vm.GetResourceActionDiscovery(obj)
				if err != nil {
					t.Fatal(err)
				}
				if len(scripts) != 1+min(len(builtin), 1) || scripts[0] != discovery {
					t.Fatalf("discovery scripts: want ours first, then the built-in one if any; got %d", len(scripts))
				}
				want, wantErr := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts)
				got, gotErr := engine.Engine{Profile: engine.V214}.Discover(obj.Object, scripts...)
				if errText(wantErr) != errText(gotErr) {
					t.Fatalf("discovery error:\n argo-cd: %s\n engine:  %s", errText(wantErr), errText(gotErr))
				}
				if wantErr == nil {
					if !reflect.DeepEqual(fromArgoActions(want), got) {
						t.Errorf("discovery:\n argo-cd: %+v\n engine:  %+v", fromArgoActions(want), got)
					}
					names := map[string]bool{}
					for _, a := range got {
						names[a.Name] = true
					}
					for _, name := range append(defNames(defs), builtin...) {
						if !names[name] {
							t.Errorf("merged discovery lacks %s: %+v", name, got)
						}
					}
				}
				// Ours alone never fails, whatever the object (Argo CD's built-in discovery may).
				if _, err := (engine.Engine{Profile: engine.V214}).Discover(obj.Object, discovery); err != nil {
					t.Errorf("our discovery failed: %v", err)
				}
				for _, d := range defs {
					def, err := vm.GetResourceAction(obj, d.Name)
					if err != nil {
						t.Fatal(err)
					}
					if def.ActionLua != d.Script {
						t.Fatalf("%s: Argo CD resolved another script", d.Name)
					}
					compareAction(t, d.Name, obj, def.ActionLua)
				}
			})
		}
		if checked == 0 {
			t.Errorf("%s: no fixture", k.Key())
		}
	}
}

// compareAction runs script through Argo CD v2.14's ExecuteResourceAction and the engine: the same
// operations and objects, or the same error.
func compareAction(t *testing.T, name string, obj *unstructured.Unstructured, script string) {
	t.Helper()
	want, wantErr := runArgoAction(obj.DeepCopy(), script)
	got, gotErr := engine.Engine{Profile: engine.V214}.RunAction(obj.Object, script, nil)
	if panicked, ok := strings.CutPrefix(errText(wantErr), "argo-cd panicked: "); ok {
		// Where Argo CD v2.14 panics the engine must fail, naming the same runtime error.
		if gotErr == nil || !strings.Contains(gotErr.Error(), panicked) {
			t.Errorf("%s: argo-cd panicked (%s), engine: %v", name, panicked, gotErr)
		}
		return
	}
	if errText(wantErr) != errText(gotErr) {
		t.Errorf("%s: error:\n argo-cd: %s\n engine:  %s", name, errText(wantErr), errText(gotErr))
		return
	}
	if wantErr != nil {
		return
	}
	if len(want) != len(got) {
		t.Fatalf("%s: argo-cd returned %d objects, engine %d", name, len(want), len(got))
	}
	for i := range want {
		var wantObj map[string]any
		if want[i].UnstructuredObj != nil {
			wantObj = want[i].UnstructuredObj.Object
		}
		if string(want[i].K8SOperation) != string(got[i].Operation) || !reflect.DeepEqual(wantObj, got[i].Object) {
			t.Errorf("%s: object %d:\n argo-cd: %s %#v\n engine:  %s %#v", name, i, want[i].K8SOperation, wantObj, got[i].Operation, got[i].Object)
		}
	}
}

// runArgoAction turns Argo CD v2.14's panics (cleanReturnedArray indexing past the original list) into an
// error, so the case can be compared.
func runArgoAction(obj *unstructured.Unstructured, script string) (res []argolua.ImpactedResource, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("argo-cd panicked: %v", r)
		}
	}()
	return argolua.VM{}.ExecuteResourceAction(obj, script)
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func fromArgoActions(in []v1alpha1.ResourceAction) []engine.Action {
	out := make([]engine.Action, 0, len(in))
	for _, a := range in {
		e := engine.Action{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass}
		for _, p := range a.Params {
			e.Params = append(e.Params, engine.ActionParam{Name: p.Name, Value: p.Value, Type: p.Type, Default: p.Default})
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func defNames(defs []lua.ActionDef) []string {
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return names
}

// actionProbes exercise the parts of Argo CD's action handling the engine reproduces: result decoding,
// map cleaning, number types, operations and error text. The same list is in conformance/v3.
var actionProbes = []struct{ name, script string }{
	{"unchanged", `return obj`},
	{"set field", `obj.spec.paused = true; return obj`},
	{"arithmetic", `obj.spec.replicas = obj.spec.replicas + 1; obj.spec.half = 0.5; obj.spec.huge = 1e21; return obj`},
	{"clear map", `obj.metadata.labels = {}; return obj`},
	{"new empty table", `obj.spec.extra = {}; return obj`},
	{"remove field", `obj.status = nil; return obj`},
	{"append scalar", `table.insert(obj.spec.list, "c"); return obj`},
	{"append map", `table.insert(obj.spec.steps, {setWeight = 5}); return obj`},
	{"shrink list", `obj.spec.steps = {obj.spec.steps[1]}; return obj`},
	{"list of one patch", `return {{operation = "patch", resource = obj}}`},
	{"create and patch", `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x"}, data = {}}}, {operation = "patch", resource = obj}}`},
	{"empty list", `return {}`},
	{"unsupported operation", `return {{operation = "delete", resource = obj}}`},
	{"missing operation", `return {{resource = obj}}`},
	{"capitalised fields", `return {{Operation = "create", Resource = obj}}`},
	{"no kind", `obj.kind = nil; return obj`},
	{"kind not a string", `obj.kind = 1; return obj`},
	{"resource not an object", `return {{operation = "create", resource = "x"}}`},
	{"entry not an object", `return {"x"}`},
	{"nil result", `obj.spec.paused = true`},
	{"string result", `return "x"`},
	{"runtime error", `error("boom")`},
	{"error level 0", `error("boom", 0)`},
	{"no string library", `obj.spec.s = string.upper("a"); return obj`},
	{"require os", `local os = require("os"); obj.spec.t = type(os.time()); return obj`},
	{"shared table", `local t = {a = 1}; obj.spec.x = t; obj.spec.y = t; return obj`},
}

var discoveryProbes = []struct{ name, script string }{
	{"empty", `return {}`},
	{"empty entry", `return {a = {}}`},
	{"all fields", `return {a = {disabled = true, displayName = "A", iconClass = "fa"}, b = {disabled = false}}`},
	{"params", `return {a = {params = {{name = "n", value = "v", type = "string", default = "d"}}}}`},
	{"renamed", `return {a = {name = "b"}}`},
	{"not a table", `return {a = true}`},
	{"disabled string", `return {a = {disabled = "yes"}}`},
	{"param name number", `return {a = {params = {{name = 1}}}}`},
	{"list", `return {"a"}`},
	{"mixed keys", `return {a = {}, [1] = 2}`},
	{"nil", `local x = 1`},
	{"number", `return 1`},
	{"runtime error", `return obj.nothing.x`},
}

func probeObject() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": "r", "namespace": "ns", "labels": map[string]any{"a": "b"}, "annotations": map[string]any{}},
		"spec": map[string]any{
			"replicas": int64(3), "ratio": 0.25, "list": []any{"a", "b"},
			"steps":    []any{map[string]any{"pause": map[string]any{}}, map[string]any{"setWeight": int64(20)}},
			"template": map[string]any{"metadata": map[string]any{"creationTimestamp": nil}},
		},
		"status": map[string]any{"canary": map[string]any{}, "pauseConditions": []any{}},
	}
}

func TestActionProbesMatchArgoCD(t *testing.T) {
	for _, p := range actionProbes {
		t.Run("action/"+p.name, func(t *testing.T) {
			compareAction(t, p.name, &unstructured.Unstructured{Object: probeObject()}, p.script)
		})
	}
	for _, p := range discoveryProbes {
		t.Run("discovery/"+p.name, func(t *testing.T) {
			want, wantErr := argolua.VM{}.ExecuteResourceActionDiscovery(&unstructured.Unstructured{Object: probeObject()}, []string{p.script})
			got, gotErr := engine.Engine{Profile: engine.V214}.Discover(probeObject(), p.script)
			if errText(wantErr) != errText(gotErr) {
				t.Fatalf("error:\n argo-cd: %s\n engine:  %s", errText(wantErr), errText(gotErr))
			}
			if wantErr == nil && !reflect.DeepEqual(fromArgoActions(want), got) {
				t.Errorf("argo-cd %+v, engine %+v", fromArgoActions(want), got)
			}
		})
	}
	_, err := argolua.VM{}.ExecuteResourceActionDiscovery(&unstructured.Unstructured{Object: probeObject()}, nil)
	_, ours := engine.Engine{}.Discover(probeObject())
	if errText(err) != errText(ours) {
		t.Errorf("no scripts: argo-cd %v, engine %v", err, ours)
	}
}

// Argo CD v2.14's own AnalysisRun action suite passes against our AnalysisRun actions, through Argo CD's
// VM and through the engine.
func TestArgoCDBuiltinAnalysisRunActionSuite(t *testing.T) {
	const dir = "argoproj.io/AnalysisRun/actions"
	raw, err := resource_customizations.Embedded.ReadFile(path.Join(dir, "action_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var suite verify.ActionSuite
	if err := yaml.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	discovery, defs, err := lua.Actions("argoproj.io", "AnalysisRun")
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, p string) *unstructured.Unstructured {
		b, err := resource_customizations.Embedded.ReadFile(path.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return unstructuredFrom(t, b)
	}
	if len(suite.DiscoveryTests) == 0 || len(suite.ActionTests) == 0 {
		t.Fatal("Argo CD's suite is empty")
	}
	for _, tc := range suite.DiscoveryTests {
		t.Run("discovery/"+tc.InputPath, func(t *testing.T) {
			obj := read(t, tc.InputPath)
			argo, err := argolua.VM{}.ExecuteResourceActionDiscovery(obj, []string{discovery})
			if err != nil {
				t.Fatal(err)
			}
			got, err := engine.Engine{Profile: engine.V214}.Discover(obj.Object, discovery)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromArgoActions(argo), got) || !reflect.DeepEqual(got, tc.Result) {
				t.Errorf("want %+v; argo-cd VM %+v, engine %+v", tc.Result, argo, got)
			}
		})
	}
	for _, tc := range suite.ActionTests {
		t.Run("action/"+tc.Action+"/"+tc.InputPath, func(t *testing.T) {
			script := ""
			for _, d := range defs {
				if d.Name == tc.Action {
					script = d.Script
				}
			}
			if script == "" {
				t.Fatalf("we ship no %s action", tc.Action)
			}
			obj := read(t, tc.InputPath)
			expected := read(t, tc.ExpectedOutputPath)
			compareAction(t, tc.Action, obj, script)
			got, err := engine.Engine{Profile: engine.V214}.RunAction(obj.Object, script, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !reflect.DeepEqual(verify.Normalize(got[0].Object), verify.Normalize(expected.Object)) {
				t.Errorf("output differs from Argo CD's expected output:\n%s", verify.UnifiedDiff(
					string(mustYAML(t, verify.Normalize(expected.Object))), string(mustYAML(t, verify.Normalize(got[0].Object))), "expected", "ours"))
			}
		})
	}
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The argocd-cm value is what Argo CD's docs show: discovery.lua, definitions with name and action.lua,
// and mergeBuiltinActions, with nothing Argo CD would ignore.
func TestActionsConfigMapValueShape(t *testing.T) {
	data := actionsConfigMapData(t)
	for _, k := range lua.ActionKinds() {
		value := data["resource.customizations.actions."+k.ConfigMapSuffix()]
		var parsed v1alpha1.ResourceActions
		if err := yaml.UnmarshalStrict([]byte(value), &parsed); err != nil {
			t.Errorf("%s: %v", k.Key(), err)
		}
		if !strings.Contains(value, "mergeBuiltinActions: true") {
			t.Errorf("%s: mergeBuiltinActions not set:\n%s", k.Key(), value)
		}
	}
}
