package generator

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

var rolloutKind = lua.Kind{Group: "argoproj.io", Kind: "Rollout"}

// --human-gate healthy rewrites the Rollout script's one option line and leaves the other kinds' scripts
// the embedded files.
func TestHumanGateChangesOnlyTheOptionLine(t *testing.T) {
	for _, k := range lua.Kinds() {
		orig, _ := lua.Health(k.Group, k.Kind)
		got, err := Script(k, Options{HumanGate: HumanGateHealthy})
		if err != nil {
			t.Fatal(err)
		}
		if k != rolloutKind {
			if got != orig {
				t.Errorf("%s: --human-gate changed a script without the option", k.Key())
			}
			continue
		}
		if want := strings.Replace(orig, `local humanGate = "Suspended"`, `local humanGate = "Healthy"`, 1); got != want || got == orig {
			t.Errorf("%s: --human-gate healthy did not change exactly the humanGate line", k.Key())
		}
	}
	if err := (Options{HumanGate: "Progressing"}).Validate(); err == nil || !strings.Contains(err.Error(), "human gate status") {
		t.Errorf("HumanGate Progressing: %v", err)
	}
}

// gateFixture reads a Rollout fixture of the tree, optionally changed by edit (applied to its JSON form).
func gateFixture(t *testing.T, name string, edit func(ro map[string]any)) map[string]any {
	t.Helper()
	raw, err := lua.FS.ReadFile(path.Join("argoproj.io/Rollout/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ro map[string]any
	if err := yaml.Unmarshal(raw, &ro); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(ro)
		// back through JSON, as Argo CD hands the script an unstructured object
		raw, _ := json.Marshal(ro)
		ro = nil
		if err := json.Unmarshal(raw, &ro); err != nil {
			t.Fatal(err)
		}
	}
	return ro
}

func sub(m any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m.(map[string]any)[k]
	}
	return m.(map[string]any)
}

