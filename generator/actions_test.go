package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// With default options (spelled out or not) the discovery and action scripts are the embedded files, byte
// for byte, like the health scripts.
func TestDefaultActionsAreTheEmbeddedFiles(t *testing.T) {
	kinds := lua.ActionKinds()
	if len(kinds) == 0 {
		t.Fatal("no bundled actions")
	}
	for _, opts := range []Options{{}, {Actions: new(true), BlockBypassOnFailedAnalysis: new(true), Inconclusive: InconclusiveDegraded}} {
		for _, k := range kinds {
			wantDiscovery, wantDefs, err := lua.Actions(k.Group, k.Kind)
			if err != nil {
				t.Fatal(err)
			}
			discovery, defs, err := Actions(k, opts)
			if err != nil {
				t.Fatal(err)
			}
			if discovery != wantDiscovery || !reflect.DeepEqual(defs, wantDefs) || len(defs) == 0 {
				t.Errorf("%s with %+v differs from the embedded actions", k.Key(), opts)
			}
		}
	}
	// The lua format's copies too: every .lua file of the tree is the embedded file.
	files, err := Generate(Lua, Options{})
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".lua") {
			continue
		}
		scripts++
		if want, err := lua.FS.ReadFile(f.Path); err != nil || string(want) != string(f.Data) {
			t.Errorf("%s: not the embedded file (%v)", f.Path, err)
		}
	}
	embedded := 0
	if err := fs.WalkDir(lua.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lua") {
			embedded++
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if scripts != embedded {
		t.Errorf("%d Lua files in the tree, want all %d embedded ones", scripts, embedded)
	}
	if _, _, err := Actions(lua.Kind{Group: "argoproj.io", Kind: "Nope"}, Options{}); !errors.Is(err, lua.ErrNoActions) {
		t.Errorf("kind without actions: error %v, want lua.ErrNoActions", err)
	}
}

// BlockBypassOnFailedAnalysis=false rewrites the one option line of the discovery scripts that have it, and
// leaves the others (no options block) and every action script alone.
func TestBlockBypassChangesOnlyTheOptionLine(t *testing.T) {
	optioned := 0
	for _, k := range lua.ActionKinds() {
		orig, origDefs, _ := lua.Actions(k.Group, k.Kind)
		got, defs, err := Actions(k, Options{BlockBypassOnFailedAnalysis: new(false)})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(defs, origDefs) {
			t.Errorf("%s: action scripts changed", k.Key())
		}
		if !lua.HasOptions(orig) {
			if got != orig {
				t.Errorf("%s: discovery without options changed", k.Key())
			}
			continue
		}
		optioned++
		a, b := strings.Split(orig, "\n"), strings.Split(got, "\n")
		if len(a) != len(b) {
			t.Fatalf("%s: line count changed from %d to %d", k.Key(), len(a), len(b))
		}
		var changed []string
		for i := range a {
			if a[i] != b[i] {
				changed = append(changed, b[i])
			}
		}
		if len(changed) != 1 || changed[0] != "local blockBypassOnFailedAnalysis = false" {
			t.Errorf("%s: changed lines %q, want only the blockBypassOnFailedAnalysis assignment", k.Key(), changed)
		}
	}
	if optioned != 1 {
		t.Errorf("%d discovery scripts with options, want Rollout's", optioned)
	}
}

