package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func rollout() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata": map[string]any{
			"name":        "checkout",
			"namespace":   "shop",
			"labels":      map[string]any{"app": "checkout"},
			"annotations": map[string]any{},
		},
		"spec": map[string]any{
			"replicas": float64(5),
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{
				map[string]any{"setWeight": float64(20)},
				map[string]any{"pause": map[string]any{}},
			}}},
		},
		"status": map[string]any{"currentStepIndex": float64(1), "canary": map[string]any{}},
	}
}

func TestDiscover(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile Profile
		scripts []string
		want    []Action
		wantErr string
	}{
		{name: "no script", wantErr: "no action discovery script provided"},
		{name: "empty table: no actions", scripts: []string{`return {}`}, want: []Action{}},
		{name: "empty entry is an enabled action", scripts: []string{`return {b = {}, a = {disabled = true}}`},
			want: []Action{{Name: "a", Disabled: true}, {Name: "b"}}},
		{name: "all fields", scripts: []string{`return {x = {disabled = false, displayName = "X", iconClass = "fa fa-x"}}`},
			want: []Action{{Name: "x", DisplayName: "X", IconClass: "fa fa-x"}}},
		{name: "first script wins on a duplicate name", scripts: []string{
			`return {["promote-full"] = {disabled = true, displayName = "blocked"}}`,
			`return {["promote-full"] = {disabled = false}, abort = {}}`},
			want: []Action{{Name: "abort"}, {Name: "promote-full", Disabled: true, DisplayName: "blocked"}}},
		{name: "a name field renames the action", scripts: []string{`return {x = {name = "y"}}`}, want: []Action{{Name: "y"}}},
		{name: "v2 params keep every field", profile: V214, scripts: []string{`return {x = {params = {{name = "n", default = "1"}}}}`},
			want: []Action{{Name: "x", Params: []ActionParam{{Name: "n", Default: "1"}}}}},
		{name: "v3 params keep only the name", profile: V32, scripts: []string{`return {x = {params = {{name = "n", default = "1"}}}}`},
			want: []Action{{Name: "x", Params: []ActionParam{{Name: "n"}}}}},
		{name: "obj is the object", scripts: []string{`return {[obj.metadata.name] = {disabled = obj.spec.replicas == 5}}`},
			want: []Action{{Name: "checkout", Disabled: true}}},
		{name: "nil result", scripts: []string{`local x = 1`}, wantErr: "expect table output from Lua script, not nil"},
		{name: "string result", scripts: []string{`return "x"`}, wantErr: "expect table output from Lua script, not string"},
		{name: "a later script's error fails the whole discovery", scripts: []string{`return {a = {}}`, `return 1`},
			wantErr: "expect table output from Lua script, not number"},
		{name: "a list is not an action table", scripts: []string{`return {"a"}`},
			wantErr: "error unmarshaling action table: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{name: "mixed keys", scripts: []string{`return {a = {}, [1] = 2}`},
			wantErr: "error in converting to lua table: json: error calling MarshalJSON for type json.jsonValue: cannot encode mixed or invalid key types"},
		{name: "an entry that is not a table", scripts: []string{`return {a = true}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal bool into Go value of type v1alpha1.ResourceAction"},
		{name: "v3.2: a param name of the wrong type", profile: V32, scripts: []string{`return {a = {params = {{name = "n"}, {name = 1}}}}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal number into Go struct field ResourceActionParam.params.name of type string"},
		{name: "v3.6: a param name of the wrong type", profile: V36, scripts: []string{`return {a = {params = {{name = "n"}, {name = 1}}}}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal number into Go struct field ResourceAction.params.1.name of type string"},
		{name: "v3.6: a param that is not a table", profile: V36, scripts: []string{`return {a = {params = {"p"}}}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal string into ResourceAction.params.0 of type v1alpha1.ResourceActionParam"},
		{name: "v3.6: params not a list", profile: V36, scripts: []string{`return {a = {params = "p"}}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal string into Go struct field ResourceAction.params of type []v1alpha1.ResourceActionParam"},
		{name: "disabled of the wrong type", scripts: []string{`return {a = {disabled = "yes"}}`},
			wantErr: "error unmarshaling resource action: json: cannot unmarshal string into Go struct field ResourceAction.disabled of type bool"},
		{name: "runtime error", scripts: []string{`return obj.spec.nothing.x`}, profile: V32,
			wantErr: "<string>:1: attempt to index a non-table object(nil) with key 'x'"},
		{name: "no string library", scripts: []string{`return {[string.upper("a")] = {}}`}, profile: V32,
			wantErr: "<string>:1: attempt to index a non-table object(nil) with key 'upper'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Engine{Profile: tc.profile}.Discover(rollout(), tc.scripts...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRunAction(t *testing.T) {
	labels := func(o map[string]any) any { return o["metadata"].(map[string]any)["labels"] }
	for _, tc := range []struct {
		name    string
		profile Profile
		script  string
		params  map[string]string
		check   func(t *testing.T, got []Impacted)
		wantErr string
	}{
		{name: "one object is a patch, integers become int64", script: `obj.spec.paused = true; obj.spec.replicas = obj.spec.replicas + 1; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if len(got) != 1 || got[0].Operation != Patch {
					t.Fatalf("got %+v", got)
				}
				spec := got[0].Object["spec"].(map[string]any)
				if spec["paused"] != true || spec["replicas"] != int64(6) {
					t.Errorf("spec %v", spec)
				}
			}},
		{name: "numbers that are not int64 stay float64", script: `obj.spec.a = 1.5; obj.spec.b = 1e21; obj.spec.c = 2^63; return obj`,
			check: func(t *testing.T, got []Impacted) {
				spec := got[0].Object["spec"].(map[string]any)
				if spec["a"] != 1.5 || spec["b"] != 1e21 || spec["c"] != float64(1<<63) {
					t.Errorf("spec %v (%T %T %T)", spec, spec["a"], spec["b"], spec["c"])
				}
			}},
		{name: "empty maps the object had come back as maps", script: `return obj`,
			check: func(t *testing.T, got []Impacted) {
				o := got[0].Object
				if !reflect.DeepEqual(o["status"].(map[string]any)["canary"], map[string]any{}) ||
					!reflect.DeepEqual(o["metadata"].(map[string]any)["annotations"], map[string]any{}) {
					t.Errorf("empty maps not restored: %v", o)
				}
				step := o["spec"].(map[string]any)["strategy"].(map[string]any)["canary"].(map[string]any)["steps"].([]any)[1]
				if !reflect.DeepEqual(step, map[string]any{"pause": map[string]any{}}) {
					t.Errorf("step %v", step)
				}
			}},
		{name: "a new empty table stays a list", script: `obj.spec.extra = {}; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if !reflect.DeepEqual(got[0].Object["spec"].(map[string]any)["extra"], []any{}) {
					t.Errorf("extra %v", got[0].Object["spec"])
				}
			}},
		{name: "v2 undoes clearing a map", profile: V214, script: `obj.metadata.labels = {}; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if !reflect.DeepEqual(labels(got[0].Object), map[string]any{"app": "checkout"}) {
					t.Errorf("labels %v", labels(got[0].Object))
				}
			}},
		{name: "v3 clears the map", profile: V32, script: `obj.metadata.labels = {}; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if !reflect.DeepEqual(labels(got[0].Object), map[string]any{}) {
					t.Errorf("labels %v", labels(got[0].Object))
				}
			}},
		{name: "removing a key removes it", script: `obj.status = nil; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if _, ok := got[0].Object["status"]; ok {
					t.Error("status kept")
				}
			}},
		{name: "v3 lets an action append an object to a list", profile: V32,
			script: `table.insert(obj.spec.strategy.canary.steps, {setWeight = 50}); return obj`,
			check: func(t *testing.T, got []Impacted) {
				steps := got[0].Object["spec"].(map[string]any)["strategy"].(map[string]any)["canary"].(map[string]any)["steps"].([]any)
				if len(steps) != 3 || !reflect.DeepEqual(steps[2], map[string]any{"setWeight": int64(50)}) {
					t.Errorf("steps %v", steps)
				}
			}},
		{name: "v2 fails where Argo CD v2.14 panics", profile: V214, script: `table.insert(obj.spec.strategy.canary.steps, {setWeight = 50}); return obj`,
			wantErr: "action appended an object or list to spec.strategy.canary.steps: Argo CD v2.14 fails on this (runtime error: index out of range [2] with length 2)"},
		{name: "v2 appends scalars", profile: V214, script: `obj.spec.list = {"a"}; return obj`,
			check: func(t *testing.T, got []Impacted) {
				if !reflect.DeepEqual(got[0].Object["spec"].(map[string]any)["list"], []any{"a"}) {
					t.Error(got[0].Object["spec"])
				}
			}},
		{name: "list form: create and patch", script: `
			local cm = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x"}, data = {}}
			return {{operation = "create", resource = cm}, {operation = "patch", resource = obj}}`,
			check: func(t *testing.T, got []Impacted) {
				if len(got) != 2 || got[0].Operation != Create || got[1].Operation != Patch {
					t.Fatalf("got %+v", got)
				}
				// Only patches are cleaned: the created object's empty table stays a list.
				if !reflect.DeepEqual(got[0].Object["data"], []any{}) {
					t.Errorf("create %v", got[0].Object)
				}
				if !reflect.DeepEqual(got[1].Object["status"].(map[string]any)["canary"], map[string]any{}) {
					t.Errorf("patch not cleaned: %v", got[1].Object)
				}
			}},
		{name: "empty list: nothing to do", script: `return {}`,
			check: func(t *testing.T, got []Impacted) {
				if len(got) != 0 {
					t.Errorf("got %+v", got)
				}
			}},
		{name: "v3 actionParams", profile: V32, params: map[string]string{"replicas": "3"},
			script: `obj.spec.replicas = tonumber(actionParams["replicas"]); return obj`,
			check: func(t *testing.T, got []Impacted) {
				if got[0].Object["spec"].(map[string]any)["replicas"] != int64(3) {
					t.Error(got[0].Object["spec"])
				}
			}},
		{name: "v2 takes no parameters", profile: V214, params: map[string]string{"a": "b"}, script: `return obj`,
			wantErr: "action parameters need Argo CD v3: v2 has no actionParams"},
		{name: "unsupported operation", script: `return {{operation = "delete", resource = obj}}`, wantErr: `unsupported operation: "delete"`},
		{name: "object without kind", script: `return {apiVersion = "v1"}`, wantErr: `Object 'Kind' is missing in '{"apiVersion":"v1"}'`},
		{name: "resource that is not an object", profile: V32, script: `return {{operation = "create", resource = "x"}}`,
			wantErr: "json: cannot unmarshal string into Go struct field ImpactedResource.resource of type map[string]interface {}"},
		{name: "entry that is not an object", profile: V32, script: `return {"x"}`,
			wantErr: "json: cannot unmarshal string into Go value of type lua.ImpactedResource"},
		// Argo CD v3.6 is built with Go 1.27, whose encoding/json (on json/v2) words these differently
		// (test/argocd-v3.6 TestActionProbesMatchArgoCDv36), whichever Go builds the engine.
		{name: "v3.6: resource that is not an object", profile: V36, script: `return {{operation = "create", resource = "x"}}`,
			wantErr: "json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{name: "v3.6: entry that is not an object", profile: V36, script: `return {{resource = obj}, "x"}`,
			wantErr: "json: cannot unmarshal string into .1 of type lua.ImpactedResource"},
		{name: "patch without resource", script: `return {{operation = "patch"}}`,
			wantErr: "action output entry 1: operation patch without a resource"},
		{name: "nil result", script: `obj.spec.paused = true`, wantErr: "expect table output from Lua script, not nil"},
		{name: "runtime error keeps v2's traceback", profile: V214, script: `error("boom")`, wantErr: "<string>:1: boom\nstack traceback:"},
		{name: "v3 drops the traceback", profile: V32, script: `error("boom")`, wantErr: "<string>:1: boom"},
		{name: "no global os", profile: V32, script: `obj.spec.t = os.time(); return obj`,
			wantErr: "<string>:1: attempt to index a non-table object(nil) with key 'time'"},
		{name: "require os works", profile: V32, script: `local os = require("os"); obj.spec.t = os.time(); return obj`,
			check: func(t *testing.T, got []Impacted) {
				if _, ok := got[0].Object["spec"].(map[string]any)["t"].(int64); !ok {
					t.Error(got[0].Object["spec"])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rollout()
			got, err := Engine{Profile: tc.profile}.RunAction(in, tc.script, tc.params)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || (tc.profile.AtLeast(V32) && err.Error() != tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
			if !reflect.DeepEqual(in, rollout()) {
				t.Error("the input object was modified")
			}
		})
	}
}

func TestActionTimeout(t *testing.T) {
	start := time.Now()
	_, err := Engine{Profile: V32, Timeout: 50 * time.Millisecond}.RunAction(rollout(), `while true do end`, nil)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("want a timeout, got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	_, err = Engine{Profile: V32, Timeout: 50 * time.Millisecond}.Discover(rollout(), `while true do end`)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("discovery: want a timeout, got %v", err)
	}
}
