package verify

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// ActionSuite is Argo CD's actions/action_test.yaml (util/lua/custom_actions_test.go ActionTestStructure),
// with the fields v3 added (expectedErrorMessage, parameters).
type ActionSuite struct {
	DiscoveryTests []DiscoveryCase `json:"discoveryTests"`
	ActionTests    []ActionCase    `json:"actionTests"`
}

// DiscoveryCase runs discovery.lua against InputPath; Result lists the actions it must return.
type DiscoveryCase struct {
	InputPath string   `json:"inputPath"`
	Result    []Action `json:"result"`
}

// ActionCase runs <Action>/action.lua against InputPath and compares the returned objects with
// ExpectedOutputPath (one object, or Argo CD's list of {k8sOperation, unstructuredObj}), or the error
// with ExpectedErrorMessage.
type ActionCase struct {
	Action               string            `json:"action"`
	InputPath            string            `json:"inputPath"`
	ExpectedOutputPath   string            `json:"expectedOutputPath,omitempty"`
	ExpectedErrorMessage string            `json:"expectedErrorMessage,omitempty"`
	Parameters           map[string]string `json:"parameters,omitempty"`
	// Input is Argo CD's InputStr; its test reads it but never uses it, and neither does verify.
	Input string `json:"input,omitempty"`
}

// ActionSuite runs one actions/action_test.yaml against the discovery.lua and <name>/action.lua beside it.
//
// Discovery: every discovered action must be expected with the same name, disabled, displayName, iconClass
// and params (Argo CD's assert.Contains); with ExactActions, every expected action must be discovered too. Returned objects are compared as Argo CD's test compares them
// (compare.go: after its testNormalizer, fields the expected object lacks are ignored), or exactly with
// ExactActions; numbers compare by value and null fields are dropped, since Lua cannot return them. Every
// expected object must be returned.
func (r Runner) ActionSuite(fsys fs.FS, suitePath string) ([]Result, error) {
	dir := path.Dir(suitePath)
	var suite ActionSuite
	raw, err := parseSuite(fsys, suitePath, &suite)
	if err != nil {
		return nil, err
	}
	if err := checkInputs(fsys, suitePath, raw, "discoveryTests", func(i int) []string { return []string{suite.DiscoveryTests[i].InputPath} }, len(suite.DiscoveryTests)); err != nil {
		return nil, err
	}
	if err := checkInputs(fsys, suitePath, raw, "actionTests", func(i int) []string {
		return []string{suite.ActionTests[i].InputPath, suite.ActionTests[i].ExpectedOutputPath}
	}, len(suite.ActionTests)); err != nil {
		return nil, err
	}
	var discovery string
	if len(suite.DiscoveryTests) > 0 {
		b, err := fs.ReadFile(fsys, path.Join(dir, "discovery.lua"))
		if err != nil {
			return nil, fmt.Errorf("%s: discoveryTests but no discovery.lua beside it", suitePath)
		}
		if err := engine.CheckSyntax(string(b)); err != nil {
			return nil, SyntaxError(path.Join(dir, "discovery.lua"), string(b), err)
		}
		discovery = string(b)
	}

	results := make([]Result, 0, len(suite.DiscoveryTests)+len(suite.ActionTests))
	for i, tc := range suite.DiscoveryTests {
		res := Result{Suite: suitePath, Case: fmt.Sprintf("discoveryTests[%d] (%s)", i, tc.InputPath),
			Name: caseName(suitePath, "discovery", tc.InputPath), Role: "discovery", Input: tc.InputPath}
		res.Failure = r.discoveryCase(fsys, dir, discovery, tc)
		results = append(results, res)
	}
	for i, tc := range suite.ActionTests {
		res := Result{Suite: suitePath, Case: fmt.Sprintf("actionTests[%d] (%s %s)", i, tc.Action, tc.InputPath),
			Name: caseName(suitePath, tc.Action, tc.InputPath), Role: "action", Action: tc.Action, Input: tc.InputPath}
		res.Failure = r.actionCase(fsys, dir, tc)
		results = append(results, res)
	}
	return results, nil
}

