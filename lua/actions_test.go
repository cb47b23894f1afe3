package lua_test

import (
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	"github.com/analysis-health/analysis-health/lua"
)

func TestActions(t *testing.T) {
	var keys []string
	for _, k := range lua.ActionKinds() {
		keys = append(keys, k.Key())
	}
	if want := []string{"argoproj.io/AnalysisRun", "argoproj.io/Experiment", "argoproj.io/Rollout"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("ActionKinds %v, want %v", keys, want)
	}
	for _, tc := range []struct {
		kind string
		defs []string
	}{
		{"Rollout", []string{"pause", "skip-current-step"}},
		{"AnalysisRun", []string{"terminate"}},
		{"Experiment", []string{"terminate"}},
	} {
		discovery, defs, err := lua.Actions("argoproj.io", tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
			if err := engine.CheckSyntax(d.Script); err != nil || !strings.Contains(d.Script, "return obj") {
				t.Errorf("%s/%s: %v", tc.kind, d.Name, err)
			}
		}
		if !reflect.DeepEqual(names, tc.defs) {
			t.Errorf("%s: actions %v, want %v", tc.kind, names, tc.defs)
		}
		if err := engine.CheckSyntax(discovery); err != nil || !strings.Contains(discovery, "return actions") {
			t.Errorf("%s discovery: %v", tc.kind, err)
		}
	}
	if _, _, err := lua.Actions("apps", "Deployment"); !errors.Is(err, lua.ErrNoActions) {
		t.Errorf("Deployment: want ErrNoActions, got %v", err)
	}
}

const optionLine = "local blockBypassOnFailedAnalysis = true"

