package suite

import (
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// ActionsThrough: the release's settings code loads our actions from argocd-cm; its API-server path (VM
// with the loaded overrides, no open libraries) discovers ours merged with the built-ins and runs ours;
// and the engine, given the same discovery and action scripts, returns exactly what Argo CD returns, over
// every fixture of each kind.
func ActionsThrough(t *testing.T, r Release) {
	s := Load(t, r, ActionsData(t))
	e := engine.Engine{Profile: r.Profile()}
	kinds := lua.ActionKinds()
	if len(kinds) != 3 {
		t.Fatalf("want actions for Rollout, AnalysisRun and Experiment, got %v", kinds)
	}
	for _, k := range kinds {
		discovery, defs, err := lua.Actions(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Override(k.Key()); !ok {
			t.Fatalf("%s: no override loaded", k.Key())
		}
		actions, err := s.Actions(k.Key())
		if err != nil {
			t.Fatalf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
		}
		if !actions.MergeBuiltinActions || actions.DiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Fatalf("%s: loaded %+v", k.Key(), actions)
		}
		builtin, known := r.Capabilities().BuiltinActions[k.Key()]
		if !known {
			t.Fatalf("%s: list Argo CD %s's built-in actions in its Capabilities", k.Key(), r.Version())
		}
		for _, fx := range FixturesOf(t, k) {
			t.Run(fx.Path, func(t *testing.T) {
				obj := Object(t, fx.Raw)
				scripts, err := s.DiscoveryScripts(obj)
				if err != nil {
					t.Fatal(err)
				}
				if len(scripts) != 1+min(len(builtin), 1) || scripts[0] != discovery {
					t.Fatalf("discovery scripts: want ours first, then the built-in one if any; got %d", len(scripts))
				}
				want, wantErr := s.Discover(obj, scripts)
				got, gotErr := e.Discover(obj, scripts...)
				if ErrText(wantErr) != ErrText(gotErr) {
					t.Fatalf("discovery error:\n argo-cd: %s\n engine:  %s", ErrText(wantErr), ErrText(gotErr))
				}
				if wantErr == nil {
					if !reflect.DeepEqual(want, got) {
						t.Errorf("discovery:\n argo-cd: %+v\n engine:  %+v", want, got)
					}
					requireNames(t, got, defs, builtin)
				}
				// Ours alone never fails, whatever the object (Argo CD's built-in discovery may).
				if _, err := e.Discover(obj, discovery); err != nil {
					t.Errorf("our discovery failed: %v", err)
				}
				for _, d := range defs {
					script, err := s.ActionScript(obj, d.Name)
					if err != nil {
						t.Fatal(err)
					}
					if script != d.Script {
						t.Fatalf("%s: Argo CD resolved another script", d.Name)
					}
					CompareAction(t, r, d.Name, obj, script, nil)
				}
			})
		}
	}
}

// requireNames fails unless a merged discovery lists ours and the built-ins.
func requireNames(t testing.TB, got []engine.Action, defs []lua.ActionDef, builtin []string) {
	t.Helper()
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

// CompareAction runs script through the release's ExecuteResourceAction and the engine: the same
// operations and objects, or the same error; where the release panics, the engine must fail naming the
// same runtime error.
func CompareAction(t testing.TB, r Release, name string, obj map[string]any, script string, params map[string]string) {
	t.Helper()
	want, wantErr := Defaults(r).RunAction(obj, script, params)
	got, gotErr := engine.Engine{Profile: r.Profile()}.RunAction(obj, script, params)
	if panicked, ok := strings.CutPrefix(ErrText(wantErr), "argo-cd panicked: "); ok {
		if gotErr == nil || !strings.Contains(gotErr.Error(), panicked) {
			t.Errorf("%s: argo-cd panicked (%s), engine: %v", name, panicked, gotErr)
		}
		return
	}
	if ErrText(wantErr) != ErrText(gotErr) {
		t.Errorf("%s: error:\n argo-cd: %s\n engine:  %s", name, ErrText(wantErr), ErrText(gotErr))
		return
	}
	if wantErr != nil {
		return
	}
	if len(want) != len(got) {
		t.Fatalf("%s: argo-cd returned %d objects, engine %d", name, len(want), len(got))
	}
	for i := range want {
		if want[i].Operation != got[i].Operation || !reflect.DeepEqual(want[i].Object, got[i].Object) {
			t.Errorf("%s: object %d:\n argo-cd: %s %#v\n engine:  %s %#v", name, i, want[i].Operation, want[i].Object, got[i].Operation, got[i].Object)
		}
	}
}

// actionProbes exercise the parts of Argo CD's action handling the engine reproduces: result decoding,
// map cleaning, number types, operations, parameters and error text.
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

// discoveryProbes exercise the decoding of a discovery result into ResourceActions, the errors of nested
// values included (Go 1.27's encoding/json, with which v3.6 is built, words them by index).
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

// ActionProbes runs the action and discovery probes in the release's VM and in the engine.
func ActionProbes(t *testing.T, r Release) {
	e := engine.Engine{Profile: r.Profile()}
	argo := Defaults(r)
	for _, p := range actionProbes {
		if strings.Contains(p.script, "actionParams") && !r.Capabilities().ActionParams {
			continue // v2.14 has no action parameters
		}
		t.Run("action/"+p.name, func(t *testing.T) {
			CompareAction(t, r, p.name, probeObject(), p.script, p.params)
		})
	}
	for _, p := range discoveryProbes {
		t.Run("discovery/"+p.name, func(t *testing.T) {
			want, wantErr := argo.Discover(probeObject(), []string{p.script})
			got, gotErr := e.Discover(probeObject(), p.script)
			if ErrText(wantErr) != ErrText(gotErr) {
				t.Fatalf("error:\n argo-cd: %s\n engine:  %s", ErrText(wantErr), ErrText(gotErr))
			}
			if wantErr == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("argo-cd %+v, engine %+v", want, got)
			}
		})
	}
	_, err := argo.Discover(probeObject(), nil)
	if _, ours := e.Discover(probeObject()); ErrText(err) != ErrText(ours) {
		t.Errorf("no scripts: argo-cd %v, engine %v", err, ours)
	}
}

func builtinFile(t testing.TB, r Release, p string) []byte {
	t.Helper()
	b, err := fs.ReadFile(r.Builtins(), p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BuiltinActionSuites runs the release's own action suites of kinds, restricted to the actions we ship,
// against our scripts through the release's VM and the engine: for discovery, the entries for our actions
// equal the expected ones; for actions, the output equals the expected output.
func BuiltinActionSuites(t *testing.T, r Release, kinds ...string) {
	e := engine.Engine{Profile: r.Profile()}
	discoveries, actionCases := 0, 0
	for _, kind := range kinds {
		dir := path.Join("argoproj.io", kind, "actions")
		var suite verify.ActionSuite
		if err := yaml.Unmarshal(builtinFile(t, r, path.Join(dir, "action_test.yaml")), &suite); err != nil {
			t.Fatal(err)
		}
		if len(suite.DiscoveryTests) == 0 || len(suite.ActionTests) == 0 {
			t.Fatalf("%s: Argo CD %s's suite is empty", kind, r.Version())
		}
		discovery, defs, err := lua.Actions("argoproj.io", kind)
		if err != nil {
			t.Fatal(err)
		}
		ours := map[string]string{}
		for _, d := range defs {
			ours[d.Name] = d.Script
		}
		discoveries += len(suite.DiscoveryTests)
		ran := 0
		for i, tc := range suite.DiscoveryTests {
			t.Run(fmt.Sprintf("%s/discovery[%d]/%s", kind, i, tc.InputPath), func(t *testing.T) {
				obj := Object(t, builtinFile(t, r, path.Join(dir, tc.InputPath)))
				argo, err := Defaults(r).Discover(obj, []string{discovery})
				if err != nil {
					t.Fatal(err)
				}
				got, err := e.Discover(obj, discovery)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(argo, got) {
					t.Fatalf("argo-cd VM %+v, engine %+v", argo, got)
				}
				var want []engine.Action
				for _, a := range tc.Result {
					if _, ok := ours[a.Name]; ok {
						want = append(want, a)
					}
				}
				sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Argo CD %s expects %+v, ours %+v", r.Version(), want, got)
				}
			})
		}
		for i, tc := range suite.ActionTests {
			script, ok := ours[tc.Action]
			if !ok {
				continue
			}
			ran++
			t.Run(fmt.Sprintf("%s/action[%d]/%s/%s", kind, i, tc.Action, tc.InputPath), func(t *testing.T) {
				obj := Object(t, builtinFile(t, r, path.Join(dir, tc.InputPath)))
				expected := Object(t, builtinFile(t, r, path.Join(dir, tc.ExpectedOutputPath)))
				CompareAction(t, r, tc.Action, obj, script, tc.Parameters)
				got, err := e.RunAction(obj, script, tc.Parameters)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || !reflect.DeepEqual(verify.Normalize(got[0].Object), verify.Normalize(expected)) {
					w, _ := yaml.Marshal(verify.Normalize(expected))
					g, _ := yaml.Marshal(verify.Normalize(got[0].Object))
					t.Errorf("output differs from Argo CD %s's expected output:\n%s", r.Version(), verify.UnifiedDiff(string(w), string(g), "expected", "ours"))
				}
			})
		}
		actionCases += ran
		if ran == 0 {
			t.Errorf("%s: Argo CD %s's suite has no case for our actions", kind, r.Version())
		}
	}
	t.Logf("Argo CD %s built-in action suites: %d discovery cases compared, %d action cases for our actions run", r.Version(), discoveries, actionCases)
}

// OurActionsMatchBuiltins (a release whose built-ins have our actions too): over every fixture, our
// pause, skip-current-step and terminate produce what the built-in scripts produce wherever those
// succeed, and our discovery agrees with the built-in discovery on our actions except where it is meant
// to differ: a failed analysis blocks skip-current-step, and an unset currentStepIndex (where the
// built-in offers an action that then fails) disables it.
func OurActionsMatchBuiltins(t *testing.T, r Release) {
	argo := Defaults(r)
	e := engine.Engine{Profile: r.Profile()}
	for _, kind := range []string{"Rollout", "AnalysisRun"} {
		dir := path.Join("argoproj.io", kind, "actions")
		builtinDiscovery := string(builtinFile(t, r, path.Join(dir, "discovery.lua")))
		discovery, defs, err := lua.Actions("argoproj.io", kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, fx := range FixturesOf(t, lua.Kind{Group: "argoproj.io", Kind: kind}) {
			t.Run(fx.Path, func(t *testing.T) {
				obj := Object(t, fx.Raw)
				for _, d := range defs {
					builtin := string(builtinFile(t, r, path.Join(dir, d.Name, "action.lua")))
					want, wantErr := argo.RunAction(obj, builtin, nil)
					got, gotErr := argo.RunAction(obj, d.Script, nil)
					if wantErr != nil {
						continue // the built-in script fails on this object; ours may do better
					}
					if gotErr != nil {
						t.Errorf("%s: the built-in succeeds, ours fails: %v", d.Name, gotErr)
						continue
					}
					if !reflect.DeepEqual(want[0].Object, got[0].Object) {
						t.Errorf("%s: output differs from the built-in", d.Name)
					}
				}
				want, wantErr := argo.Discover(obj, []string{builtinDiscovery})
				got, err := e.Discover(obj, discovery)
				if err != nil {
					t.Fatalf("our discovery failed: %v", err)
				}
				if wantErr != nil {
					return // the built-in discovery fails on this object (no status or no strategy); ours does not
				}
				builtin := map[string]engine.Action{}
				for _, a := range want {
					builtin[a.Name] = a
				}
				for _, a := range got {
					b, ok := builtin[a.Name]
					switch {
					case !ok:
						t.Errorf("the built-in discovery has no %s", a.Name)
					case reflect.DeepEqual(a, b):
					case a.Disabled && strings.Contains(a.DisplayName, "(blocked: "):
						// a failed analysis of this revision: ours disables it and says why
					case a.Name == "skip-current-step" && a.Disabled && !hasStepIndex(obj):
						// the built-in offers it, and its action then fails
					default:
						t.Errorf("%s: the built-in %+v, ours %+v", a.Name, b, a)
					}
				}
			})
		}
	}
}

func hasStepIndex(obj map[string]any) bool {
	status, _ := obj["status"].(map[string]any)
	_, ok := status["currentStepIndex"].(float64) // decoded from YAML: every number is a float64
	return ok
}