func (r Runner) discoveryCase(fsys fs.FS, dir, script string, tc DiscoveryCase) string {
	obj, err := LoadObject(fsys, path.Join(dir, tc.InputPath))
	if err != nil {
		return err.Error()
	}
	got, err := r.Engine.vm().Discover(obj, script)
	if err != nil {
		return "script error: " + err.Error()
	}
	want := map[string]engine.Action{}
	for _, a := range tc.Result {
		want[a.Name] = r.comparable(a)
	}
	var problems []string
	discovered := map[string]bool{}
	for _, a := range got {
		discovered[a.Name] = true
		w, ok := want[a.Name]
		switch {
		case !ok:
			problems = append(problems, "unexpected action "+describeAction(a))
		case !reflect.DeepEqual(w, r.comparable(a)):
			problems = append(problems, fmt.Sprintf("want %s, got %s", describeAction(w), describeAction(a)))
		}
	}
	for _, a := range tc.Result {
		// Argo CD's test only asks that what was discovered is expected (assert.Contains).
		if r.ExactActions && !discovered[a.Name] {
			problems = append(problems, "expected action "+describeAction(a)+" not discovered")
		}
	}
	return strings.Join(problems, "; ")
}

// comparable drops what the profile's ResourceActionParam cannot carry, so an expectation written with v2's
// param fields still reads the same under v3, and treats no params like an empty list.
func (r Runner) comparable(a engine.Action) engine.Action {
	params := a.Params
	a.Params = nil
	for _, p := range params {
		if r.Engine.vm().Profile.AtLeast(engine.V32) {
			p = engine.ActionParam{Name: p.Name}
		}
		a.Params = append(a.Params, p)
	}
	return a
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

func (r Runner) actionCase(fsys fs.FS, dir string, tc ActionCase) string {
	if tc.Action == "" {
		return "no action named"
	}
	scriptPath := path.Join(dir, tc.Action, "action.lua")
	script, err := fs.ReadFile(fsys, scriptPath)
	if err != nil {
		return fmt.Sprintf("no %s/action.lua beside the suite", tc.Action)
	}
	if err := engine.CheckSyntax(string(script)); err != nil {
		return fmt.Sprintf("%s: %v", scriptPath, err)
	}
	if len(tc.Parameters) > 0 && !r.Engine.vm().Profile.AtLeast(engine.V32) {
		return "parameters need Argo CD v3 (--argocd-version v3): v2 actions take none"
	}
	if tc.ExpectedOutputPath == "" && tc.ExpectedErrorMessage == "" {
		return "neither expectedOutputPath nor expectedErrorMessage given"
	}
	source, err := LoadObject(fsys, path.Join(dir, tc.InputPath))
	if err != nil {
		return err.Error()
	}
	impacted, err := r.Engine.vm().RunAction(source, string(script), tc.Parameters)
	if tc.ExpectedErrorMessage != "" {
		switch {
		case err == nil:
			return fmt.Sprintf("want error %q, the action succeeded", tc.ExpectedErrorMessage)
		case WithoutTraceback(err.Error()) != tc.ExpectedErrorMessage:
			return fmt.Sprintf("want error %q, got %q", tc.ExpectedErrorMessage, WithoutTraceback(err.Error()))
		}
		return ""
	}
	if err != nil {
		return "script error: " + err.Error()
	}
	expected, err := loadExpected(fsys, path.Join(dir, tc.ExpectedOutputPath))
	if err != nil {
		return err.Error()
	}
	return compareImpacted(source, impacted, expected, r.Engine.vm().Profile, r.ExactActions)
}

// WithoutTraceback drops the stack traceback Argo CD v2 appends to Lua runtime errors, so one expected
// message serves both profiles (v3 strips it itself).
func WithoutTraceback(msg string) string {
	if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
		return msg[:i]
	}
	return msg
}

type expectedObject struct {
	operation string // k8sOperation in the list form, "" for a single object
	object    map[string]any
}

