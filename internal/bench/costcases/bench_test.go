package costcases

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// fakeVM records the argocd-cm data each evaluator is made from.
func fakeVM(builtins fstest.MapFS, loaded *[]map[string]string, fail error) VM {
	return VM{
		ArgoCDVersion: "v2.14",
		Profile:       engine.V214,
		Builtins:      builtins,
		Evaluator: func(data map[string]string) (Eval, error) {
			*loaded = append(*loaded, data)
			if fail != nil && data != nil {
				return nil, fail
			}
			return func(*unstructured.Unstructured) error { return nil }, nil
		},
	}
}

func builtinFS() fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, k := range ahlua.Kinds() {
		fsys[k.Key()+"/health.lua"] = &fstest.MapFile{Data: []byte("-- built-in " + k.Kind)}
	}
	return fsys
}

func TestVariants(t *testing.T) {
	var loaded []map[string]string
	variants, err := Variants(fakeVM(builtinFS(), &loaded, nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range variants {
		names = append(names, v.Name)
	}
	if strings.Join(names, ",") != "ours,builtin,floor" {
		t.Fatalf("variants %v, want ours, builtin and floor, in that order", names)
	}
	ours, floorData := map[string]string{}, map[string]string{}
	for _, k := range ahlua.Kinds() {
		s, err := generator.Script(k, generator.Options{ArgoCDVersion: "v2.14"})
		if err != nil {
			t.Fatal(err)
		}
		ours[generator.HealthKey(k)] = s
		floorData[generator.HealthKey(k)] = floorScript
		if variants[0].Scripts[k.Kind] != s || variants[1].Scripts[k.Kind] != "-- built-in "+k.Kind || variants[2].Scripts[k.Kind] != floorScript {
			t.Errorf("%s: scripts %q", k.Kind, []string{variants[0].Scripts[k.Kind], variants[1].Scripts[k.Kind], variants[2].Scripts[k.Kind]})
		}
	}
	if len(loaded) != 3 || !maps.Equal(loaded[0], ours) || !maps.Equal(loaded[1], floorData) || loaded[2] != nil {
		t.Errorf("argocd-cm data loaded: %v, want ours, floor, then none (the built-in scripts)", loaded)
	}
	for i, want := range []bool{false, true, false} {
		if variants[i].OpenLibs != want || variants[i].Eval == nil {
			t.Errorf("%s: OpenLibs %v (want %v), Eval set %v", variants[i].Name, variants[i].OpenLibs, want, variants[i].Eval != nil)
		}
	}
}

func TestVariantsErrors(t *testing.T) {
	missing := builtinFS()
	delete(missing, ahlua.Kinds()[0].Key()+"/health.lua")
	boom := errors.New("settings: invalid key")
	for _, tc := range []struct {
		name     string
		builtins fstest.MapFS
		fail     error
		want     string
	}{
		{"a built-in script missing", missing, nil, ahlua.Kinds()[0].Key() + "/health.lua"},
		{"argocd-cm rejected", builtinFS(), boom, "ours: settings: invalid key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var loaded []map[string]string
			_, err := Variants(fakeVM(tc.builtins, &loaded, tc.fail))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// Every variant evaluates every op once, cycling over the objects in order, in turns of CostRound whose
// first variant moves on each round; an error names the variant.
func TestTakeTurns(t *testing.T) {
	objs := []*unstructured.Unstructured{obj(map[string]any{"n": 0}), obj(map[string]any{"n": 1}), obj(map[string]any{"n": 2})}
	var order []string
	seen := map[string][]int{}
	variant := func(name string) Variant {
		return Variant{Name: name, Eval: func(o *unstructured.Unstructured) error {
			if len(order) == 0 || order[len(order)-1] != name {
				order = append(order, name)
			}
			seen[name] = append(seen[name], o.Object["n"].(int))
			return nil
		}}
	}
	vs := []Variant{variant("a"), variant("b"), variant("c")}
	n := 2*CostRound + 7
	if _, _, err := takeTurns(n, CostRound, vs, objs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		got := seen[v.Name]
		if len(got) != n {
			t.Fatalf("%s evaluated %d times, want %d", v.Name, len(got), n)
		}
		for j, x := range got {
			if x != j%len(objs) {
				t.Fatalf("%s: evaluation %d was of object %d, want %d", v.Name, j, x, j%len(objs))
			}
		}
	}
	if want := []string{"a", "b", "c", "b", "c", "a", "c", "a", "b"}; !slices.Equal(order, want) {
		t.Errorf("turns %v, want %v", order, want)
	}
	failing := Variant{Name: "broken", Eval: func(*unstructured.Unstructured) error { return errors.New("boom") }}
	if _, _, err := takeTurns(1, CostRound, []Variant{failing}, objs); err == nil || !strings.Contains(err.Error(), "broken: boom") {
		t.Errorf("error %v, want it to name the variant", err)
	}
}
