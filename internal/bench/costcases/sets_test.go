package costcases

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

func status(m map[string]any) *unstructured.Unstructured {
	return obj(map[string]any{"status": m})
}

func TestPath(t *testing.T) {
	running := map[string]any{"phase": "Progressing", "canary": map[string]any{"currentStepAnalysisRunStatus": map[string]any{"status": "Running"}}}
	for _, tc := range []struct {
		name string
		kind string
		obj  *unstructured.Unstructured
		h    engine.Health
		want string
	}{
		{"rollout without status is legacy", "Rollout", obj(map[string]any{}), engine.Health{Status: engine.Healthy}, Legacy},
		{"rollout with an empty phase is legacy", "Rollout", status(map[string]any{"phase": ""}), engine.Health{Status: engine.Degraded}, Legacy},
		{"legacy before failed", "Rollout", status(map[string]any{"canary": map[string]any{"currentStepAnalysisRunStatus": map[string]any{"status": "Failed"}}}), engine.Health{Status: engine.Degraded}, Legacy},
		{"degraded rollout", "Rollout", status(map[string]any{"phase": "Degraded"}), engine.Health{Status: engine.Degraded, Message: "RolloutAborted"}, Failed},
		{"inconclusive rollout, any case", "Rollout", status(map[string]any{"phase": "Paused"}), engine.Health{Status: engine.Suspended, Message: "analysis run INCONCLUSIVE"}, Failed},
		{"quiet rollout is steady whatever the verdict", "Rollout", status(map[string]any{"phase": "Progressing"}), engine.Health{Status: engine.Progressing}, Steady},
		{"rollout with analysis running", "Rollout", status(running), engine.Health{Status: engine.Healthy}, Inflight},
		{"healthy analysisrun", "AnalysisRun", status(map[string]any{"phase": "Successful"}), engine.Health{Status: engine.Healthy}, Steady},
		{"running analysisrun", "AnalysisRun", status(map[string]any{"phase": "Running"}), engine.Health{Status: engine.Progressing}, Inflight},
		{"analysisrun with no phase is not legacy", "AnalysisRun", obj(map[string]any{}), engine.Health{Status: engine.Progressing}, Inflight},
		{"degraded analysisrun", "AnalysisRun", status(map[string]any{"phase": "Failed"}), engine.Health{Status: engine.Degraded}, Failed},
		{"inconclusive experiment", "Experiment", status(map[string]any{"phase": "Inconclusive"}), engine.Health{Status: engine.Unknown, Message: "Experiment is Inconclusive"}, Failed},
		{"suspended experiment", "Experiment", status(map[string]any{"phase": "Pending"}), engine.Health{Status: engine.Suspended}, Inflight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Path(tc.kind, tc.obj, tc.h); got != tc.want {
				t.Errorf("Path = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsSteady(t *testing.T) {
	analysis := func(field, phase string) *unstructured.Unstructured {
		strategy := "canary"
		if field == "prePromotionAnalysisRunStatus" || field == "postPromotionAnalysisRunStatus" {
			strategy = "blueGreen"
		}
		return status(map[string]any{strategy: map[string]any{field: map[string]any{"status": phase}}})
	}
	pause := func(reason string) *unstructured.Unstructured {
		return status(map[string]any{"pauseConditions": []any{map[string]any{"reason": "CanaryPauseStep"}, map[string]any{"reason": reason}}})
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"no status", obj(map[string]any{}), true},
		{"step analysis successful", analysis("currentStepAnalysisRunStatus", "Successful"), true},
		{"step analysis running", analysis("currentStepAnalysisRunStatus", "Running"), false},
		{"background analysis pending", analysis("currentBackgroundAnalysisRunStatus", "Pending"), false},
		{"pre-promotion analysis failed", analysis("prePromotionAnalysisRunStatus", "Failed"), false},
		{"post-promotion analysis inconclusive", analysis("postPromotionAnalysisRunStatus", "Inconclusive"), false},
		{"post-promotion analysis successful", analysis("postPromotionAnalysisRunStatus", "Successful"), true},
		{"analysis status of the wrong type is ignored", status(map[string]any{"canary": map[string]any{"currentStepAnalysisRunStatus": map[string]any{"status": 3.0}}}), true},
		{"experiment in flight", status(map[string]any{"canary": map[string]any{"currentExperiment": "exp-1"}}), false},
		{"experiment finished", status(map[string]any{"canary": map[string]any{"currentExperiment": ""}}), true},
		{"paused on a step", pause("CanaryPauseStep"), true},
		{"paused on an inconclusive analysis", pause("InconclusiveAnalysisRun"), false},
		{"paused on an inconclusive experiment", pause("InconclusiveExperiment"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsSteady(tc.obj); got != tc.want {
				t.Errorf("IsSteady = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSteadyOf(t *testing.T) {
	a := status(map[string]any{"phase": "Healthy"})
	b := status(map[string]any{"canary": map[string]any{"currentExperiment": "exp-1"}})
	c := status(map[string]any{"phase": "Progressing"})
	if got := SteadyOf([]*unstructured.Unstructured{a, b, c}); !slices.Equal(got, []*unstructured.Unstructured{a, c}) {
		t.Errorf("SteadyOf = %v, want the first and the last", got)
	}
	if got := SteadyOf(nil); got != nil {
		t.Errorf("SteadyOf(nil) = %v", got)
	}
}

// TestSets checks the grouping on the bundled fixtures, whatever the scripts' verdicts are: every kept
// fixture in exactly one set, of its kind, the sets in kind and path order.
func TestSets(t *testing.T) {
	fixtures, err := ahlua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []engine.Profile{engine.V214, engine.V36} {
		t.Run(string(p), func(t *testing.T) {
			all, err := Sets(p, func(*unstructured.Unstructured) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, k := range ahlua.Kinds() {
				for _, path := range Paths {
					order = append(order, k.Kind+"/"+path)
				}
			}
			seen, last, n := map[*unstructured.Unstructured]bool{}, -1, 0
			for _, s := range all {
				i := slices.Index(order, s.Name())
				if i <= last {
					t.Errorf("set %s out of order or unknown", s.Name())
				}
				last = i
				if len(s.Objs) == 0 {
					t.Errorf("set %s is empty", s.Name())
				}
				for _, o := range s.Objs {
					if o.GetKind() != s.Kind {
						t.Errorf("set %s holds a %s", s.Name(), o.GetKind())
					}
					if seen[o] {
						t.Errorf("set %s: an object twice", s.Name())
					}
					seen[o] = true
				}
				n += len(s.Objs)
			}
			if n != len(fixtures) {
				t.Errorf("%d objects in the sets, want every fixture (%d)", n, len(fixtures))
			}

			none, err := Sets(p, func(*unstructured.Unstructured) bool { return false })
			if err != nil || len(none) != 0 {
				t.Errorf("keeping nothing: %v, %v", none, err)
			}

			// keep sees every fixture; what it drops is in no set.
			calls := 0
			legacyOnly, err := Sets(p, func(o *unstructured.Unstructured) bool {
				calls++
				phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
				return o.GetKind() == "Rollout" && phase == ""
			})
			if err != nil {
				t.Fatal(err)
			}
			if calls != len(fixtures) {
				t.Errorf("keep called %d times, want %d", calls, len(fixtures))
			}
			for _, s := range legacyOnly {
				if s.Name() != "Rollout/"+Legacy {
					t.Errorf("set %s from legacy Rollouts only", s.Name())
				}
			}
		})
	}
}
