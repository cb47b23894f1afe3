package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

const (
	healthTestFile = "health_test.yaml"
	actionTestFile = "action_test.yaml"
	verifyHint     = "Run these tests with: analysis-health verify DIR"
)

// renderLuaTree copies, per kind, health.lua (options applied), health_test.yaml and everything under
// testdata/, and, unless actions are off, the kind's actions/ folder (discovery.lua with options applied,
// every <name>/action.lua, action_test.yaml, testdata/), so that `analysis-health verify DIR` (and Argo
// CD's own TestLuaHealthScript and TestLuaResourceActionsScript layout) runs on the result.
func renderLuaTree(in rendering) ([]File, error) {
	var files []File
	for _, k := range in.kinds {
		dir := path.Join(k.Group, k.Kind)
		// The source, whatever the Argo CD version: the tree is what `verify` and Argo CD's own test
		// layout run, and what a user reads and edits.
		s, err := sourceScript(k, in.resolved)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: path.Join(dir, "health.lua"), Data: []byte(s)})

		err = fs.WalkDir(in.src, path.Join(dir, "testdata"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := fs.ReadFile(in.src, p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: p, Data: raw})
			return nil
		})
		if err != nil && !isNotExist(err) {
			return nil, err
		}

		suitePath := path.Join(dir, healthTestFile)
		raw, err := fs.ReadFile(in.src, suitePath)
		if isNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := checkInputPaths(dir, raw, files); err != nil {
			return nil, fmt.Errorf("%s: %w", suitePath, err)
		}
		if bundled, err := treeHealth(in.src, k); err == nil && bundled == s {
			// The bundled expectations hold for the bundled script: copied byte for byte under the header.
			files = append(files, File{Path: suitePath, Data: append([]byte(in.header.with(verifyHint)), raw...)})
			continue
		}
		derived, err := deriveSuite(k, in, raw, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", suitePath, err)
		}
		files = append(files, File{Path: suitePath, Data: derived})
	}
	for _, k := range in.actionKinds {
		var err error
		if files, err = appendActionTree(files, k, in); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// appendActionTree adds the kind's actions/ folder to files: every embedded file byte for byte, except
// discovery.lua (options applied) and action_test.yaml (under the header, its discovery expectations
// re-evaluated when the options changed the discovery script).
func appendActionTree(files []File, k lua.Kind, in rendering) ([]File, error) {
	dir := path.Join(k.Group, k.Kind, "actions")
	bundled, _, err := treeActions(in.src, k)
	if err != nil {
		return nil, err
	}
	optioned, _, err := actions(k, in.resolved)
	if err != nil {
		return nil, err
	}
	discoveryPath, suitePath := path.Join(dir, "discovery.lua"), path.Join(dir, actionTestFile)
	var suite []byte
	err = fs.WalkDir(in.src, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(in.src, p)
		if err != nil {
			return err
		}
		switch p {
		case discoveryPath:
			files = append(files, File{Path: p, Data: []byte(optioned)})
		case suitePath:
			suite = raw // written last: its paths are checked against the copied files
		default:
			files = append(files, File{Path: p, Data: raw})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if suite == nil {
		return files, nil
	}
	if err := checkActionPaths(dir, suite, files); err != nil {
		return nil, fmt.Errorf("%s: %w", suitePath, err)
	}
	if optioned == bundled {
		// The bundled expectations hold for the bundled scripts: copied byte for byte under the header.
		return append(files, File{Path: suitePath, Data: append([]byte(in.header.with(verifyHint)), suite...)}), nil
	}
	derived, err := deriveActionSuite(dir, in, suite, bundled, optioned)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", suitePath, err)
	}
	return append(files, File{Path: suitePath, Data: derived}), nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// checkActionPaths is checkInputPaths for an action suite: every input and expected output is a copied file
// under the actions folder.
func checkActionPaths(dir string, raw []byte, files []File) error {
	var suite verify.ActionSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	check := func(field, p string) error {
		full := path.Join(dir, p)
		if !strings.HasPrefix(full, dir+"/") || !have[full] {
			return fmt.Errorf("%s %s is not a file under %s", field, p, dir)
		}
		return nil
	}
	for i, tc := range suite.DiscoveryTests {
		if err := check(fmt.Sprintf("discoveryTests[%d]: inputPath", i), tc.InputPath); err != nil {
			return err
		}
	}
	for i, tc := range suite.ActionTests {
		if err := check(fmt.Sprintf("actionTests[%d]: inputPath", i), tc.InputPath); err != nil {
			return err
		}
		if tc.ExpectedOutputPath != "" {
			if err := check(fmt.Sprintf("actionTests[%d]: expectedOutputPath", i), tc.ExpectedOutputPath); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkInputPaths makes sure every fixture the suite names is inside the kind folder and was copied, so the
// generated tree is complete on its own.
func checkInputPaths(dir string, raw []byte, files []File) error {
	var suite verify.HealthSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	for i, tc := range suite.Tests {
		p := path.Join(dir, tc.InputPath)
		if !strings.HasPrefix(p, dir+"/") || !have[p] {
			return fmt.Errorf("tests[%d]: inputPath %s is not a file under %s/testdata", i, tc.InputPath, dir)
		}
	}
	return nil
}

// deriveSuite rewrites a health_test.yaml for non-default options. Argo CD's format has no notion of
// options, and the bundled expectations describe the default script, so each case is re-evaluated:
//
//   - the bundled script must still meet the bundled expectation, else the suite is broken and nothing
//     trustworthy can be derived from it;
//   - the optioned script may differ from it only as its options are documented to change it: the chosen
//     inconclusive status, or (--human-gate healthy) Suspended turned Healthy with the human gate's
//     message; anything else is an error, not a new expectation.
//
// Changed cases carry a comment with the bundled expectation, so the difference is reviewable. The
// conformance tests check the derived expectations against Argo CD's own evaluation.
func deriveSuite(k lua.Kind, in rendering, raw []byte, optioned string) ([]byte, error) {
	var suite verify.HealthSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return nil, err
	}
	bundled, err := treeHealth(in.src, k)
	if err != nil {
		return nil, err
	}
	dir := path.Join(k.Group, k.Kind)
	// The argocd-cm sandbox (no open libraries), where these scripts run in Argo CD.
	eng := engine.Engine{Profile: in.profile}
	tests := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, tc := range suite.Tests {
		obj, err := verify.LoadObject(in.src, path.Join(dir, tc.InputPath))
		if err != nil {
			return nil, fmt.Errorf("tests[%d]: %w", i, err)
		}
		def, err := eng.Health(obj, bundled)
		if err != nil {
			return nil, fmt.Errorf("tests[%d] (%s): bundled script: %w", i, tc.InputPath, err)
		}
		if def != tc.HealthStatus {
			return nil, fmt.Errorf("tests[%d] (%s): the bundled suite fails (want %s %q, got %s %q); fix it before generating with other options",
				i, tc.InputPath, tc.HealthStatus.Status, tc.HealthStatus.Message, def.Status, def.Message)
		}
		got, err := eng.Health(obj, optioned)
		if err != nil {
			return nil, fmt.Errorf("tests[%d] (%s): script with options: %w", i, tc.InputPath, err)
		}
		item := mapping(
			"healthStatus", mapping("status", str(got.Status), "message", str(got.Message)),
			"inputPath", str(tc.InputPath),
		)
		if got != def {
			switch {
			case in.humanGate == HumanGateHealthy && def.Status == engine.Suspended && got.Status == engine.Healthy &&
				strings.HasPrefix(got.Message, lua.HumanGateMessage+" ("):
				item.HeadComment = fmt.Sprintf("changed by --human-gate healthy; bundled expectation: %s %q", def.Status, def.Message)
			case in.inconclusive != InconclusiveSuspended && got.Status == in.inconclusive:
				item.HeadComment = fmt.Sprintf("changed by --inconclusive %s; bundled expectation: %s %q", strings.ToLower(in.inconclusive), def.Status, def.Message)
			default:
				return nil, fmt.Errorf("tests[%d] (%s): %s changed %s %q into %s %q; %s",
					i, tc.InputPath, in.optionFlags(), def.Status, def.Message, got.Status, got.Message, in.allowedChanges())
			}
		}
		tests.Content = append(tests.Content, item)
	}
	return encode(in.header.with(verifyHint,
		"Expectations re-evaluated for these options from the bundled suite; changed cases are marked.",
	), mapping("tests", tests), nil)
}

// optionFlags are the health script options that differ from the defaults, as generate's flags.
func (r resolved) optionFlags() string {
	var flags []string
	if r.inconclusive != InconclusiveSuspended {
		flags = append(flags, "--inconclusive "+strings.ToLower(r.inconclusive))
	}
	if r.humanGate != HumanGateSuspended {
		flags = append(flags, "--human-gate "+strings.ToLower(r.humanGate))
	}
	return strings.Join(flags, " ")
}

// allowedChanges says what optionFlags may change.
func (r resolved) allowedChanges() string {
	var may []string
	if r.inconclusive != InconclusiveSuspended {
		may = append(may, "the status to "+r.inconclusive)
	}
	if r.humanGate != HumanGateSuspended {
		may = append(may, fmt.Sprintf("Suspended into Healthy %q", lua.HumanGateMessage+" (…"))
	}
	return "it may only change " + strings.Join(may, ", or ")
}

// deriveActionSuite rewrites an action_test.yaml for a discovery script the options changed, on the same
// terms as deriveSuite: the bundled discovery must still return exactly each bundled result (else nothing
// trustworthy can be derived), and the optioned one may differ only as --block-bypass-on-failed-analysis
// is documented to: it lifts blocks. An entry the bundled script listed disabled may be dropped (Argo CD's
// built-in entry then stands) or come back enabled with its own displayName; nothing may be added, newly
// disabled or otherwise changed. Changed cases carry a comment with the bundled expectation. actionTests
// are kept as they are: no action script has options. The conformance tests check the derived results
// against Argo CD's own discovery.
func deriveActionSuite(dir string, in rendering, raw []byte, bundled, optioned string) ([]byte, error) {
	var suite verify.ActionSuite
	if err := sigsyaml.UnmarshalStrict(raw, &suite); err != nil {
		return nil, err
	}
	// Discovery runs without open libraries in every profile.
	eng := engine.Engine{Profile: in.profile}
	option := fmt.Sprintf("--block-bypass-on-failed-analysis=%v", in.blockBypass)
	discovery := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	derived := make([][]engine.Action, 0, len(suite.DiscoveryTests))
	for i, tc := range suite.DiscoveryTests {
		obj, err := verify.LoadObject(in.src, path.Join(dir, tc.InputPath))
		if err != nil {
			return nil, fmt.Errorf("discoveryTests[%d]: %w", i, err)
		}
		def, err := eng.Discover(obj, bundled)
		if err != nil {
			return nil, fmt.Errorf("discoveryTests[%d] (%s): bundled discovery: %w", i, tc.InputPath, err)
		}
		if !sameActions(def, tc.Result) {
			return nil, fmt.Errorf("discoveryTests[%d] (%s): the bundled suite fails (want %s, got %s); fix it before generating with other options",
				i, tc.InputPath, describeActions(tc.Result), describeActions(def))
		}
		got, err := eng.Discover(obj, optioned)
		if err != nil {
			return nil, fmt.Errorf("discoveryTests[%d] (%s): discovery with options: %w", i, tc.InputPath, err)
		}
		if err := onlyLiftsBlocks(def, got); err != nil {
			return nil, fmt.Errorf("discoveryTests[%d] (%s): %s %w", i, tc.InputPath, option, err)
		}
		derived = append(derived, got)
		item := mapping("inputPath", str(tc.InputPath), "result", actionsNode(got))
		if !sameActions(got, def) {
			item.HeadComment = fmt.Sprintf("changed by %s; bundled expectation: %s", option, describeActions(def))
		}
		discovery.Content = append(discovery.Content, item)
	}
	doc := mapping("discoveryTests", discovery)
	if len(suite.ActionTests) > 0 {
		tests := sequence()
		for _, tc := range suite.ActionTests {
			tests.Content = append(tests.Content, actionCaseNode(tc))
		}
		doc.Content = append(doc.Content, str("actionTests"), tests)
	}
	out, err := encode(in.header.with(verifyHint,
		"Discovery expectations re-evaluated for these options from the bundled suite; changed cases are marked.",
	), doc, nil)
	if err != nil {
		return nil, err
	}
	// The suite is rebuilt field by field: make sure it reads back as the bundled cases (actionTests) and the
	// derived results, so a field added to the format cannot be dropped silently.
	var back verify.ActionSuite
	if err := sigsyaml.UnmarshalStrict(out, &back); err != nil {
		return nil, fmt.Errorf("derived suite does not load: %w", err)
	}
	if !reflect.DeepEqual(back.ActionTests, suite.ActionTests) || len(back.DiscoveryTests) != len(derived) {
		return nil, errors.New("derived suite does not read back as the bundled one")
	}
	for i, tc := range back.DiscoveryTests {
		if tc.InputPath != suite.DiscoveryTests[i].InputPath || !sameActions(derived[i], tc.Result) {
			return nil, fmt.Errorf("derived suite: discoveryTests[%d] does not read back", i)
		}
	}
	return out, nil
}

// sameActions compares a discovery result (sorted by name) with an expected list in any order, as verify
// does: the same names, each with the same fields.
func sameActions(got, want []engine.Action) bool {
	if len(got) != len(want) {
		return false
	}
	w := append([]engine.Action(nil), want...)
	sort.Slice(w, func(i, j int) bool { return w[i].Name < w[j].Name })
	for i := range got {
		if !reflect.DeepEqual(normalAction(got[i]), normalAction(w[i])) {
			return false
		}
	}
	return true
}

// normalAction treats no params like an empty list, as verify does.
func normalAction(a engine.Action) engine.Action {
	if len(a.Params) == 0 {
		a.Params = nil
	}
	return a
}

// onlyLiftsBlocks checks that got (discovery with options) differs from def (bundled discovery) only by
// disabled entries that were dropped or enabled.
func onlyLiftsBlocks(def, got []engine.Action) error {
	before := map[string]engine.Action{}
	for _, a := range def {
		before[a.Name] = a
	}
	after := map[string]bool{}
	for _, a := range got {
		after[a.Name] = true
		d, ok := before[a.Name]
		switch {
		case !ok:
			return fmt.Errorf("added %s; it may only enable or drop entries the bundled discovery disabled", describeAction(a))
		case reflect.DeepEqual(normalAction(a), normalAction(d)):
		case !d.Disabled || a.Disabled || a.IconClass != d.IconClass || !reflect.DeepEqual(normalAction(a).Params, normalAction(d).Params):
			return fmt.Errorf("changed %s into %s; it may only enable or drop entries the bundled discovery disabled", describeAction(d), describeAction(a))
		}
	}
	for _, d := range def {
		if !after[d.Name] && !d.Disabled {
			return fmt.Errorf("dropped the enabled %s; it may only enable or drop entries the bundled discovery disabled", describeAction(d))
		}
	}
	return nil
}

func describeAction(a engine.Action) string {
	s := fmt.Sprintf("%s (disabled: %v", a.Name, a.Disabled)
	if a.DisplayName != "" {
		s += fmt.Sprintf(", displayName: %q", a.DisplayName)
	}
	if a.IconClass != "" {
		s += fmt.Sprintf(", iconClass: %q", a.IconClass)
	}
	for _, p := range a.Params {
		s += fmt.Sprintf(", param %+v", p)
	}
	return s + ")"
}

func describeActions(as []engine.Action) string {
	if len(as) == 0 {
		return "no actions"
	}
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, describeAction(a))
	}
	return strings.Join(parts, ", ")
}

// actionsNode writes a discovery result in the bundled suites' style: name first, disabled always, the
// optional fields only when set.
func actionsNode(as []engine.Action) *yaml.Node {
	seq := sequence()
	for _, a := range as {
		m := mapping("name", str(a.Name), "disabled", boolean(a.Disabled))
		if a.DisplayName != "" {
			m.Content = append(m.Content, str("displayName"), str(a.DisplayName))
		}
		if a.IconClass != "" {
			m.Content = append(m.Content, str("iconClass"), str(a.IconClass))
		}
		if len(a.Params) > 0 {
			params := sequence()
			for _, p := range a.Params {
				pm := mapping()
				for _, f := range [][2]string{{"name", p.Name}, {"value", p.Value}, {"type", p.Type}, {"default", p.Default}} {
					if f[1] != "" {
						pm.Content = append(pm.Content, str(f[0]), str(f[1]))
					}
				}
				params.Content = append(params.Content, pm)
			}
			m.Content = append(m.Content, str("params"), params)
		}
		seq.Content = append(seq.Content, m)
	}
	return seq
}

// actionCaseNode writes an actionTests entry with the fields it sets, in the bundled suites' order.
func actionCaseNode(tc verify.ActionCase) *yaml.Node {
	m := mapping("action", str(tc.Action), "inputPath", str(tc.InputPath))
	for _, f := range [][2]string{{"expectedOutputPath", tc.ExpectedOutputPath}, {"expectedErrorMessage", tc.ExpectedErrorMessage}, {"input", tc.Input}} {
		if f[1] != "" {
			m.Content = append(m.Content, str(f[0]), str(f[1]))
		}
	}
	if len(tc.Parameters) > 0 {
		names := make([]string, 0, len(tc.Parameters))
		for name := range tc.Parameters {
			names = append(names, name)
		}
		sort.Strings(names)
		params := mapping()
		for _, name := range names {
			params.Content = append(params.Content, str(name), str(tc.Parameters[name]))
		}
		m.Content = append(m.Content, str("parameters"), params)
	}
	return m
}