// loadExpected reads an expected output: one object (a patch of the source), or Argo CD's list form
// [{k8sOperation: create|patch, unstructuredObj: {...}}].
func loadExpected(fsys fs.FS, p string) ([]expectedObject, error) {
	raw, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	switch d := doc.(type) {
	case map[string]any:
		return []expectedObject{{object: d}}, nil
	case []any:
		out := make([]expectedObject, 0, len(d))
		for i, item := range d {
			m, _ := item.(map[string]any)
			obj, _ := m["unstructuredObj"].(map[string]any)
			if obj == nil {
				return nil, fmt.Errorf("%s: item %d has no unstructuredObj object", p, i+1)
			}
			op, _ := m["k8sOperation"].(string)
			out = append(out, expectedObject{operation: op, object: obj})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: expected an object or a list of {k8sOperation, unstructuredObj}", p)
}

type identity struct{ apiVersion, kind, namespace, name string }

func identify(obj map[string]any) identity {
	meta, _ := obj["metadata"].(map[string]any)
	s := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	return identity{s(obj, "apiVersion"), s(obj, "kind"), s(meta, "namespace"), s(meta, "name")}
}

func (id identity) String() string {
	if id.namespace == "" {
		return fmt.Sprintf("%s %s/%s", id.apiVersion, id.kind, id.name)
	}
	return fmt.Sprintf("%s %s %s/%s", id.apiVersion, id.kind, id.namespace, id.name)
}

// generatedName reports whether Argo CD's test matches a created object by name prefix: a Job created from
// a CronJob, a Workflow from a CronWorkflow or WorkflowTemplate, whose names carry a timestamp.
func generatedName(result, source identity) bool {
	return (result.kind == "Job" && source.kind == "CronJob") ||
		(result.kind == "Workflow" && (source.kind == "CronWorkflow" || source.kind == "WorkflowTemplate"))
}

func compareImpacted(source map[string]any, impacted []engine.Impacted, expected []expectedObject, p engine.Profile, exact bool) string {
	var problems []string
	src := identify(source)
	used := make([]bool, len(expected))
	for i, imp := range impacted {
		if imp.Operation != engine.Patch && imp.Operation != engine.Create {
			problems = append(problems, fmt.Sprintf("returned object %d: no operation", i+1))
			continue
		}
		got := deepCopyJSON(imp.Object)
		id := identify(got)
		match := -1
		for j, e := range expected {
			eid := identify(e.object)
			same := eid == id
			if generatedName(id, src) {
				same = eid.apiVersion == id.apiVersion && eid.kind == id.kind && eid.namespace == id.namespace &&
					strings.HasPrefix(eid.name, src.name)
			}
			if same && !used[j] {
				match = j
				break
			}
		}
		if match < 0 {
			problems = append(problems, fmt.Sprintf("returned %s %s, which the expected output does not hold", imp.Operation, id))
			continue
		}
		used[match] = true
		want := expected[match]
		if want.operation != "" && want.operation != string(imp.Operation) {
			problems = append(problems, fmt.Sprintf("%s: want operation %s, got %s", id, want.operation, imp.Operation))
		}
		if imp.Operation == engine.Patch && id != src {
			problems = append(problems, fmt.Sprintf("patch of %s, which is not the source object %s", id, src))
		}
		if imp.Operation == engine.Create && generatedName(id, src) {
			meta, _ := got["metadata"].(map[string]any)
			if meta != nil {
				meta["name"] = identify(want.object).name
			}
		}
		wantObj, gotObj := normalizeFor(p, want.object), normalizeFor(p, got)
		if !actionMatches(wantObj, gotObj, exact) {
			problems = append(problems, fmt.Sprintf("%s differs from the expected output:\n%s", id,
				UnifiedDiff(toYAML(wantObj), toYAML(gotObj), "expected", "action output")))
		}
	}
	for j, e := range expected {
		if !used[j] {
			problems = append(problems, fmt.Sprintf("expected %s was not returned", identify(e.object)))
		}
	}
	return strings.Join(problems, "; ")
}

// Normalize prepares an object for comparison: a deep copy with numbers as float64 (int64 from the action
// and float64 from YAML compare by value), null fields dropped (a Lua table cannot hold nil, so an action
// never returns one), and the volatile fields Argo CD's testNormalizer blanks set to fixed values
// (util/lua/custom_actions_test.go).
func Normalize(obj map[string]any) map[string]any {
	out, _ := dropNulls(deepCopyJSON(obj)).(map[string]any)
	if out == nil {
		return map[string]any{}
	}
	const epoch = "0001-01-01T00:00:00Z"
	kind, _ := out["kind"].(string)
	switch kind {
	case "Rollout":
		// restart sets spec.restartAt to the current time.
		if spec, ok := out["spec"].(map[string]any); ok {
			delete(spec, "restartAt")
		}
	case "Deployment", "DaemonSet", "StatefulSet":
		setIfPresent(out, epoch, "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")
	case "Job":
		status, _ := out["status"].(map[string]any)
		conditions, _ := status["conditions"].([]any)
		for _, c := range conditions {
			if cm, ok := c.(map[string]any); ok && cm["type"] == "FailureTarget" {
				cm["lastTransitionTime"] = epoch
			}
		}
	case "Workflow":
		if meta, ok := out["metadata"].(map[string]any); ok {
			delete(meta, "resourceVersion")
			delete(meta, "uid")
			if ann, ok := meta["annotations"].(map[string]any); ok {
				delete(ann, "workflows.argoproj.io/scheduled-time")
			}
		}
	case "ExternalSecret", "PushSecret":
		setIfPresent(out, epoch, "metadata", "annotations", "force-sync")
	case "HelmRelease", "ImageRepository", "ImageUpdateAutomation", "Kustomization", "Receiver", "Bucket",
		"GitRepository", "HelmChart", "HelmRepository", "OCIRepository":
		setIfPresent(out, "By Argo CD at: 0001-01-01T00:00:00", "metadata", "annotations", "reconcile.fluxcd.io/requestedAt")
	}
	return out
}

func setIfPresent(obj map[string]any, value string, fields ...string) {
	m := obj
	for _, f := range fields[:len(fields)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	if _, ok := m[fields[len(fields)-1]]; ok {
		m[fields[len(fields)-1]] = value
	}
}

func deepCopyJSON(obj map[string]any) map[string]any {
	raw, err := json.Marshal(obj)
	if err != nil {
		return obj
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return obj
	}
	return out
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			if item == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(item)
		}
	case []any:
		for i, item := range x {
			x[i] = dropNulls(item)
		}
	}
	return v
}

func toYAML(obj map[string]any) string {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Sprintf("%v\n", obj)
	}
	return string(b)
}

