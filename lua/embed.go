// Package lua holds the analysis-health scripts in Argo CD's resource_customizations layout
// (<group>/<Kind>/health.lua, health_test.yaml, testdata/, actions/), embedded so that the CLI, the
// generator and the tests all read the same bytes.
package lua

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"sigs.k8s.io/yaml"
)

// FS is the whole tree, tests and fixtures included, rooted at the group folders.
//
//go:embed argoproj.io
var FS embed.FS

// Kind names a resource kind the way Argo CD keys customizations (util/lua GetConfigMapKey).
type Kind struct {
	Group string
	Kind  string
}

// Key is "<group>/<Kind>", the resource_customizations folder and the legacy argocd-cm map key.
func (k Kind) Key() string { return k.Group + "/" + k.Kind }

// ConfigMapSuffix is "<group>_<Kind>", the suffix of the split argocd-cm keys.
func (k Kind) ConfigMapSuffix() string { return k.Group + "_" + k.Kind }

// Kinds lists every kind with a health script, sorted by key.
func Kinds() []Kind {
	var kinds []Kind
	groups, _ := fs.ReadDir(FS, ".")
	for _, g := range groups {
		entries, _ := fs.ReadDir(FS, g.Name())
		for _, e := range entries {
			if _, err := fs.Stat(FS, path.Join(g.Name(), e.Name(), "health.lua")); err == nil {
				kinds = append(kinds, Kind{Group: g.Name(), Kind: e.Name()})
			}
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Key() < kinds[j].Key() })
	return kinds
}

// Health returns the bundled health script for group/kind.
func Health(group, kind string) (string, error) {
	b, err := FS.ReadFile(path.Join(group, kind, "health.lua"))
	if err != nil {
		return "", fmt.Errorf("no bundled health script for %s/%s", group, kind)
	}
	return string(b), nil
}

// Fixture is one test object shipped beside a script.
type Fixture struct {
	Kind Kind
	// Path is relative to the tree root, e.g. "argoproj.io/Rollout/testdata/canary.yaml".
	Path string
	Raw  []byte
}

// Object decodes the fixture; an error names its path.
func (f Fixture) Object() (map[string]any, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(f.Raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return obj, nil
}

// Fixtures lists every testdata object below the bundled scripts (action outputs included), sorted by path.
func Fixtures() ([]Fixture, error) {
	var out []Fixture
	for _, k := range Kinds() {
		root := path.Join(k.Group, k.Kind)
		err := fs.WalkDir(FS, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || path.Ext(p) != ".yaml" || !inTestdata(p) {
				return nil
			}
			raw, err := FS.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, Fixture{Kind: k, Path: p, Raw: raw})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func inTestdata(p string) bool {
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if path.Base(dir) == "testdata" {
			return true
		}
	}
	return false
}
