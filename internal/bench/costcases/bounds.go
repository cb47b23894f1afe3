package costcases

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/analysis-health/analysis-health/generator"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// The bounds are what makes a cost goal measurably out of reach rather than argued to be: for a kind and
// path, bounds/<Kind>-<path>.lua is the least code we can write that tells that path's objects apart and
// gives them the answer our script gives (TestBoundsAnswerAsOurs holds each to it, on its set and on
// mutations), and returns nothing for any other object, where a whole script would go on to further rules.
// No single script can be cheaper on that path than the code that path needs, so each set's bound is a
// lower bound on any script keeping our rules, and the mix of the bounds (internal/bench/benchdoc) a lower bound
// on the mix. A set without a bound (legacy: controllers before v1.0, which the mix does not weigh) counts at
// the floor, which understates it.
//
//go:embed bounds/*.lua
var boundFS embed.FS

// Bounds are the bound scripts by set name (<Kind>/<path>).
func Bounds() (map[string]string, error) {
	files, err := fs.Glob(boundFS, "bounds/*.lua")
	if err != nil {
		return nil, err
	}
	kinds := map[string]bool{}
	for _, k := range ahlua.Kinds() {
		kinds[k.Kind] = true
	}
	out := map[string]string{}
	for _, f := range files {
		kind, p, ok := strings.Cut(strings.TrimSuffix(path.Base(f), ".lua"), "-")
		if !ok || !kinds[kind] || !slices.Contains(Paths, p) {
			return nil, fmt.Errorf("%s: want bounds/<Kind>-<path>.lua with a kind of %v and a path of %v", f, slices.Sorted(maps.Keys(kinds)), Paths)
		}
		raw, err := boundFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out[kind+"/"+p] = string(raw)
	}
	return out, nil
}

// boundVariants are the "bound" variant of each set that has a bound script, by set name: the script as
// an argocd-cm override of its kind, evaluated as ours is.
func boundVariants(vm VM) (map[string]Variant, error) {
	scripts, err := Bounds()
	if err != nil {
		return nil, err
	}
	out := map[string]Variant{}
	for name, script := range scripts {
		kind, _, _ := strings.Cut(name, "/")
		var key string
		for _, k := range ahlua.Kinds() {
			if k.Kind == kind {
				key = generator.HealthKey(k)
			}
		}
		eval, err := vm.Evaluator(map[string]string{key: script})
		if err != nil {
			return nil, fmt.Errorf("bound %s: %w", name, err)
		}
		out[name] = Variant{Name: "bound", Eval: eval, Scripts: map[string]string{kind: script}}
	}
	return out, nil
}