// The actions value is what Argo CD's ResourceOverride.GetActions parses (sigs.k8s.io/yaml into
// ResourceActions, mirrored strictly here): mergeBuiltinActions true, our discovery and every definition in
// name order, scripts as literal block scalars; present exactly for the selected kinds with actions.
func TestActionsValue(t *testing.T) {
	ar := lua.Kind{Group: "argoproj.io", Kind: "AnalysisRun"}
	tests := []struct {
		name string
		opts Options
		want []lua.Kind // kinds whose actions key must be present
	}{
		{"default", Options{}, lua.ActionKinds()},
		{"no block bypass", Options{BlockBypassOnFailedAnalysis: new(false)}, lua.ActionKinds()},
		{"kinds", Options{Kinds: []lua.Kind{ar}}, []lua.Kind{ar}},
		{"no actions", Options{Actions: new(false)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ConfigMapData(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for key := range data {
				if strings.HasPrefix(key, "resource.customizations.actions.") {
					n++
				}
			}
			if n != len(tc.want) {
				t.Errorf("%d actions keys, want %d", n, len(tc.want))
			}
			for _, k := range tc.want {
				value, ok := data[ActionsKey(k)]
				if !ok {
					t.Errorf("%s missing", ActionsKey(k))
					continue
				}
				var got resourceActions
				if err := yaml.UnmarshalStrict([]byte(value), &got); err != nil {
					t.Fatalf("%s: %v", k.Key(), err)
				}
				discovery, defs, err := Actions(k, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if !got.MergeBuiltinActions || got.ActionDiscoveryLua != discovery || len(got.Definitions) != len(defs) {
					t.Fatalf("%s: loaded %+v", k.Key(), got)
				}
				for i, d := range defs {
					if got.Definitions[i] != (resourceActionDefRaw{Name: d.Name, ActionLua: d.Script}) {
						t.Errorf("%s: definitions[%d] is not %s", k.Key(), i, d.Name)
					}
				}
				if !strings.HasPrefix(value, "mergeBuiltinActions: true\ndiscovery.lua: |\n") || !strings.Contains(value, "\n    action.lua: |\n") {
					t.Errorf("%s: not in the documented shape:\n%s", k.Key(), value)
				}
			}
		})
	}
}

// A script a block scalar cannot hold is an error rather than a quoted string Argo CD would still load.
func TestActionsValueRefusesNonBlockScripts(t *testing.T) {
	tests := []struct {
		name      string
		discovery string
		defs      []lua.ActionDef
		wantErr   string
	}{
		{"discovery", "return {} \n", nil, "discovery.lua cannot be written"},
		{"action", "return {}\n", []lua.ActionDef{{Name: "a", Script: "return obj \nend\n"}}, "action.lua cannot be written"},
		{"control character", "return {}\n", []lua.ActionDef{{Name: "a", Script: "return \"\x01\"\n"}}, "action.lua cannot be written"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := actionsValue(tc.discovery, tc.defs); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := actionsValue("  return {}\n\n", []lua.ActionDef{{Name: "a", Script: "return obj"}}); err != nil {
		t.Errorf("leading spaces and no final newline: %v", err)
	}
}

// deriveActionSuite refuses a broken bundled suite, and any effect of the option other than lifting blocks.
func TestDeriveActionSuiteRefuses(t *testing.T) {
	r, err := Options{BlockBypassOnFailedAnalysis: new(false)}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	const dir = "argoproj.io/Rollout/actions"
	bundled, _, err := lua.Actions("argoproj.io", "Rollout")
	if err != nil {
		t.Fatal(err)
	}
	optioned, _, err := actions(rollout, r)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := lua.FS.ReadFile(dir + "/" + actionTestFile)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture whose bundled result blocks promote-full and skip-current-step.
	const blocked = "testdata/canary_step_analysis_failed_aborted_v1.8.yaml"
	var suite verify.ActionSuite
	if err := yaml.UnmarshalStrict(raw, &suite); err != nil {
		t.Fatal(err)
	}
	var result string
	for _, tc := range suite.DiscoveryTests {
		if tc.InputPath == blocked {
			b, err := yaml.Marshal(tc.Result)
			if err != nil {
				t.Fatal(err)
			}
			result = string(b)
		}
	}
	if !strings.Contains(result, "promote-full") {
		t.Fatalf("the bundled suite no longer has %s with promote-full blocked", blocked)
	}
	one := func(result string) []byte {
		return []byte("discoveryTests:\n- inputPath: " + blocked + "\n  result:\n" + indent(result, "  "))
	}
	// A discovery that replaces the optioned one, to show each refusal.
	rogue := func(entries string) string {
		return "local actions = {}\n" + entries + "\nreturn actions\n"
	}
	// An object where the bundled discovery enables both actions: disabling or dropping one is refused.
	const open = "testdata/canary_pause_step.yaml"
	openSuite := []byte("discoveryTests:\n- inputPath: " + open + "\n  result:\n  - name: pause\n    disabled: false\n  - name: skip-current-step\n    disabled: false\n")
	tests := []struct {
		name     string
		suite    []byte
		optioned string
		wantErr  string
	}{
		{"bundled suite fails", one("- name: pause\n  disabled: false\n"), optioned, "the bundled suite fails"},
		{"adds an action", one(result), rogue(`actions["pause"] = {disabled = true}; actions["skip-current-step"] = {disabled = false}; actions["restart"] = {}`), "added restart"},
		{"disables an enabled action", openSuite, rogue(`actions["pause"] = {disabled = false}; actions["skip-current-step"] = {disabled = true}`), "changed skip-current-step (disabled: false) into skip-current-step (disabled: true)"},
		{"drops an enabled action", openSuite, rogue(`actions["pause"] = {disabled = false}`), "dropped the enabled skip-current-step"},
		{"changes more than disabled", one(result), rogue(`actions["pause"] = {disabled = true}; actions["skip-current-step"] = {iconClass = "fa"}`), "it may only enable or drop"},
		{"discovery error", one(result), "return obj.nothing.x", "discovery with options"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deriveActionSuite(dir, rendering{resolved: r}, tc.suite, bundled, tc.optioned)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	// And the real pair derives, marking the blocked case.
	out, err := deriveActionSuite(dir, rendering{resolved: r}, one(result), bundled, optioned)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "# changed by --block-bypass-on-failed-analysis=false; bundled expectation: ") {
		t.Errorf("blocked case not marked:\n%s", out)
	}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			fmt.Fprint(&b, prefix+l)
		}
	}
	return b.String()
}
