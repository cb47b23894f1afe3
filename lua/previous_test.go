package lua_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/mutate"
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
				var obj map[string]any
				if err := yaml.Unmarshal(f.Raw, &obj); err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				objs = append(objs, obj)
			}
			if len(objs) == 0 {
				t.Fatalf("no fixtures of kind %s", kind)
			}
			// Values the scripts compare against, and the fixtures' own (metric and run names, messages),
			// so mutations swap one object's names into another's fields and reach the name lookups.
			strs := append(append([]string{"", "Pending"}, phases...), mutate.Strings(objs...)...)
			rng := rand.New(rand.NewSource(14))
			compared := 0
			for i, obj := range objs {
				compareWithPrevious(t, kind, previous, current, obj, fmt.Sprintf("fixture %d", i))
				compared++
				for n := 0; n < previousMutations; n++ {
					m := mutate.FromBytes(sparse(rng, n))
					m.Strings = strs
					mutated := m.Object(mutate.DeepCopy(obj).(map[string]any), "apiVersion", "kind", "metadata")
					compareWithPrevious(t, kind, previous, current, mutated, fmt.Sprintf("fixture %d, mutation %d", i, n))
					compared++
				}
			}
			t.Logf("%s: %d objects compared under %d profiles", kind, compared, len(engine.Profiles()))
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

func compareWithPrevious(t *testing.T, kind, previous, current string, obj map[string]any, what string) {
	t.Helper()
	for _, p := range engine.Profiles() {
		e := engine.Engine{Profile: p, Timeout: generous}
		want, wantErr := e.Health(obj, previous)
		got, gotErr := e.Health(obj, current)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			b, _ := yaml.Marshal(obj)
			t.Fatalf("%s %s under %s: got %+v (error %v), the previous script gives %+v (error %v)\nobject:\n%s",
				kind, what, p, got, gotErr, want, wantErr, b)
		}
	}
}
