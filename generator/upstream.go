package generator

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// Upstream is the folder format of a pull request to Argo CD that makes our health scripts its built-in
// ones: the files it changes or adds below resource_customizations/argoproj.io/<Kind>/ of an Argo CD
// source tree (UpstreamOptions.Base), to be copied over that tree's root. It has inputs of its own
// (GenerateUpstream): Argo CD's suites are edited, not replaced.
const Upstream Format = "upstream"

// UpstreamRoot is where Argo CD keeps its built-in scripts, relative to its source tree's root.
const UpstreamRoot = "resource_customizations"

// UpstreamCasesDir is the subfolder of a kind's testdata/ that holds our own cases: frames recorded from
// Argo Rollouts' controllers (test/testdata/timelines), trimmed as Argo CD's testdata are.
const UpstreamCasesDir = "recorded"

// upstreamCases are the recorded inputs of our own cases, <group>/<Kind>/<file>.yaml; a test in
// test/upstream derives them from the committed timelines and fails when they drift.
//
//go:embed upstreamcases
var upstreamCases embed.FS

// UpstreamCasesFS is upstreamCases rooted at the group folders, for the test that keeps them in step.
func UpstreamCasesFS() fs.FS {
	sub, err := fs.Sub(upstreamCases, "upstreamcases")
	if err != nil {
		panic(err) // the embedded folder exists: a compile-time fact
	}
	return sub
}

// UpstreamOptions select what GenerateUpstream edits.
type UpstreamOptions struct {
	// Base is the Argo CD source tree the pull request applies to, at its root (a checkout of
	// github.com/argoproj/argo-cd, or that module's directory in the Go module cache). Required.
	Base fs.FS
	// ArgoCDVersion is the release line of Base, under which the expectations are evaluated; empty means
	// engine.Default.
	ArgoCDVersion string
}

// UpstreamCase is one case of a generated health_test.yaml, with the built-in's expectation when the case
// is Argo CD's own.
type UpstreamCase struct {
	Kind      lua.Kind
	InputPath string
	// Upstream is set for Argo CD's own cases: Old is then its expectation in Base.
	Upstream bool
	Old      engine.Health
	New      engine.Health
}

// Changed reports whether the case is Argo CD's own and our script changes its expectation.
func (c UpstreamCase) Changed() bool { return c.Upstream && c.Old != c.New }

// GenerateUpstream renders the upstream format against o.Base, sorted by path.
func GenerateUpstream(o UpstreamOptions) ([]File, error) {
	files, _, err := UpstreamTree(o)
	return files, err
}

// UpstreamTree is GenerateUpstream with the cases of every generated suite, in file order. Per kind:
//
//   - health.lua is our script in source form, without our header comment and with the options block
//     reduced to the default's assignment: upstream has no options;
//   - health_test.yaml is Base's own, byte for byte, except the status and message lines of the cases our
//     script answers differently, followed by our own cases; every input file Base has is kept as it is;
//   - testdata/recorded/ holds the inputs of our own cases.
func UpstreamTree(o UpstreamOptions) ([]File, []UpstreamCase, error) {
	if o.Base == nil {
		return nil, nil, errors.New("upstream format: no Argo CD source tree to apply to")
	}
	profile := engine.Default
	if o.ArgoCDVersion != "" {
		p, err := engine.ParseProfile(o.ArgoCDVersion)
		if err != nil {
			return nil, nil, err
		}
		profile = p
	}
	eng := engine.Engine{Profile: profile}
	var files []File
	var cases []UpstreamCase
	for _, k := range lua.Kinds() {
		dir := path.Join(UpstreamRoot, k.Group, k.Kind)
		script, err := UpstreamScript(k)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, File{Path: path.Join(dir, "health.lua"), Data: []byte(script)})

		suitePath := path.Join(dir, healthTestFile)
		raw, err := fs.ReadFile(o.Base, suitePath)
		if err != nil {
			return nil, nil, fmt.Errorf("upstream format: Argo CD tree has no suite for %s: %w", k.Key(), err)
		}
		own, err := ownCases(k)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range own {
			p := path.Join(dir, c.InputPath)
			if _, err := fs.Stat(o.Base, p); err == nil {
				return nil, nil, fmt.Errorf("upstream format: %s is already in the Argo CD tree; an upstream input is never replaced", p)
			}
			files = append(files, File{Path: p, Data: c.raw})
		}
		suite, kcases, err := editSuite(eng, k, dir, raw, script, o.Base, own)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", suitePath, err)
		}
		files = append(files, File{Path: suitePath, Data: suite})
		cases = append(cases, kcases...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, cases, nil
}

