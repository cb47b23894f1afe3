package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/analysis-health/analysis-health/lua"
)

// The script tree Generate renders is lua.FS. The renderers read it only through these functions, which
// read any tree in package lua's layout (<group>/<Kind>/health.lua, health_test.yaml, testdata/,
// actions/discovery.lua, actions/<name>/action.lua) the way package lua reads its own: the tests render
// every format around a small stub tree (testdata/stub) with them, and check that on lua.FS they return
// exactly what lua.Kinds, lua.ActionKinds, lua.Health and lua.Actions return.

// treeKinds lists every kind of src with a health script, sorted by key (lua.Kinds).
func treeKinds(src fs.FS) []lua.Kind {
	return kindsWith(src, "health.lua")
}

// treeActionKinds lists every kind of src with an actions/discovery.lua, sorted by key (lua.ActionKinds).
func treeActionKinds(src fs.FS) []lua.Kind {
	return kindsWith(src, path.Join("actions", "discovery.lua"))
}

func kindsWith(src fs.FS, file string) []lua.Kind {
	var kinds []lua.Kind
	groups, _ := fs.ReadDir(src, ".")
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		entries, _ := fs.ReadDir(src, g.Name())
		for _, e := range entries {
			if _, err := fs.Stat(src, path.Join(g.Name(), e.Name(), file)); err == nil {
				kinds = append(kinds, lua.Kind{Group: g.Name(), Kind: e.Name()})
			}
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Key() < kinds[j].Key() })
	return kinds
}

// treeHealth is the health script of k in src (lua.Health).
func treeHealth(src fs.FS, k lua.Kind) (string, error) {
	b, err := fs.ReadFile(src, path.Join(k.Group, k.Kind, "health.lua"))
	if err != nil {
		return "", fmt.Errorf("no bundled health script for %s/%s", k.Group, k.Kind)
	}
	return string(b), nil
}

// treeActions is the discovery script of k in src and its action definitions sorted by name (lua.Actions);
// a kind without a discovery.lua gives an error wrapping lua.ErrNoActions.
func treeActions(src fs.FS, k lua.Kind) (discovery string, defs []lua.ActionDef, err error) {
	dir := path.Join(k.Group, k.Kind, "actions")
	raw, err := fs.ReadFile(src, path.Join(dir, "discovery.lua"))
	if err != nil {
		return "", nil, fmt.Errorf("%s/%s: %w", k.Group, k.Kind, lua.ErrNoActions)
	}
	entries, err := fs.ReadDir(src, dir)
	if err != nil {
		return "", nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		script, err := fs.ReadFile(src, path.Join(dir, e.Name(), "action.lua"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // testdata/ and other folders without an action.lua
		}
		if err != nil {
			return "", nil, err
		}
		defs = append(defs, lua.ActionDef{Name: e.Name(), Script: string(script)})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return string(raw), defs, nil
}
