package lua_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	"github.com/analysis-health/analysis-health/lua"
)

// previousDir holds, as <Kind>.lua, the last released version of a health script that is being rewritten
// for cost alone: the rewrite must answer exactly as it did. A kind is checked by dropping its previous
// script here; the folder is outside the embedded tree, so neither the generator nor the CLI ever ships it.
const previousDir = "testdata/previous"

// previousMutations is how many pseudo-random mutations of each fixture are compared, beside the fixture.
const previousMutations = 100

// TestSameAsPrevious evaluates the bundled script and its previous version on every fixture of the kind
// and on mutations of each, under every profile, and requires the same status and message, or the same
// error.
func TestSameAsPrevious(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(previousDir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no previous scripts in %s", previousDir)
	}
	fixtures, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		kind := strings.TrimSuffix(filepath.Base(file), ".lua")
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			previous := string(raw)
			current, err := lua.Health("argoproj.io", kind)
			if err != nil {
				t.Fatal(err)
			}
			var objs []map[string]any
			for _, f := range fixtures {
				if f.Kind.Kind != kind {
					continue
				}
				obj, err := f.Object()
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, obj)
			}
			if len(objs) == 0 {
				t.Fatalf("no fixtures of kind %s", kind)
			}
			// Values the scripts compare against, so mutations reach the branches that depend on them.
			strs := append([]string{"", "Pending"}, phases...)
			rng := rand.New(rand.NewSource(14))
			compared := 0
			for i, obj := range objs {
				compareWithPrevious(t, kind, previous, current, obj, fmt.Sprintf("fixture %d", i), engine.Profiles()...)
				compared++
				for n := 0; n < previousMutations; n++ {
					m := mutate.FromBytes(sparse(rng, n))
					m.Strings = strs
					mutated := m.Object(mutate.DeepCopy(obj).(map[string]any), "apiVersion", "kind", "metadata")
					compareWithPrevious(t, kind, previous, current, mutated, fmt.Sprintf("fixture %d, mutation %d", i, n), engine.Profiles()...)
					compared++
				}
			}
			// Random mutations rarely change exactly the one field a rule turns on (a dry-run metric's phase,
			// a limit's type), so each field of every fixture's status and spec is also replaced, alone, by
			// each value of another type and, where a string was, by each string the scripts compare with,
			// under one profile (the random mutations cover the
			// profiles' differences: deletion and result handling).
			for i, obj := range objs {
				for n, edited := range substitutions(obj, typed, anys(strs)) {
					compareWithPrevious(t, kind, previous, current, edited, fmt.Sprintf("fixture %d, substitution %d", i, n), engine.V214)
					compared++
				}
			}
			t.Logf("%s: %d objects compared", kind, compared)
		})
	}
}

// sparse is the choice stream of one mutation: every choice random for a third of the mutations (most
// objects end up far from any fixture), one in four or one in sixteen for the others, which keep most of
// the object intact and reach the rules that need a mostly well-formed status.
func sparse(rng *rand.Rand, n int) []byte {
	keep := []int{1, 4, 16}[n%3]
	data := make([]byte, 4096)
	for i := range data {
		if rng.Intn(keep) == 0 {
			data[i] = byte(rng.Intn(256))
		}
	}
	return data
}

// wordsAdded are the kinds whose messages gained words since their previous script, each with what takes
// away what those words read: on every object the verdict (status, deletion message, error) must be the
// previous script's, and on the object without what the new words read, the message too. AnalysisRun:
// the why of a verdict (issue 59) reads the metrics' measurements, which the previous script never read.
var wordsAdded = map[string]func(map[string]any) map[string]any{"AnalysisRun": withoutMeasurements}

// withoutMeasurements is a copy of an AnalysisRun without status.metricResults[].measurements.
func withoutMeasurements(obj map[string]any) map[string]any {
	c := mutate.DeepCopy(obj).(map[string]any)
	st, _ := c["status"].(map[string]any)
	results, _ := st["metricResults"].([]any)
	for _, r := range results {
		if m, ok := r.(map[string]any); ok {
			delete(m, "measurements")
		}
	}
	return c
}

func compareWithPrevious(t *testing.T, kind, previous, current string, obj map[string]any, what string, profiles ...engine.Profile) {
	t.Helper()
	for _, p := range profiles {
		e := engine.Engine{Profile: p, Timeout: generous}
		want, wantErr := e.Health(obj, previous)
		got, gotErr := e.Health(obj, current)
		if strip := wordsAdded[kind]; strip != nil && fmt.Sprint(gotErr) == fmt.Sprint(wantErr) &&
			got.Status == want.Status && got.DeletionMessage == want.DeletionMessage {
			got, gotErr = e.Health(strip(obj), current)
		}
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			b, _ := yaml.Marshal(obj)
			t.Fatalf("%s %s under %s: got %+v (error %v), the previous script gives %+v (error %v)\nobject:\n%s",
				kind, what, p, got, gotErr, want, wantErr, b)
		}
	}
}

// typed are the values of other types that replace every field.
var typed = []any{nil, float64(-1), float64(3), "7", true, map[string]any{}}

func anys(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

// substitutions is a copy of obj for every field of its status and spec and every value (typed, and strs
// where the field holds a string): the field set to the value, or, for the nil value, deleted from its map. Most fields of the objects are below a few that
// neither Argo CD's scripts nor ours read, and are left out: pod templates (a Rollout's spec.template, an
// Experiment's spec.templates) and the AnalysisRun's measurements (status.metricResults[].measurements);
// those are still replaced whole.
func substitutions(obj map[string]any, typed, strs []any) []map[string]any {
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if len(path) > 0 {
			paths = append(paths, path)
			if k := path[len(path)-1]; k == "measurements" || (k == "template" || k == "templates") && len(path) == 2 {
				return
			}
		}
		switch c := v.(type) {
		case map[string]any:
			for k, item := range c {
				if len(path) == 0 && k != "status" && k != "spec" {
					continue
				}
				walk(item, append(append([]any{}, path...), k))
			}
		case []any:
			for i, item := range c {
				walk(item, append(append([]any{}, path...), i))
			}
		}
	}
	walk(obj, nil)
	// Map iteration order is random; the comparisons must be replayable.
	sort.Slice(paths, func(i, j int) bool { return fmt.Sprint(paths[i]) < fmt.Sprint(paths[j]) })
	var out []map[string]any
	for _, path := range paths {
		values := typed
		if _, ok := at(obj, path).(string); ok {
			values = append(append([]any{}, typed...), strs...)
		}
		for _, x := range values {
			root := mutate.DeepCopy(obj).(map[string]any)
			var parent any = root
			for _, k := range path[:len(path)-1] {
				switch c := parent.(type) {
				case map[string]any:
					parent = c[k.(string)]
				case []any:
					parent = c[k.(int)]
				}
			}
			switch c := parent.(type) {
			case map[string]any:
				if x == nil {
					delete(c, path[len(path)-1].(string))
				} else {
					c[path[len(path)-1].(string)] = mutate.DeepCopy(x)
				}
			case []any:
				c[path[len(path)-1].(int)] = mutate.DeepCopy(x)
			}
			out = append(out, root)
		}
	}
	return out
}

// at is the value at path in obj.
func at(obj map[string]any, path []any) any {
	var v any = obj
	for _, k := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[k.(string)]
		case []any:
			v = c[k.(int)]
		}
	}
	return v
}
