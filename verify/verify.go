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

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/manifest"
)

// HealthSuite is Argo CD's health_test.yaml (util/lua/health_test.go TestStructure).
type HealthSuite struct {
	Tests []HealthCase `json:"tests"`
}

// HealthCase is one entry of a health suite.
type HealthCase struct {
	InputPath    string        `json:"inputPath"`
	HealthStatus engine.Health `json:"healthStatus"`
	// NoHealth is set when healthStatus is absent or null: Argo CD v3.6's suites hold a pointer, so such a
	// case expects no health (a script returning nil); earlier releases read it as an empty status.
	NoHealth bool `json:"-"`
}

// UnmarshalJSON records whether healthStatus was given. It always rejects unknown fields, as the
// suites are parsed strictly.
func (c *HealthCase) UnmarshalJSON(b []byte) error {
	var raw struct {
		InputPath    string         `json:"inputPath"`
		HealthStatus *engine.Health `json:"healthStatus"`
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
func (r Result) Passed() bool { return r.Failure == "" }

// Report collects the results of a run.
type Report struct {
	Results []Result
}

// Counts returns the number of passed and failed cases.
func (r Report) Counts() (passed, failed int) {
	for _, res := range r.Results {
		if res.Passed() {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// Runner evaluates suites with one engine configuration.
type Runner struct {
	Engine engine.Engine
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
	if _, err := Scripts(sub(fsys, root)); err != nil {
		return Report{}, err
	}
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

// HealthSuite runs one health_test.yaml against the health.lua beside it.
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
		// Argo CD's own tree has such a suite (v2.14.21 sql.cnrm.cloud.google.com/SQLUser): its test walks
		// the scripts, so the suite never runs. One failure here, and the rest of the tree still runs.
		return []Result{{Suite: suitePath, Case: "health.lua", Name: caseName(suitePath, "health", "health.lua"),
			Failure: "no health.lua beside the suite, so none of its cases can run"}}, nil
	}
	if err := engine.CheckSyntax(string(script)); err != nil {
		return nil, SyntaxError(path.Join(dir, "health.lua"), string(script), err)
	}
	results := make([]Result, 0, len(suite.Tests))
	for i, tc := range suite.Tests {
		res := Result{Suite: suitePath, Case: fmt.Sprintf("tests[%d] (%s)", i, tc.InputPath),
			Name: caseName(suitePath, "health", tc.InputPath)}
		obj, err := LoadObject(fsys, path.Join(dir, tc.InputPath))
		if err != nil {
			res.Failure = err.Error()
			results = append(results, res)
			continue
		}
		got, err := r.Engine.Execute(obj, string(script))
		want := tc.expected(r.Engine.Profile)
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
	return fmt.Sprintf("%d passed, %d failed", p, f)
}

// Failures lists failing results as "suite: case: failure" lines.
func (r Report) Failures() []string {
	var out []string
	for _, res := range r.Results {
		if !res.Passed() {
			out = append(out, strings.Join([]string{res.Suite, res.Case, res.Failure}, ": "))
		}
	}
	return out
}
