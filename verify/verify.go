// Package verify runs Argo CD-format script test suites (health_test.yaml, and actions/action_test.yaml)
// found in resource_customizations-style trees, through the engine. It is the library behind the CLI's
// `verify` verb and the Go test that guards the bundled scripts.
package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// HealthSuite is Argo CD's health_test.yaml (util/lua/health_test.go TestStructure).
type HealthSuite struct {
	Tests []HealthCase `json:"tests"`
}

// HealthCase is one entry of a health suite.
type HealthCase struct {
	InputPath    string `json:"inputPath"`
	HealthStatus Health `json:"healthStatus"`
	// NoHealth is set when healthStatus is absent or null: Argo CD v3.6's suites hold a pointer, so such a
	// case expects no health (a script returning nil); earlier releases read it as an empty status.
	NoHealth bool `json:"-"`
}

// UnmarshalJSON records whether healthStatus was given. It always rejects unknown fields, as the
// suites are parsed strictly.
func (c *HealthCase) UnmarshalJSON(b []byte) error {
	var raw struct {
		InputPath    string  `json:"inputPath"`
		HealthStatus *Health `json:"healthStatus"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	*c = HealthCase{InputPath: raw.InputPath, NoHealth: raw.HealthStatus == nil}
	if raw.HealthStatus != nil {
		c.HealthStatus = *raw.HealthStatus
	}
	return nil
}

// expected is what Argo CD's TestLuaHealthScript compares ExecuteHealthLua's result with under the
// profile: v3.6 a pointer (nil for NoHealth) to a HealthStatus with deletionMessage; before, the address
// of a HealthStatus without it.
func (c HealthCase) expected(p engine.Profile) *engine.Health {
	want := c.HealthStatus
	if !p.AtLeast(engine.V36) {
		want.DeletionMessage = ""
		return &want
	}
	if c.NoHealth {
		return nil
	}
	return &want
}

// Result is the outcome of one case.
type Result struct {
	// Suite is the test file, relative to the tree root it was found in.
	Suite string
	// Case names the case: its index and input path.
	Case string
	// Name is "<group>/<Kind>/<health|discovery|action>/<input file>", the subtest name in Test.
	Name string
	// Failure is empty for a passing case.
	Failure string
	// NotRun says why a case was not run (a suite without the script it tests, which Argo CD's own test
	// never runs either); such a case neither passes nor fails.
	NotRun string
	// Role, Action and Input place the case as Argo CD's own tests name it: "health", "discovery" or
	// "action", the action's name, and the suite's inputPath.
	Role, Action, Input string
}

// caseName builds Result.Name from the suite's place in the tree.
func caseName(suitePath, what, input string) string {
	kdir := path.Dir(suitePath)
	if path.Base(kdir) == "actions" {
		kdir = path.Dir(kdir)
	}
	return path.Base(path.Dir(kdir)) + "/" + path.Base(kdir) + "/" + what + "/" + strings.TrimPrefix(input, "testdata/")
}

// Passed reports whether the case passed.
func (r Result) Passed() bool { return r.Failure == "" && r.NotRun == "" }

// Report collects the results of a run.
type Report struct {
	Results []Result
}

// Counts returns the number of passed and failed cases; a case not run is neither.
func (r Report) Counts() (passed, failed int) {
	for _, res := range r.Results {
		switch {
		case res.NotRun != "":
		case res.Passed():
			passed++
		default:
			failed++
		}
	}
	return passed, failed
}

// NotRun lists the cases not run as "suite: case: reason" lines.
func (r Report) NotRun() []string {
	var out []string
	for _, res := range r.Results {
		if res.NotRun != "" {
			out = append(out, strings.Join([]string{res.Suite, res.Case, res.NotRun}, ": "))
		}
	}
	return out
}

// Runner evaluates suites with one engine configuration.
type Runner struct {
	Engine Engine
	// scripts indexes the tree's scripts, so that a health case runs the script Argo CD picks for its
	// object (Tree sets it).
	scripts builtin.Index
	// ExactActions compares an action's output with the whole expected object, not as Argo CD's test does
	// (which ignores the fields the expected object lacks): stricter, for suites of one's own.
	ExactActions bool
}

// Tree runs every health_test.yaml (and action_test.yaml) below root in fsys. A tree without any suite is
// ErrNoSuites: pointing verify at the wrong folder must not look like success. A suite that does not
// parse, a case naming a missing file and a script with a syntax error are errors naming file and line.
func (r Runner) Tree(fsys fs.FS, root string) (Report, error) {
	var suites []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (d.Name() == "health_test.yaml" || d.Name() == "action_test.yaml") {
			suites = append(suites, p)
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	if len(suites) == 0 {
		return Report{}, fmt.Errorf("%s: %w", root, ErrNoSuites)
	}
	sort.Strings(suites)
	// Every script must load, tested or not: Argo CD would fail on it all the same.
	scripts, err := Scripts(sub(fsys, root))
	if err != nil {
		return Report{}, err
	}
	var paths []string
	for _, s := range scripts {
		paths = append(paths, path.Join(root, s.Path))
	}
	r.scripts = builtin.FromPaths(r.Engine.vm().Profile.String(), paths)
	var rep Report
	for _, s := range suites {
		var res []Result
		if path.Base(s) == "health_test.yaml" {
			res, err = r.HealthSuite(fsys, s)
		} else {
			res, err = r.ActionSuite(fsys, s)
		}
		if err != nil {
			return Report{}, err
		}
		rep.Results = append(rep.Results, res...)
	}
	return rep, nil
}

func sub(fsys fs.FS, root string) fs.FS {
	if root == "." || root == "" {
		return fsys
	}
	if s, err := fs.Sub(fsys, root); err == nil {
		return s
	}
	return fsys
}

// HealthSuite runs one health_test.yaml. Each case runs the script Argo CD's own TestLuaHealthScript would
// (util/lua GetHealthScript on the case's object): the tree's <group>/<Kind>/health.lua for the object's
// kind, else (v3) the first wildcard folder matching it, else the health.lua beside the suite. Argo CD v3.6's
// _.crossplane.io/_ suite holds a pkg.crossplane.io Provider, judged by pkg.crossplane.io/Provider/health.lua.
func (r Runner) HealthSuite(fsys fs.FS, suitePath string) ([]Result, error) {
	dir := path.Dir(suitePath)
	var suite HealthSuite
	raw, err := parseSuite(fsys, suitePath, &suite)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(fsys, suitePath, raw, "tests", func(i int) []string { return []string{suite.Tests[i].InputPath} }, len(suite.Tests)); err != nil {
		return nil, err
	}
	script, err := fs.ReadFile(fsys, path.Join(dir, "health.lua"))
	if err != nil {
		// Argo CD's own trees have such a suite (sql.cnrm.cloud.google.com/SQLUser, v2.14.21 to v3.6.2): its
		// TestLuaHealthScript walks the scripts, not the suites, so the suite never runs there either. Its
		// cases are reported as not run, not as failures.
		out := make([]Result, 0, len(suite.Tests))
		for i, tc := range suite.Tests {
			out = append(out, Result{Suite: suitePath, Case: fmt.Sprintf("tests[%d] (%s)", i, tc.InputPath),
				Name: caseName(suitePath, "health", tc.InputPath), Role: "health", Input: tc.InputPath,
				NotRun: "no health.lua beside the suite (Argo CD's own test does not run it either)"})
		}
		return out, nil
	}
	if err := engine.CheckSyntax(string(script)); err != nil {
		return nil, SyntaxError(path.Join(dir, "health.lua"), string(script), err)
	}
	results := make([]Result, 0, len(suite.Tests))
	for i, tc := range suite.Tests {
		res := Result{Suite: suitePath, Case: fmt.Sprintf("tests[%d] (%s)", i, tc.InputPath),
			Name: caseName(suitePath, "health", tc.InputPath), Role: "health", Input: tc.InputPath}
		obj, err := LoadObject(fsys, path.Join(dir, tc.InputPath))
		if err != nil {
			res.Failure = err.Error()
			results = append(results, res)
			continue
		}
		src := string(script)
		if p := r.scriptFor(fsys, obj); p != "" && p != path.Join(dir, "health.lua") {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return nil, err
			}
			src = string(b)
		}
		got, err := r.Engine.vm().Execute(obj, src)
		want := tc.expected(r.Engine.vm().Profile)
		switch {
		case err != nil:
			res.Failure = "script error: " + err.Error()
		case (got == nil) != (want == nil) || got != nil && *got != *want:
			res.Failure = fmt.Sprintf("want %s, got %s", showHealth(want), showHealth(got))
		}
		results = append(results, res)
	}
	return results, nil
}

// scriptFor is the tree's health script for obj's kind, as Argo CD resolves it, or "" if none.
func (r Runner) scriptFor(fsys fs.FS, obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, _, found := strings.Cut(apiVersion, "/")
	key := kind
	if found && group != "" {
		key = group + "/" + kind
	}
	p, _, ok := r.scripts.Health(key)
	if !ok {
		return ""
	}
	return p
}

// showHealth prints a result the way failures name it.
func showHealth(h *engine.Health) string {
	if h == nil {
		return "no health (the script returned nil)"
	}
	out := fmt.Sprintf("%s %q", show(h.Status), h.Message)
	if h.DeletionMessage != "" {
		out += fmt.Sprintf(" (deletionMessage %q)", h.DeletionMessage)
	}
	return out
}

func show(s string) string {
	if s == "" {
		return "(no status)"
	}
	return s
}

// LoadObject reads one YAML or JSON object, the way Argo CD's tests do (sigs.k8s.io/yaml).
func LoadObject(fsys fs.FS, p string) (map[string]any, error) {
	raw, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Decode(p, raw)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: want exactly one object, found %d", p, len(objs))
	}
	return objs[0].Object, nil
}

// Summary is the closing line: "N passed, N failed".
func (r Report) Summary() string {
	p, f := r.Counts()
	if n := len(r.NotRun()); n > 0 {
		return fmt.Sprintf("%d passed, %d failed, %d not run", p, f, n)
	}
	return fmt.Sprintf("%d passed, %d failed", p, f)
}

// Failures lists failing results as "suite: case: failure" lines.
func (r Report) Failures() []string {
	var out []string
	for _, res := range r.Results {
		if res.Failure != "" {
			out = append(out, strings.Join([]string{res.Suite, res.Case, res.Failure}, ": "))
		}
	}
	return out
}
