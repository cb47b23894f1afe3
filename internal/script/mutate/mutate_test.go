package mutate_test

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/mutate"
)

func object() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AnalysisRun",
		"metadata":   map[string]any{"name": "run", "namespace": "shop"},
		"spec":       map[string]any{"metrics": []any{map[string]any{"name": "rate"}, map[string]any{"name": "errors"}}},
		"status": map[string]any{
			"phase":   "Running",
			"count":   float64(2),
			"results": []any{map[string]any{"name": "rate", "phase": "Successful"}},
		},
	}
}

func TestSameChoicesSameMutation(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		a := mutate.FromRand(rand.New(rand.NewSource(seed))).Object(object(), "apiVersion", "kind", "metadata")
		b := mutate.FromRand(rand.New(rand.NewSource(seed))).Object(object(), "apiVersion", "kind", "metadata")
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two runs differ:\n%v\n%v", seed, a, b)
		}
	}
}

func TestPinnedKeysSurvive(t *testing.T) {
	changed := 0
	for seed := int64(0); seed < 200; seed++ {
		got := mutate.FromRand(rand.New(rand.NewSource(seed))).Object(object(), "apiVersion", "kind", "metadata")
		want := object()
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Fatalf("seed %d: pinned %s changed to %v", seed, k, got[k])
			}
		}
		if !reflect.DeepEqual(got, want) {
			changed++
		}
	}
	if changed < 150 {
		t.Errorf("only %d of 200 mutations changed the object", changed)
	}
}

// Every kind of mutation the package promises shows up within a few hundred draws.
func TestMutationKinds(t *testing.T) {
	seen := map[string]bool{}
	for seed := int64(0); seed < 500; seed++ {
		m := mutate.FromRand(rand.New(rand.NewSource(seed)))
		m.Strings = []string{"Inconclusive"}
		got := m.Object(object(), "apiVersion", "kind", "metadata")
		status, isMap := got["status"].(map[string]any)
		spec, _ := got["spec"].(map[string]any)
		switch {
		case got["status"] == nil:
			seen["status dropped or nulled"] = true
		case !isMap:
			seen["status retyped"] = true
		}
		if status != nil {
			if _, ok := status["phase"]; !ok {
				seen["phase dropped"] = true
			}
			if _, ok := status["phase"].(float64); ok {
				seen["string swapped for number"] = true
			}
			if status["phase"] == "Inconclusive" {
				seen["pool string"] = true
			}
			if _, ok := status["count"].(string); ok {
				seen["number swapped for string"] = true
			}
		}
		if spec != nil {
			if l, ok := spec["metrics"].([]any); ok && len(l) == 0 {
				seen["empty list"] = true
			}
			if l, ok := spec["metrics"].([]any); ok && len(l) >= 50 {
				seen["giant list"] = true
			}
		}
	}
	for _, k := range []string{"status dropped or nulled", "status retyped", "phase dropped", "string swapped for number",
		"pool string", "number swapped for string", "empty list", "giant list"} {
		if !seen[k] {
			t.Errorf("no mutation of kind %q in 500 draws", k)
		}
	}
}

func TestFromBytesPastTheEndKeeps(t *testing.T) {
	if got := mutate.FromBytes(nil).Object(object()); !reflect.DeepEqual(got, object()) {
		t.Errorf("an empty stream changed the object: %v", got)
	}
}

func TestMinimize(t *testing.T) {
	obj := object()
	obj["status"].(map[string]any)["results"] = make([]any, 40)
	for i := range 40 {
		obj["status"].(map[string]any)["results"].([]any)[i] = map[string]any{"name": "r", "bad": i == 37}
	}
	// "fails" when some result has bad = true.
	keep := func(o map[string]any) bool {
		st, _ := o["status"].(map[string]any)
		rs, _ := st["results"].([]any)
		for _, r := range rs {
			if m, _ := r.(map[string]any); m["bad"] == true {
				return true
			}
		}
		return false
	}
	got := mutate.Minimize(obj, []string{"apiVersion", "kind", "metadata"}, keep, 500)
	want := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun",
		"metadata": map[string]any{"name": "run", "namespace": "shop"},
		"status":   map[string]any{"results": []any{map[string]any{"bad": true}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("minimized to %v, want %v", got, want)
	}
	if !keep(obj) || len(obj["status"].(map[string]any)["results"].([]any)) != 40 {
		t.Error("Minimize modified its input")
	}
	// A budget of zero returns the object unchanged.
	if got := mutate.Minimize(obj, nil, keep, 0); !reflect.DeepEqual(got, obj) {
		t.Error("budget 0 shrank the object")
	}
}