// The generator switches the rule off by rewriting the one value in the options block; the script must
// carry the block in that shape, and switching it off must leave only the v3.2 logic.
func TestBlockBypassOption(t *testing.T) {
	discovery, _, err := lua.Actions("argoproj.io", "Rollout")
	if err != nil {
		t.Fatal(err)
	}
	block := "-- analysis-health:options\n" + optionLine + "\n-- analysis-health:end-options\n"
	if strings.Count(discovery, block) != 1 || strings.Count(discovery, "blockBypassOnFailedAnalysis = ") != 1 {
		t.Fatalf("discovery.lua must hold exactly this options block:\n%s", block)
	}
	off := strings.Replace(discovery, optionLine, "local blockBypassOnFailedAnalysis = false", 1)
	raw, err := lua.FS.ReadFile("argoproj.io/Rollout/actions/testdata/canary_step_analysis_failed_aborted_v1.8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		script string
		want   []engine.Action
	}{
		{"on", discovery, []engine.Action{
			{Name: "pause", Disabled: true},
			{Name: "promote-full", Disabled: true, DisplayName: "promote-full (blocked: step analysis run checkout-c9c66885-4-2 Failed)"},
			{Name: "skip-current-step", Disabled: true, DisplayName: "skip-current-step (blocked: step analysis run checkout-c9c66885-4-2 Failed)"},
		}},
		{"off", off, []engine.Action{{Name: "pause", Disabled: true}, {Name: "skip-current-step"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := engine.Engine{Profile: engine.V214}.Discover(obj, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Every blocking status field and both failed phases block, and only with the generation observed.
func TestBlockingRule(t *testing.T) {
	discovery, _, err := lua.Actions("argoproj.io", "Rollout")
	if err != nil {
		t.Fatal(err)
	}
	canary := func(field, phase string, generation, observed any) map[string]any {
		return map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "r", "generation": generation},
			"spec":     map[string]any{"strategy": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"setWeight": 10.0}, map[string]any{"pause": map[string]any{}}}}}},
			"status": map[string]any{"observedGeneration": observed, "currentStepIndex": 0.0, "currentPodHash": "b", "stableRS": "a",
				"canary": map[string]any{field: map[string]any{"name": "run", "status": phase}}},
		}
	}
	blueGreen := func(field, phase string) map[string]any {
		return map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "r", "generation": 2.0},
			"spec":     map[string]any{"strategy": map[string]any{"blueGreen": map[string]any{"activeService": "a"}}},
			"status": map[string]any{"observedGeneration": "2", "currentPodHash": "b", "stableRS": "a", "phase": "Paused",
				"blueGreen": map[string]any{field: map[string]any{"name": "run", "status": phase}}},
		}
	}
	for _, tc := range []struct {
		name    string
		obj     map[string]any
		blocked string // "" = not blocked
	}{
		{"step Failed", canary("currentStepAnalysisRunStatus", "Failed", 2.0, "2"), "step analysis run run Failed"},
		{"step Error", canary("currentStepAnalysisRunStatus", "Error", 2.0, "2"), "step analysis run run Error"},
		{"background Failed", canary("currentBackgroundAnalysisRunStatus", "Failed", 2.0, "2"), "background analysis run run Failed"},
		{"numeric observedGeneration", canary("currentStepAnalysisRunStatus", "Failed", 2.0, 2.0), "step analysis run run Failed"},
		{"pre-promotion Failed", blueGreen("prePromotionAnalysisRunStatus", "Failed"), "pre-promotion analysis run run Failed"},
		{"post-promotion Error", blueGreen("postPromotionAnalysisRunStatus", "Error"), "post-promotion analysis run run Error"},
		{"Inconclusive does not block", canary("currentStepAnalysisRunStatus", "Inconclusive", 2.0, "2"), ""},
		{"Running does not block", canary("currentStepAnalysisRunStatus", "Running", 2.0, "2"), ""},
		{"generation not observed", canary("currentStepAnalysisRunStatus", "Failed", 3.0, "2"), ""},
		{"pre-v0.10 hash", canary("currentStepAnalysisRunStatus", "Failed", 3.0, "6d4f9b7c"), ""},
		{"no generation", canary("currentStepAnalysisRunStatus", "Failed", nil, "2"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := engine.Engine{Profile: engine.V32}.Discover(tc.obj, discovery)
			if err != nil {
				t.Fatal(err)
			}
			var promote *engine.Action
			for i := range got {
				if got[i].Name == "promote-full" {
					promote = &got[i]
				}
			}
			switch {
			case tc.blocked == "" && promote != nil:
				t.Errorf("blocked: %+v", got)
			case tc.blocked != "" && (promote == nil || !promote.Disabled || promote.DisplayName != "promote-full (blocked: "+tc.blocked+")"):
				t.Errorf("want promote-full blocked by %q, got %+v", tc.blocked, got)
			}
		})
	}
}

// Discovery scripts never fail, whatever shape the object has: Argo CD runs every discovery script of a
// kind together, so one failing script hides the whole actions menu.
func TestDiscoverySurvivesMutatedObjects(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, s := range seeds(t) {
		// The worst-case objects are megabytes, and every action copies and re-encodes them: once each.
		n := 4
		if s.big {
			n = 1
		}
		for i := 0; i < n; i++ {
			data := make([]byte, 256)
			rng.Read(data)
			var obj map[string]any
			if err := yaml.Unmarshal(s.raw, &obj); err != nil {
				t.Fatal(err)
			}
			m := mutate.FromBytes(data)
			m.Strings = phases
			mutated := m.Object(obj)
			for _, k := range lua.ActionKinds() {
				discovery, defs, err := lua.Actions(k.Group, k.Kind)
				if err != nil {
					t.Fatal(err)
				}
				for _, profile := range engine.Profiles() {
					if _, err := (engine.Engine{Profile: profile, Timeout: generous}).Discover(mutated, discovery); err != nil {
						b, _ := yaml.Marshal(mutated)
						t.Fatalf("%s discovery failed: %v\nobject:\n%s", k.Kind, err, b)
					}
					// Actions may refuse an object, but only with an error, never a panic.
					for _, d := range defs {
						_, _ = engine.Engine{Profile: profile, Timeout: generous}.RunAction(mutated, d.Script, nil)
					}
				}
			}
		}
	}
}