// UpstreamScript is a kind's health script as Argo CD would ship it: the source form, without the header
// comment (which speaks of this project) and without the options markers; the options keep their default
// values, since Argo CD's built-ins have no options.
func UpstreamScript(k lua.Kind) (string, error) {
	src, err := lua.Health(k.Group, k.Kind)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(src, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "--") && !strings.HasPrefix(lines[i], "-- analysis-health:options") {
		i++
	}
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	var out strings.Builder
	for _, l := range lines[i:] {
		switch strings.TrimRight(l, "\r\n") {
		case "-- analysis-health:options":
			// What the block holds, for a reader who never saw it as options: the default's values.
			out.WriteString("-- The health an inconclusive analysis gives: the controller pauses the rollout for a human.\n")
			if k.Kind == "Rollout" {
				out.WriteString("-- humanGate: the health of a pause only a person ends (pause: {}, autoPromotionEnabled: false) after the analysis passed.\n")
			}
			continue
		case "-- analysis-health:end-options":
			continue
		}
		out.WriteString(l)
	}
	s := out.String()
	if strings.Contains(s, "analysis-health") {
		return "", fmt.Errorf("%s/health.lua: still names analysis-health once its header and options markers are gone", k.Key())
	}
	return s, nil
}

type ownCase struct {
	InputPath string // relative to the kind folder
	raw       []byte
}

// ownCases are the kind's recorded inputs, by file name.
func ownCases(k lua.Kind) ([]ownCase, error) {
	entries, err := fs.ReadDir(UpstreamCasesFS(), k.Key())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []ownCase
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		raw, err := fs.ReadFile(UpstreamCasesFS(), path.Join(k.Key(), e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, ownCase{InputPath: path.Join("testdata", UpstreamCasesDir, e.Name()), raw: raw})
	}
	return out, nil
}

// suiteCase is an entry of an Argo CD health_test.yaml with where its values sit in the file.
type suiteCase struct {
	inputPath       string
	want            engine.Health
	item            *yaml.Node // the case's mapping
	status, message *yaml.Node // value nodes; message may be nil
	statusKey       *yaml.Node
}

