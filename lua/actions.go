package lua

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// ActionDef is one bundled action: the folder name under actions/ (the action's name in Argo CD) and its
// action.lua, i.e. one entry of the definitions list of resource.customizations.actions.<group>_<Kind>.
type ActionDef struct {
	Name   string
	Script string
}

// ErrNoActions is wrapped by Actions for a kind without bundled actions.
var ErrNoActions = errors.New("no bundled actions")

// ActionKinds lists every kind with a bundled actions/discovery.lua, sorted by key.
func ActionKinds() []Kind {
	var kinds []Kind
	groups, _ := fs.ReadDir(FS, ".")
	for _, g := range groups {
		entries, _ := fs.ReadDir(FS, g.Name())
		for _, e := range entries {
			if _, err := fs.Stat(FS, path.Join(g.Name(), e.Name(), "actions", "discovery.lua")); err == nil {
				kinds = append(kinds, Kind{Group: g.Name(), Kind: e.Name()})
			}
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Key() < kinds[j].Key() })
	return kinds
}

// Actions returns the bundled discovery script of group/kind and its action definitions, sorted by name:
// every actions/<name>/action.lua (Argo CD's resource_customizations layout). The generator emits them as
// resource.customizations.actions.<group>_<Kind> with mergeBuiltinActions: true.
func Actions(group, kind string) (discovery string, defs []ActionDef, err error) {
	dir := path.Join(group, kind, "actions")
	raw, err := FS.ReadFile(path.Join(dir, "discovery.lua"))
	if err != nil {
		return "", nil, fmt.Errorf("%s/%s: %w", group, kind, ErrNoActions)
	}
	entries, err := fs.ReadDir(FS, dir)
	if err != nil {
		return "", nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		script, err := FS.ReadFile(path.Join(dir, e.Name(), "action.lua"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // testdata/ and other folders without an action.lua
		}
		if err != nil {
			return "", nil, err
		}
		defs = append(defs, ActionDef{Name: e.Name(), Script: string(script)})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return string(raw), defs, nil
}
