package v36

import (
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"

	applicationpkg "github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// actionsData is argocd-cm data with our health scripts and, per kind with actions, the
// resource.customizations.actions.<group>_<Kind> value in Argo CD's ResourceActions YAML, built from
// lua.Actions here rather than by the generator so that this oracle does not depend on the code it checks.
func actionsData(t *testing.T) map[string]string {
	t.Helper()
	data := map[string]string{}
	for _, k := range lua.Kinds() {
		s, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.health."+k.ConfigMapSuffix()] = s
	}
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

// v36BuiltinActions are Argo CD v3.6.1's own actions per kind.
var v36BuiltinActions = map[string][]string{
	"argoproj.io/Rollout":     {"abort", "pause", "promote-full", "restart", "resume", "retry", "skip-current-step"},
	"argoproj.io/AnalysisRun": {"terminate"},
	"argoproj.io/Experiment":  nil,
}

func fixturesOf(t *testing.T, group, kind string) []lua.Fixture {
	t.Helper()
	fx, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	var out []lua.Fixture
	for _, f := range fx {
		obj := object(t, f.Raw)
		if obj.GroupVersionKind().Group == group && obj.GetKind() == kind {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s/%s fixture", group, kind)
	}
	return out
}

// Argo CD v3.6.1's settings code loads our actions; its API-server path discovers ours merged with the
// built-ins and runs ours; the engine returns exactly what Argo CD returns, over every fixture.
func TestActionsThroughArgoCDv36(t *testing.T) {
	ov := overrides(t, actionsData(t))
	for _, k := range lua.ActionKinds() {
		discovery, defs, err := lua.Actions(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		override := ov[k.Key()]
		actions, err := override.GetActions()
		if err != nil {
			t.Fatalf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
		}
		if !actions.MergeBuiltinActions || actions.ActionDiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Fatalf("%s: loaded %+v", k.Key(), actions)
		}
		builtin, known := v36BuiltinActions[k.Key()]
		if !known {
			t.Fatalf("%s: list its Argo CD built-in actions in v36BuiltinActions", k.Key())
		}
		vm := argolua.VM{ResourceOverrides: ov}
		for _, fx := range fixturesOf(t, k.Group, k.Kind) {
			t.Run(fx.Path, func(t *testing.T) {
				obj := object(t, fx.Raw)
				scripts, err := vm.GetResourceActionDiscovery(obj)
				if err != nil {
					t.Fatal(err)
				}
				if len(scripts) != 1+min(len(builtin), 1) || scripts[0] != discovery {
					t.Fatalf("discovery scripts: want ours first, then the built-in one if any; got %d", len(scripts))
				}
				want, wantErr := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts)
				got, gotErr := engine.Engine{Profile: engine.V36}.Discover(obj.Object, scripts...)
				if errText(wantErr) != errText(gotErr) {
					t.Fatalf("discovery error:\n argo-cd: %s\n engine:  %s", errText(wantErr), errText(gotErr))
				}
				if wantErr == nil {
					if !reflect.DeepEqual(fromArgo(want), got) {
						t.Errorf("discovery:\n argo-cd: %+v\n engine:  %+v", fromArgo(want), got)
					}
					names := map[string]bool{}
					for _, a := range got {
						names[a.Name] = true
					}
					for _, d := range defs {
						if !names[d.Name] {
							t.Errorf("merged discovery lacks ours %s", d.Name)
						}
					}
					for _, name := range builtin {
						if !names[name] {
							t.Errorf("merged discovery lacks the built-in %s", name)
						}
					}
				}
				if _, err := (engine.Engine{Profile: engine.V36}).Discover(obj.Object, discovery); err != nil {
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
					compareV36Action(t, d.Name, obj, def.ActionLua, nil)
				}
			})
		}
	}
}

func compareV36Action(t *testing.T, name string, obj *unstructured.Unstructured, script string, params map[string]string) {
	t.Helper()
	var argoParams []*applicationpkg.ResourceActionParameters
	for k, v := range params {
		argoParams = append(argoParams, &applicationpkg.ResourceActionParameters{Name: &k, Value: &v})
	}
	want, wantErr := argolua.VM{}.ExecuteResourceAction(obj.DeepCopy(), script, argoParams)
	got, gotErr := engine.Engine{Profile: engine.V36}.RunAction(obj.Object, script, params)
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

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func fromArgo(in []v1alpha1.ResourceAction) []engine.Action {
	out := make([]engine.Action, 0, len(in))
	for _, a := range in {
		e := engine.Action{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass}
		for _, p := range a.Params {
			e.Params = append(e.Params, engine.ActionParam{Name: p.Name})
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// The same probes as conformance/actions_test.go (v2.14), plus actionParams.
var actionProbes = []struct {
	name, script string
	params       map[string]string
}{
	{"unchanged", `return obj`, nil},
	{"set field", `obj.spec.paused = true; return obj`, nil},
	{"arithmetic", `obj.spec.replicas = obj.spec.replicas + 1; obj.spec.half = 0.5; obj.spec.huge = 1e21; return obj`, nil},
	{"clear map", `obj.metadata.labels = {}; return obj`, nil},
	{"new empty table", `obj.spec.extra = {}; return obj`, nil},
	{"remove field", `obj.status = nil; return obj`, nil},
	{"append scalar", `table.insert(obj.spec.list, "c"); return obj`, nil},
	{"append map", `table.insert(obj.spec.steps, {setWeight = 5}); return obj`, nil},
	{"shrink list", `obj.spec.steps = {obj.spec.steps[1]}; return obj`, nil},
	{"list of one patch", `return {{operation = "patch", resource = obj}}`, nil},
	{"create and patch", `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x"}, data = {}}}, {operation = "patch", resource = obj}}`, nil},
	{"empty list", `return {}`, nil},
	{"unsupported operation", `return {{operation = "delete", resource = obj}}`, nil},
	{"missing operation", `return {{resource = obj}}`, nil},
	{"capitalised fields", `return {{Operation = "create", Resource = obj}}`, nil},
	{"no kind", `obj.kind = nil; return obj`, nil},
	{"kind not a string", `obj.kind = 1; return obj`, nil},
	{"resource not an object", `return {{operation = "create", resource = "x"}}`, nil},
	{"entry not an object", `return {"x"}`, nil},
	{"nil result", `obj.spec.paused = true`, nil},
	{"string result", `return "x"`, nil},
	{"runtime error", `error("boom")`, nil},
	{"error level 0", `error("boom", 0)`, nil},
	{"no string library", `obj.spec.s = string.upper("a"); return obj`, nil},
	{"require os", `local os = require("os"); obj.spec.t = type(os.time()); return obj`, nil},
	{"shared table", `local t = {a = 1}; obj.spec.x = t; obj.spec.y = t; return obj`, nil},
	{"params", `obj.spec.replicas = tonumber(actionParams["replicas"]); obj.spec.who = actionParams.who; return obj`, map[string]string{"replicas": "7", "who": "me"}},
	{"no params", `obj.spec.n = type(actionParams); return obj`, nil},
	{"second entry not an object", `return {{operation = "patch", resource = obj}, "x"}`, nil},
	{"resource a list", `return {{operation = "create", resource = {1, 2}}}`, nil},
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
	// Argo CD v3.6 is built with Go 1.27, whose encoding/json words nested type errors by index.
	{"second param name number", `return {a = {params = {{name = "n"}, {name = 1}}}}`},
	{"param not a table", `return {a = {params = {"p"}}}`},
	{"param null then bad", `return {a = {params = {{name = "n"}, {name = {x = 1}}}}}`},
	{"params not a list", `return {a = {params = "p"}}`},
	{"disabled and params bad", `return {a = {disabled = "yes", params = {{name = 1}}}}`},
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

func TestActionProbesMatchArgoCDv36(t *testing.T) {
	for _, p := range actionProbes {
		t.Run("action/"+p.name, func(t *testing.T) {
			compareV36Action(t, p.name, &unstructured.Unstructured{Object: probeObject()}, p.script, p.params)
		})
	}
	for _, p := range discoveryProbes {
		t.Run("discovery/"+p.name, func(t *testing.T) {
			want, wantErr := argolua.VM{}.ExecuteResourceActionDiscovery(&unstructured.Unstructured{Object: probeObject()}, []string{p.script})
			got, gotErr := engine.Engine{Profile: engine.V36}.Discover(probeObject(), p.script)
			if errText(wantErr) != errText(gotErr) {
				t.Fatalf("error:\n argo-cd: %s\n engine:  %s", errText(wantErr), errText(gotErr))
			}
			if wantErr == nil && !reflect.DeepEqual(fromArgo(want), got) {
				t.Errorf("argo-cd %+v, engine %+v", fromArgo(want), got)
			}
		})
	}
}

func builtinFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := resource_customizations.Embedded.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func findDef(t *testing.T, defs []lua.ActionDef, name string) string {
	t.Helper()
	for _, d := range defs {
		if d.Name == name {
			return d.Script
		}
	}
	t.Fatalf("we ship no %s action", name)
	return ""
}

// Argo CD v3.6.1's own action suites for Rollout and AnalysisRun, restricted to the actions we ship, pass
// against our scripts through Argo CD's VM and the engine: for discovery, the entries for our actions
// equal the expected ones; for actions, the output equals the expected output.
func TestArgoCDv36BuiltinActionSuites(t *testing.T) {
	discoveries, actionCases := 0, 0
	defer func() {
		t.Logf("Argo CD v3.6.1 built-in action suites: %d discovery cases compared, %d action cases for our actions run", discoveries, actionCases)
	}()
	for _, kind := range []string{"Rollout", "AnalysisRun"} {
		dir := path.Join("argoproj.io", kind, "actions")
		var suite verify.ActionSuite
		if err := yaml.Unmarshal(builtinFile(t, path.Join(dir, "action_test.yaml")), &suite); err != nil {
			t.Fatal(err)
		}
		discovery, defs, err := lua.Actions("argoproj.io", kind)
		if err != nil {
			t.Fatal(err)
		}
		ours := map[string]bool{}
		for _, d := range defs {
			ours[d.Name] = true
		}
		ranActions := 0
		discoveries += len(suite.DiscoveryTests)
		for i, tc := range suite.DiscoveryTests {
			t.Run(fmt.Sprintf("%s/discovery[%d]/%s", kind, i, tc.InputPath), func(t *testing.T) {
				obj := object(t, builtinFile(t, path.Join(dir, tc.InputPath)))
				argo, err := argolua.VM{}.ExecuteResourceActionDiscovery(obj, []string{discovery})
				if err != nil {
					t.Fatal(err)
				}
				got, err := engine.Engine{Profile: engine.V36}.Discover(obj.Object, discovery)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(fromArgo(argo), got) {
					t.Fatalf("argo-cd VM %+v, engine %+v", argo, got)
				}
				var want []engine.Action
				for _, a := range tc.Result {
					if ours[a.Name] {
						want = append(want, a)
					}
				}
				sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Argo CD v3.6.1 expects %+v, ours %+v", want, got)
				}
			})
		}
		for i, tc := range suite.ActionTests {
			if !ours[tc.Action] {
				continue
			}
			ranActions++
			actionCases++
			t.Run(fmt.Sprintf("%s/action[%d]/%s/%s", kind, i, tc.Action, tc.InputPath), func(t *testing.T) {
				script := findDef(t, defs, tc.Action)
				obj := object(t, builtinFile(t, path.Join(dir, tc.InputPath)))
				expected := object(t, builtinFile(t, path.Join(dir, tc.ExpectedOutputPath)))
				compareV36Action(t, tc.Action, obj, script, tc.Parameters)
				got, err := engine.Engine{Profile: engine.V36}.RunAction(obj.Object, script, tc.Parameters)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || !reflect.DeepEqual(verify.Normalize(got[0].Object), verify.Normalize(expected.Object)) {
					w, _ := yaml.Marshal(verify.Normalize(expected.Object))
					g, _ := yaml.Marshal(verify.Normalize(got[0].Object))
					t.Errorf("output differs from Argo CD v3.6.1's expected output:\n%s", verify.UnifiedDiff(string(w), string(g), "expected", "ours"))
				}
			})
		}
		if ranActions == 0 {
			t.Errorf("%s: Argo CD v3.6.1's suite has no case for our actions", kind)
		}
	}
}

// Over every fixture, our pause, skip-current-step and terminate produce what v3.6's built-in scripts
// produce wherever those succeed, and our discovery agrees with the built-in discovery on our actions
// except where it is meant to differ: a failed analysis blocks skip-current-step, and an unset
// currentStepIndex (where v3.6 offers an action that then fails) disables it.
func TestOurActionsMatchV36Builtins(t *testing.T) {
	for _, kind := range []string{"Rollout", "AnalysisRun"} {
		dir := path.Join("argoproj.io", kind, "actions")
		builtinDiscovery := string(builtinFile(t, path.Join(dir, "discovery.lua")))
		discovery, defs, err := lua.Actions("argoproj.io", kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, fx := range fixturesOf(t, "argoproj.io", kind) {
			t.Run(fx.Path, func(t *testing.T) {
				obj := object(t, fx.Raw)
				for _, d := range defs {
					builtin := string(builtinFile(t, path.Join(dir, d.Name, "action.lua")))
					want, wantErr := argolua.VM{}.ExecuteResourceAction(obj.DeepCopy(), builtin, nil)
					got, gotErr := argolua.VM{}.ExecuteResourceAction(obj.DeepCopy(), d.Script, nil)
					if wantErr != nil {
						continue // v3.6's script fails on this object; ours may do better
					}
					if gotErr != nil {
						t.Errorf("%s: v3.6's built-in succeeds, ours fails: %v", d.Name, gotErr)
						continue
					}
					if !reflect.DeepEqual(want[0].UnstructuredObj.Object, got[0].UnstructuredObj.Object) {
						t.Errorf("%s: output differs from v3.6's built-in", d.Name)
					}
				}
				want, wantErr := argolua.VM{}.ExecuteResourceActionDiscovery(obj.DeepCopy(), []string{builtinDiscovery})
				got, err := engine.Engine{Profile: engine.V36}.Discover(obj.Object, discovery)
				if err != nil {
					t.Fatalf("our discovery failed: %v", err)
				}
				if wantErr != nil {
					return // v3.6's discovery fails on this object (no status or no strategy); ours does not
				}
				builtin := map[string]engine.Action{}
				for _, a := range fromArgo(want) {
					builtin[a.Name] = a
				}
				for _, a := range got {
					b, ok := builtin[a.Name]
					if !ok {
						t.Errorf("v3.6's built-in discovery has no %s", a.Name)
						continue
					}
					if reflect.DeepEqual(a, b) {
						continue
					}
					if a.Disabled && strings.Contains(a.DisplayName, "(blocked: ") {
						continue // a failed analysis of this revision: ours disables it and says why
					}
					if _, hasIndex := nested(obj.Object, "status", "currentStepIndex").(float64); a.Name == "skip-current-step" && a.Disabled && !hasIndex {
						continue // v3.6 offers it, and its action then fails
					}
					t.Errorf("%s: v3.6's built-in %+v, ours %+v", a.Name, b, a)
				}
			})
		}
	}
}

func nested(obj map[string]any, fields ...string) any {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	return cur
}