// UnifiedDiff renders the difference between two texts as a unified diff with three lines of context,
// or "" when they are equal.
func UnifiedDiff(a, b, fromName, toName string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Walk the edit script, cutting it into hunks around runs of changes.
	for start := 0; start < len(ops); {
		for start < len(ops) && ops[start].kind == ' ' {
			start++
		}
		if start == len(ops) {
			break
		}
		first := max(start-context, 0)
		end := start
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				break
			}
			end = run
		}
		last := min(end+context, len(ops))
		hunk := ops[first:last]
		aStart, bStart := hunk[0].ai, hunk[0].bi
		var aLen, bLen int
		for _, op := range hunk {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range hunk {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		start = last
	}
	return out.String()
}

func hunkRange(start, length int) string {
	if length == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if length == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, length)
}

func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type diffOp struct {
	kind   byte // ' ', '-' or '+'
	line   string
	ai, bi int // positions in a and b before this line
}

// diffLines is a longest-common-subsequence line diff. The common head and tail are cut first, so its
// quadratic table only spans the changed middle; a middle too large for that is replaced wholesale.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		ops = append(ops, diffOp{' ', a[pre], pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	ai, bi := pre, pre
	if len(am)*len(bm) > 4_000_000 {
		for _, l := range am {
			ops = append(ops, diffOp{'-', l, ai, bi})
			ai++
		}
		for _, l := range bm {
			ops = append(ops, diffOp{'+', l, ai, bi})
			bi++
		}
	} else {
		// lcs[i][j] is the LCS length of am[i:] and bm[j:].
		lcs := make([][]int32, len(am)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(bm)+1)
		}
		for i := len(am) - 1; i >= 0; i-- {
			for j := len(bm) - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(am) || j < len(bm) {
			switch {
			case i < len(am) && j < len(bm) && am[i] == bm[j]:
				ops = append(ops, diffOp{' ', am[i], ai, bi})
				i, j, ai, bi = i+1, j+1, ai+1, bi+1
			case j < len(bm) && (i == len(am) || lcs[i][j+1] > lcs[i+1][j]):
				ops = append(ops, diffOp{'+', bm[j], ai, bi})
				j, bi = j+1, bi+1
			default:
				ops = append(ops, diffOp{'-', am[i], ai, bi})
				i, ai = i+1, ai+1
			}
		}
	}
	for k := len(a) - suf; k < len(a); k++ {
		ops = append(ops, diffOp{' ', a[k], ai, bi})
		ai, bi = ai+1, bi+1
	}
	return ops
}
