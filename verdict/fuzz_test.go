package verdict_test

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/mutate"
	"github.com/analysis-health/analysis-health/verdict"
)

// Retyped and missing fields anywhere in the Rollout and its runs (metadata included: the plugin reads
// labels and owner references itself) never make Judge panic or fail; the verdict is always one of the
// phases and the value JSON.
func TestMutatedObjects(t *testing.T) {
	phases := map[string]bool{verdict.Running: true, verdict.Successful: true, verdict.Failed: true, verdict.Inconclusive: true, verdict.Error: true}
	for _, name := range []string{"step-running", "step-successful", "step-failed", "step-inconclusive"} {
		base := fixture(t, name)
		r := rand.New(rand.NewSource(int64(len(name))))
		for i := 0; i < 60; i++ {
			m := mutate.FromRand(r)
			m.Strings = []string{"Successful", "Failed", "Running", "Healthy", "Degraded", "849565ffcd", "Rollout", "checkout", "Step"}
			objs := verdict.Objects{Rollout: m.Object(mutate.DeepCopy(base.Rollout).(map[string]any))}
			for _, ar := range base.AnalysisRuns {
				objs.AnalysisRuns = append(objs.AnalysisRuns, m.Object(mutate.DeepCopy(ar).(map[string]any)))
			}
			v, err := verdict.Judge(objs, verdict.Options{})
			if err != nil {
				t.Fatalf("%s #%d: %v", name, i, err)
			}
			if !phases[v.Phase] || !json.Valid([]byte(v.Value)) {
				t.Fatalf("%s #%d: %q %s", name, i, v.Phase, v.Value)
			}
		}
	}
}

// FuzzMutatedObjects: the Rollout and its runs of a recorded frame, mutated (package mutate, from the
// fuzzer's seed): Judge never panics or fails, its verdict is a phase and its value JSON, and it is never
// Successful where our Rollout health script does not say Healthy.
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
	phases := map[string]bool{verdict.Running: true, verdict.Successful: true, verdict.Failed: true, verdict.Inconclusive: true, verdict.Error: true}
	f.Fuzz(func(t *testing.T, seed int64, which uint8) {
		name := names[int(which)%len(names)]
		base := bases[name]
		m := mutate.FromRand(rand.New(rand.NewSource(seed)))
		m.Strings = []string{"Successful", "Failed", "Running", "Healthy", "Degraded", "849565ffcd", "Rollout", "checkout", "Step"}
		objs := verdict.Objects{Rollout: m.Object(mutate.DeepCopy(base.Rollout).(map[string]any))}
		for _, ar := range base.AnalysisRuns {
			objs.AnalysisRuns = append(objs.AnalysisRuns, m.Object(mutate.DeepCopy(ar).(map[string]any)))
		}
		v, err := verdict.Judge(objs, verdict.Options{})
		if err != nil {
			t.Fatalf("%s seed %d: %v", name, seed, err)
		}
		if !phases[v.Phase] || !json.Valid([]byte(v.Value)) {
			t.Fatalf("%s seed %d: %q %s", name, seed, v.Phase, v.Value)
		}
		if v.Phase != verdict.Successful {
			return
		}
		h, err := (engine.Engine{}).Health(objs.Rollout, script)
		if err != nil || h.Status != "Healthy" {
			t.Fatalf("%s seed %d: Successful where the Rollout's health is %q (%v)", name, seed, h.Status, err)
		}
	})
}