// What the option turns Healthy, and what it leaves as the default script says, in every form: only a
// pause no controller ends, with an analysis passed behind it, nothing in flight, failed or inconclusive.
func TestHumanGateCases(t *testing.T) {
	const bg = "bluegreen_prepromotion_successful_awaiting_promotion.yaml"
	const bgGate = "waiting for a person; analysis passed (pre-promotion analysis run billing-api-6866f7647c-11-pre); paused before promotion (autoPromotionEnabled: false): BlueGreenPause"
	// canary_pause_step.yaml waits at steps[1], pause: {}, after a setWeight and no analysis.
	const canary = "canary_pause_step.yaml"
	withAnalysisFirst := func(ro map[string]any) {
		c := sub(ro, "spec", "strategy", "canary")
		c["steps"] = append([]any{map[string]any{"analysis": map[string]any{"templates": []any{map[string]any{"templateName": "success-rate"}}}}}, c["steps"].([]any)...)
		sub(ro, "status")["currentStepIndex"] = 2
	}
	cases := []struct {
		name, fixture string
		edit          func(map[string]any)
		want          engine.Health // with the option; zero: as the default script
	}{
		// recorded from the controllers by the live suite (TestLiveHumanGate)
		{"recorded canary at pause: {} after its step analysis passed", "canary_step_analysis_passed_indefinite_pause.yaml", nil, engine.Health{Status: engine.Healthy,
			Message: "waiting for a person; analysis passed (steps[1] analysis); paused at steps[3], a pause without duration: CanaryPauseStep"}},
		{"recorded blue-green after its pre-promotion analysis passed, autoPromotionEnabled false", "bluegreen_prepromotion_passed_autopromotion_disabled.yaml", nil,
			engine.Health{Status: engine.Healthy, Message: "waiting for a person; analysis passed (pre-promotion analysis run checkout-d75d5bf65-2-pre); paused before promotion (autoPromotionEnabled: false): BlueGreenPause"}},
		{"blue-green, pre-promotion passed, autoPromotionEnabled false", bg, nil, engine.Health{Status: engine.Healthy, Message: bgGate}},
		{"blue-green with auto-promotion: the controller ends the pause", bg, func(ro map[string]any) {
			sub(ro, "spec", "strategy", "blueGreen")["autoPromotionEnabled"] = true
			sub(ro, "spec", "strategy", "blueGreen")["autoPromotionSeconds"] = 600
		}, engine.Health{}},
		{"blue-green without pre-promotion analysis: nothing passed", bg, func(ro map[string]any) {
			delete(sub(ro, "status", "blueGreen"), "prePromotionAnalysisRunStatus")
		}, engine.Health{}},
		{"blue-green also paused by the user", bg, func(ro map[string]any) { sub(ro, "spec")["paused"] = true }, engine.Health{}},
		{"blue-green with a second pause condition", bg, func(ro map[string]any) {
			st := sub(ro, "status")
			st["pauseConditions"] = append(st["pauseConditions"].([]any), map[string]any{"reason": "CanaryPauseStep"})
		}, engine.Health{}},
		{"canary at pause: {} with no analysis before it", canary, nil, engine.Health{}},
		{"canary at pause: {} after a step analysis", canary, withAnalysisFirst, engine.Health{Status: engine.Healthy,
			Message: "waiting for a person; analysis passed (steps[0] analysis); paused at steps[2], a pause without duration: CanaryPauseStep"}},
		{"canary at a pause with duration after a step analysis", canary, func(ro map[string]any) {
			withAnalysisFirst(ro)
			sub(ro, "spec", "strategy", "canary")["steps"].([]any)[2].(map[string]any)["pause"] = map[string]any{"duration": "1h"}
		}, engine.Health{}},
		{"canary at pause: {} with the step run of the next analysis in flight", canary, func(ro map[string]any) {
			withAnalysisFirst(ro)
			sub(ro, "status", "canary")["currentStepAnalysisRunStatus"] = map[string]any{"name": "r", "status": "Running"}
		}, engine.Health{}},
		{"canary at pause: {} with a background run passed", canary, func(ro map[string]any) {
			sub(ro, "status", "canary")["currentBackgroundAnalysisRunStatus"] = map[string]any{"name": "bg-1", "status": "Successful"}
		}, engine.Health{Status: engine.Healthy,
			Message: "waiting for a person; analysis passed (background analysis run bg-1); paused at steps[1], a pause without duration: CanaryPauseStep"}},
		{"canary index out of the steps", canary, func(ro map[string]any) {
			withAnalysisFirst(ro)
			sub(ro, "status")["currentStepIndex"] = 1e9
		}, engine.Health{}},
	}
	def, _ := lua.Health(rolloutKind.Group, rolloutKind.Kind)
	for _, tc := range cases {
		obj := gateFixture(t, tc.fixture, tc.edit)
		want, err := engine.Engine{}.Health(obj, def)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want != (engine.Health{}) {
			if want.Status != engine.Suspended {
				t.Fatalf("%s: the default script says %+v; the case is not a pause", tc.name, want)
			}
			want = tc.want
		}
		for _, version := range []string{"", "v2.14", "v3.6"} {
			script, err := Script(rolloutKind, Options{HumanGate: HumanGateHealthy, ArgoCDVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			got, err := engine.Engine{Profile: engine.V214}.Health(obj, script)
			if err != nil || got != want {
				t.Errorf("%s (form %q): %+v, %v; want %+v", tc.name, version, got, err, want)
			}
		}
	}
}

// The lua format's derived Rollout suite marks the cases the option changed, and refuses a script that
// changes anything else.
func TestHumanGateLuaTree(t *testing.T) {
	files, err := Generate(Lua, Options{HumanGate: HumanGateHealthy})
	if err != nil {
		t.Fatal(err)
	}
	var suite string
	for _, f := range files {
		if f.Path == "argoproj.io/Rollout/health_test.yaml" {
			suite = string(f.Data)
		}
	}
	if n := strings.Count(suite, "# changed by --human-gate healthy; bundled expectation: Suspended"); n == 0 {
		t.Errorf("no case of the derived Rollout suite is marked changed by --human-gate healthy:\n%s", suite)
	}
	r, err := Options{HumanGate: HumanGateHealthy}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	good := "tests:\n- inputPath: testdata/bluegreen_prepromotion_successful_awaiting_promotion.yaml\n  healthStatus: {status: Suspended, message: BlueGreenPause}\n"
	rogue := `return {status = "Healthy", message = "rogue"}`
	if _, err := deriveSuite(rolloutKind, rendering{resolved: r}, []byte(good), rogue); err == nil || !strings.Contains(err.Error(), "--human-gate healthy changed") {
		t.Errorf("a Healthy without the gate's message: error %v", err)
	}
}