// parseSuite reads an Argo CD health suite keeping the positions of its values, so that changed cases can
// be rewritten in place. Anything else than tests: [{healthStatus: {status, message}, inputPath}] is an
// error: a field this code does not know might be one an edit has to keep consistent.
func parseSuite(raw []byte) ([]suiteCase, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("not one YAML document")
	}
	root := doc.Content[0]
	tests := mapValue(root, "tests")
	if root.Kind != yaml.MappingNode || len(root.Content) != 2 || tests == nil || tests.Kind != yaml.SequenceNode {
		return nil, errors.New("want a document holding only tests: [...]")
	}
	var out []suiteCase
	for i, item := range tests.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("tests[%d]: not a mapping", i)
		}
		c := suiteCase{item: item}
		for j := 0; j+1 < len(item.Content); j += 2 {
			key, v := item.Content[j], item.Content[j+1]
			switch key.Value {
			case "inputPath":
				c.inputPath = v.Value
			case "healthStatus":
				if v.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("tests[%d]: healthStatus is not a mapping", i)
				}
				for h := 0; h+1 < len(v.Content); h += 2 {
					hk, hv := v.Content[h], v.Content[h+1]
					switch hk.Value {
					case "status":
						c.status, c.statusKey, c.want.Status = hv, hk, hv.Value
					case "message":
						c.message, c.want.Message = hv, hv.Value
					default:
						return nil, fmt.Errorf("tests[%d]: healthStatus.%s is not a field this edit knows", i, hk.Value)
					}
				}
			default:
				return nil, fmt.Errorf("tests[%d]: %s is not a field this edit knows", i, key.Value)
			}
		}
		if c.inputPath == "" || c.status == nil {
			return nil, fmt.Errorf("tests[%d]: no inputPath or healthStatus.status", i)
		}
		for _, n := range []*yaml.Node{c.status, c.message} {
			if n != nil && (n.Kind != yaml.ScalarNode || strings.Contains(n.Value, "\n") || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0) {
				return nil, fmt.Errorf("tests[%d]: healthStatus values must be one-line scalars", i)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// loadInput decodes a test input as Argo CD's TestLuaHealthScript does (sigs.k8s.io/yaml into a map).
func loadInput(fsys fs.FS, p string) (map[string]any, error) {
	raw, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := sigsyaml.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return obj, nil
}

// editSuite evaluates script on every case of raw (inputs read from base) and on our own cases, and
// returns raw with the status and message lines of the changed cases rewritten and our cases appended in
// the suite's own layout.
func editSuite(eng engine.Engine, k lua.Kind, dir string, raw []byte, script string, base fs.FS, own []ownCase) ([]byte, []UpstreamCase, error) {
	suite, err := parseSuite(raw)
	if err != nil {
		return nil, nil, err
	}
	if len(suite) == 0 {
		return nil, nil, errors.New("no tests")
	}
	lines := strings.SplitAfter(string(raw), "\n")
	// Insertions (a message line the case lacked) are applied bottom-up so earlier line numbers hold.
	type insert struct {
		after int
		text  string
	}
	var inserts []insert
	var cases []UpstreamCase
	for i, c := range suite {
		obj, err := loadInput(base, path.Join(dir, c.inputPath))
		if err != nil {
			return nil, nil, fmt.Errorf("tests[%d]: %w", i, err)
		}
		got, err := eng.Health(obj, script)
		if err != nil {
			return nil, nil, fmt.Errorf("tests[%d] (%s): %w", i, c.inputPath, err)
		}
		if got.DeletionMessage != "" {
			return nil, nil, fmt.Errorf("tests[%d] (%s): a deletionMessage has no place in Argo CD's suite format", i, c.inputPath)
		}
		cases = append(cases, UpstreamCase{Kind: k, InputPath: c.inputPath, Upstream: true, Old: c.want, New: got})
		if got.Status != c.want.Status {
			lines[c.status.Line-1] = replaceValue(lines[c.status.Line-1], c.status, got.Status)
		}
		if got.Message != c.want.Message {
			if c.message != nil {
				lines[c.message.Line-1] = replaceValue(lines[c.message.Line-1], c.message, quote(got.Message))
			} else {
				inserts = append(inserts, insert{c.status.Line - 1, strings.Repeat(" ", c.statusKey.Column-1) + "message: " + quote(got.Message) + "\n"})
			}
		}
	}
	sort.Slice(inserts, func(i, j int) bool { return inserts[i].after > inserts[j].after })
	for _, in := range inserts {
		lines = append(lines[:in.after+1], append([]string{in.text}, lines[in.after+1:]...)...)
	}
	out := strings.Join(lines, "")
	if len(own) > 0 && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	// Our cases in the layout of the suite's first case: where its dash, keys and health fields start.
	first := suite[0]
	dash := strings.Repeat(" ", first.item.Column-3)
	key := strings.Repeat(" ", first.item.Column-1)
	field := strings.Repeat(" ", first.statusKey.Column-1)
	for _, c := range own {
		obj, err := loadInput(UpstreamCasesFS(), path.Join(k.Key(), path.Base(c.InputPath)))
		if err != nil {
			return nil, nil, err
		}
		got, err := eng.Health(obj, script)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.InputPath, err)
		}
		if got.Status == "" || got.DeletionMessage != "" {
			return nil, nil, fmt.Errorf("%s: our script gives %+v, which Argo CD's suite format cannot state", c.InputPath, got)
		}
		out += dash + "- healthStatus:\n" + field + "status: " + got.Status + "\n" + field + "message: " + quote(got.Message) + "\n" +
			key + "inputPath: " + c.InputPath + "\n"
		cases = append(cases, UpstreamCase{Kind: k, InputPath: c.InputPath, New: got})
	}
	// What was edited as text must read back as exactly the intended suite.
	back, err := parseSuite([]byte(out))
	if err != nil {
		return nil, nil, fmt.Errorf("edited suite does not parse: %w", err)
	}
	if len(back) != len(cases) {
		return nil, nil, fmt.Errorf("edited suite has %d cases, want %d", len(back), len(cases))
	}
	for i, c := range back {
		if c.inputPath != cases[i].InputPath || c.want != (engine.Health{Status: cases[i].New.Status, Message: cases[i].New.Message}) {
			return nil, nil, fmt.Errorf("edited suite: tests[%d] reads back as %s %+v, want %s %+v", i, c.inputPath, c.want, cases[i].InputPath, cases[i].New)
		}
	}
	return []byte(out), cases, nil
}

// replaceValue puts text where the scalar v starts on its line, dropping the old value and keeping any
// comment after it.
func replaceValue(line string, v *yaml.Node, text string) string {
	eol := ""
	if strings.HasSuffix(line, "\n") {
		eol = "\n"
	}
	body := strings.TrimSuffix(line, "\n")
	start := v.Column - 1
	end := len(body)
	if v.LineComment != "" {
		if i := strings.LastIndex(body, v.LineComment); i > start {
			end = i
			text += " "
		}
	}
	return body[:start] + text + body[end:] + eol
}

// quote writes a message as a YAML double-quoted scalar, the style of Argo CD's suites: JSON string
// syntax is a subset of it.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
