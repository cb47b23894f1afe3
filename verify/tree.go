package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// ErrNoSuites is returned for a tree without any health_test.yaml or action_test.yaml.
var ErrNoSuites = errors.New("no health_test.yaml or action_test.yaml found")

// ScriptFile is one script of a resource_customizations tree: <group>/<Kind>/health.lua,
// <group>/<Kind>/actions/discovery.lua or <group>/<Kind>/actions/<name>/action.lua.
type ScriptFile struct {
	Path  string
	Role  Role
	Group string
	Kind  string
	// Action is the action's name, for Role lint.Action.
	Action string
	Source string
}

// Key is "<group>/<Kind>".
func (s ScriptFile) Key() string { return s.Group + "/" + s.Kind }

// Scripts lists every health, discovery and action script in fsys, sorted by path. A script Argo CD
// could not load is an error naming its file and line.
func Scripts(fsys fs.FS) ([]ScriptFile, error) {
	var out []ScriptFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".lua" || inTestdata(p) {
			return nil
		}
		dir := path.Dir(p)
		var s ScriptFile
		switch d.Name() {
		case "health.lua":
			s = ScriptFile{Role: RoleHealth, Kind: path.Base(dir), Group: path.Base(path.Dir(dir))}
		case "discovery.lua":
			if path.Base(dir) != "actions" {
				return nil
			}
			kdir := path.Dir(dir)
			s = ScriptFile{Role: RoleDiscovery, Kind: path.Base(kdir), Group: path.Base(path.Dir(kdir))}
		case "action.lua":
			if path.Base(path.Dir(dir)) != "actions" {
				return nil
			}
			kdir := path.Dir(path.Dir(dir))
			s = ScriptFile{Role: RoleAction, Action: path.Base(dir), Kind: path.Base(kdir), Group: path.Base(path.Dir(kdir))}
		default:
			return nil
		}
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		s.Path, s.Source = p, string(raw)
		if err := engine.CheckSyntax(s.Source); err != nil {
			return SyntaxError(p, s.Source, err)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

var luaLine = regexp.MustCompile(`line:(\d+)`)

// SyntaxError renders gopher-lua's syntax error in src as "file:line: message"; an error at the end of
// the file (a missing end) is given the file's last line.
func SyntaxError(file, src string, err error) error {
	msg := strings.TrimSpace(err.Error())
	if m := luaLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", file, m[1], msg)
	}
	if strings.Contains(msg, "at EOF") {
		return fmt.Errorf("%s:%d: %s", file, strings.Count(strings.TrimRight(src, "\n"), "\n")+1, msg)
	}
	return fmt.Errorf("%s: %s", file, msg)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// suiteError renders a suite that does not parse as "file:line: message", the line taken from the YAML
// parser's message or, for a field the suite format lacks, found in the document.
func suiteError(file string, raw []byte, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", file, m[1], msg)
	}
	if i := strings.Index(msg, `unknown field "`); i >= 0 {
		field := strings.SplitN(msg[i+len(`unknown field "`):], `"`, 2)[0]
		if line := keyLine(raw, field); line > 0 {
			return fmt.Errorf("%s:%d: %s", file, line, msg)
		}
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// keyLine is the line of the first mapping key named key, or 0.
func keyLine(raw []byte, key string) int {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(raw, &doc) != nil {
		return 0
	}
	var find func(n *yamlv3.Node) int
	find = func(n *yamlv3.Node) int {
		if n.Kind == yamlv3.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					return n.Content[i].Line
				}
			}
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	return find(&doc)
}

// caseLines maps each entry of the top-level list under key to its line in the suite.
func caseLines(raw []byte, key string) []int {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key && root.Content[i+1].Kind == yamlv3.SequenceNode {
			var lines []int
			for _, item := range root.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

func lineOf(lines []int, i int) string {
	if i < len(lines) {
		return ":" + strconv.Itoa(lines[i])
	}
	return ""
}

// parseSuite decodes a suite strictly and checks that every input file it names exists, so a typo is an
// error with the file and line rather than a failed case.
func parseSuite(fsys fs.FS, suitePath string, into any) ([]byte, error) {
	raw, err := fs.ReadFile(fsys, suitePath)
	if err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		return nil, suiteError(suitePath, raw, err)
	}
	return raw, nil
}

// checkInputs fails on the first case whose input (or expected output) file is missing.
func checkInputs(fsys fs.FS, suitePath string, raw []byte, key string, files func(i int) []string, n int) error {
	lines := caseLines(raw, key)
	dir := path.Dir(suitePath)
	for i := 0; i < n; i++ {
		for _, f := range files(i) {
			if f == "" {
				continue
			}
			if _, err := fs.Stat(fsys, path.Join(dir, f)); err != nil {
				return fmt.Errorf("%s%s: %s[%d]: %s: no such file", suitePath, lineOf(lines, i), key, i, path.Join(dir, f))
			}
		}
	}
	return nil
}

// seedObjects are the test objects a tree's suites name for group/Kind (health and action inputs),
// deduplicated and sorted by path, keyed by their path in the tree.
func seedObjects(fsys fs.FS, group, kind string) (map[string]map[string]any, error) {
	kdir := path.Join(group, kind)
	paths := map[string]bool{}
	var hs HealthSuite
	if raw, err := fs.ReadFile(fsys, path.Join(kdir, "health_test.yaml")); err == nil {
		if err := yaml.Unmarshal(raw, &hs); err == nil {
			for _, tc := range hs.Tests {
				paths[path.Join(kdir, tc.InputPath)] = true
			}
		}
	}
	var as ActionSuite
	if raw, err := fs.ReadFile(fsys, path.Join(kdir, "actions", "action_test.yaml")); err == nil {
		if err := yaml.Unmarshal(raw, &as); err == nil {
			for _, tc := range as.DiscoveryTests {
				paths[path.Join(kdir, "actions", tc.InputPath)] = true
			}
			for _, tc := range as.ActionTests {
				paths[path.Join(kdir, "actions", tc.InputPath)] = true
			}
		}
	}
	out := map[string]map[string]any{}
	for p := range paths {
		obj, err := LoadObject(fsys, p)
		if err != nil {
			continue // the suite run reports it
		}
		// A built-in wildcard folder (v3: "_" stands for "*") serves every kind its fixtures have.
		if k, _ := obj["kind"].(string); k != "" && k != kind && !strings.Contains(kind, "_") {
			continue
		}
		out[p] = obj
	}
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

// readAll reads every file of fsys, keyed by path.
func readAll(fsys fs.FS) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[p] = b
		return err
	})
	return out, err
}
