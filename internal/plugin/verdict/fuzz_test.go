package verdict_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	"github.com/analysis-health/analysis-health/lua"
)

// judgeMutated judges the Rollout and runs of base, mutated by a mutator drawn from r, and fails t unless
// Judge succeeds with one of the phases, a JSON string value and a JSON structured verdict.
func judgeMutated(t *testing.T, what string, base verdict.Objects, r *rand.Rand) (verdict.Objects, verdict.Verdict) {
	t.Helper()
	m := mutate.FromRand(r)
	m.Strings = []string{"Successful", "Failed", "Running", "Healthy", "Degraded", "849565ffcd", "Rollout", "checkout", "Step"}
	objs := verdict.Objects{Rollout: m.Object(mutate.DeepCopy(base.Rollout).(map[string]any))}
	for _, ar := range base.AnalysisRuns {
		objs.AnalysisRuns = append(objs.AnalysisRuns, m.Object(mutate.DeepCopy(ar).(map[string]any)))
	}
	v, err := verdict.Judge(objs, verdict.Options{})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	switch v.Phase {
	case verdict.Running, verdict.Successful, verdict.Failed, verdict.Inconclusive, verdict.Error:
	default:
		t.Fatalf("%s: phase %q", what, v.Phase)
	}
	var words string
	if json.Unmarshal([]byte(v.Value), &words) != nil || !json.Valid([]byte(v.Structured)) {
		t.Fatalf("%s: %q %s %s", what, v.Phase, v.Value, v.Structured)
	}
	return objs, v
}

// Retyped and missing fields anywhere in the Rollout and its runs (metadata included: the plugin reads
// labels and owner references itself) never make Judge panic or fail; the verdict is always one of the
// phases, the value a JSON string and the structured verdict JSON.
func TestMutatedObjects(t *testing.T) {
	for _, name := range []string{"step-running", "step-successful", "step-failed", "step-inconclusive"} {
		base := fixture(t, name)
		r := rand.New(rand.NewSource(int64(len(name))))
		for i := 0; i < 60; i++ {
			judgeMutated(t, fmt.Sprintf("%s #%d", name, i), base, r)
		}
	}
}

// FuzzMutatedObjects: the Rollout and its runs of a recorded frame, mutated (package mutate, from the
// fuzzer's seed): Judge never panics or fails, its verdict is a phase, its value a JSON string and its
// structured verdict JSON, and it is never Successful where our Rollout health script does not say Healthy.
func FuzzMutatedObjects(f *testing.F) {
	names := []string{"step-running", "step-successful", "step-failed", "step-inconclusive"}
	for i := range names {
		f.Add(int64(i), uint8(i))
	}
	bases := map[string]verdict.Objects{}
	for _, n := range names {
		bases[n] = fixture(f, n)
	}
	script, err := lua.Health("argoproj.io", "Rollout")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed int64, which uint8) {
		name := names[int(which)%len(names)]
		base := bases[name]
		objs, v := judgeMutated(t, fmt.Sprintf("%s seed %d", name, seed), base, rand.New(rand.NewSource(seed)))
		if v.Phase != verdict.Successful {
			return
		}
		h, err := (engine.Engine{}).Health(objs.Rollout, script)
		if err != nil || h.Status != "Healthy" {
			t.Fatalf("%s seed %d: Successful where the Rollout's health is %q (%v)", name, seed, h.Status, err)
		}
	})
}
