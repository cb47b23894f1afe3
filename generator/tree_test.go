package generator

import (
	"errors"
	"reflect"
	"testing"

	"github.com/analysis-health/analysis-health/lua"
)

// On the embedded tree the generator's tree readers are package lua's functions: the seam the format
// goldens render the stub through changes nothing for Generate.
func TestTreeReadersMatchPackageLua(t *testing.T) {
	if got, want := treeKinds(lua.FS), lua.Kinds(); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("treeKinds %v, lua.Kinds %v", got, want)
	}
	if got, want := treeActionKinds(lua.FS), lua.ActionKinds(); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("treeActionKinds %v, lua.ActionKinds %v", got, want)
	}
	nope := lua.Kind{Group: "argoproj.io", Kind: "Nope"}
	for _, k := range append(lua.Kinds(), nope) {
		got, gerr := treeHealth(lua.FS, k)
		want, werr := lua.Health(k.Group, k.Kind)
		if got != want || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Errorf("%s: treeHealth %.40q, %v; lua.Health %.40q, %v", k.Key(), got, gerr, want, werr)
		}
		discovery, defs, gerr := treeActions(lua.FS, k)
		wantDiscovery, wantDefs, werr := lua.Actions(k.Group, k.Kind)
		if discovery != wantDiscovery || !reflect.DeepEqual(defs, wantDefs) || (gerr == nil) != (werr == nil) ||
			gerr != nil && (gerr.Error() != werr.Error() || !errors.Is(gerr, lua.ErrNoActions)) {
			t.Errorf("%s: treeActions %d definitions, %v; lua.Actions %d, %v", k.Key(), len(defs), gerr, len(wantDefs), werr)
		}
	}
	// The stub tree has its own kinds: all three health scripts, actions for two of them.
	if got := treeKinds(stubTree); len(got) != 3 {
		t.Errorf("stub kinds %v", got)
	}
	if got := treeActionKinds(stubTree); len(got) != 2 {
		t.Errorf("stub action kinds %v", got)
	}
}
