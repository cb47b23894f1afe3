package verify

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

const suiteObj = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: r
  namespace: ns
spec:
  replicas: 3
  template:
    metadata:
      creationTimestamp: null
status:
  canary: {}
  currentStepIndex: 1
`

const discoveryLua = `
local actions = {}
actions["pause"] = {disabled = obj.spec.paused == true}
actions["skip"] = {disabled = false, displayName = "Skip"}
return actions
`

func tree(suite string, extra map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"g/K/actions/action_test.yaml":        {Data: []byte(suite)},
		"g/K/actions/discovery.lua":           {Data: []byte(discoveryLua)},
		"g/K/actions/pause/action.lua":        {Data: []byte("obj.spec.paused = true\nreturn obj\n")},
		"g/K/actions/fail/action.lua":         {Data: []byte("error(\"no \" .. obj.metadata.name, 0)\n")},
		"g/K/actions/params/action.lua":       {Data: []byte("obj.spec.replicas = tonumber(actionParams.count)\nreturn obj\n")},
		"g/K/actions/restart/action.lua":      {Data: []byte("obj.spec.restartAt = \"2030-01-01T00:00:00Z\"\nreturn obj\n")},
		"g/K/actions/create/action.lua":       {Data: []byte(`return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "cm", namespace = "ns"}}}, {operation = "patch", resource = obj}}`)},
		"g/K/actions/testdata/in.yaml":        {Data: []byte(suiteObj)},
		"g/K/actions/testdata/paused.yaml":    {Data: []byte(strings.Replace(suiteObj, "spec:\n", "spec:\n  paused: true\n", 1))},
		"g/K/actions/testdata/restarted.yaml": {Data: []byte(strings.Replace(suiteObj, "spec:\n", "spec:\n  restartAt: \"2020-01-01T00:00:00Z\"\n", 1))},
		"g/K/actions/testdata/replicas7.yaml": {Data: []byte(strings.Replace(suiteObj, "replicas: 3", "replicas: 7", 1))},
		"g/K/actions/testdata/created.yaml": {Data: []byte("- k8sOperation: create\n  unstructuredObj: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}}\n" +
			"- k8sOperation: patch\n  unstructuredObj:\n" + indent(suiteObj, "    "))},
	}
	for k, v := range extra {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, prefix) + "\n"
}

func TestActionSuite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile engine.Profile
		exact   bool
		suite   string
		want    []string // failure substrings per case, "" = pass
		wantErr string
	}{
		{name: "discovery passes", suite: `
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: pause, disabled: false}, {name: skip, disabled: false, displayName: Skip}]
- inputPath: testdata/paused.yaml
  result: [{name: skip, disabled: false, displayName: Skip}, {name: pause, disabled: true}]`, want: []string{"", ""}},
		{name: "discovery differs", suite: `
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: pause, disabled: true}, {name: skip, disabled: false}]`,
			want: []string{`want pause (disabled: true), got pause (disabled: false); want skip (disabled: false), got skip (disabled: false, displayName: "Skip")`}},
		{name: "an expected action that is not discovered passes, as in Argo CD", suite: `
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: pause}, {name: skip, displayName: Skip}, {name: resume}]`, want: []string{""}},
		{name: "an expected action that is not discovered fails when exact", exact: true, suite: `
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: pause}, {name: skip, displayName: Skip}, {name: resume}]`,
			want: []string{"expected action resume (disabled: false) not discovered"}},
		{name: "an unexpected action fails", suite: `
discoveryTests:
- inputPath: testdata/in.yaml
  result: [{name: pause}]`, want: []string{`unexpected action skip (disabled: false, displayName: "Skip")`}},
		{name: "missing input", suite: `
discoveryTests:
- inputPath: testdata/nope.yaml
  result: []`, wantErr: "g/K/actions/action_test.yaml:3: discoveryTests[0]: g/K/actions/testdata/nope.yaml: no such file"},
		{name: "missing expected output", suite: `
discoveryTests: []
actionTests:
- action: pause
  inputPath: testdata/in.yaml
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/gone.yaml`, wantErr: "g/K/actions/action_test.yaml:6: actionTests[1]: g/K/actions/testdata/gone.yaml: no such file"},
		{name: "action output matches", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/paused.yaml`, want: []string{""}},
		{name: "a field the expected object lacks is ignored, as in Argo CD", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/in.yaml`, want: []string{""}},
		{name: "a value the expected object holds must match", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/replicas7.yaml`, want: []string{"differs from the expected output:"}},
		{name: "action output differs when exact, with a diff", exact: true, suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/in.yaml`, want: []string{"argoproj.io/v1alpha1 Rollout ns/r differs from the expected output:\n--- expected\n+++ action output\n@@ -4,6 +4,7 @@\n   name: r\n   namespace: ns\n spec:\n+  paused: true\n   replicas: 3\n   template:\n     metadata: {}\n"}},
		{name: "restartAt is volatile", suite: `
actionTests:
- action: restart
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/restarted.yaml`, want: []string{""}},
		{name: "expected error", suite: `
actionTests:
- action: fail
  inputPath: testdata/in.yaml
  expectedErrorMessage: no r`, want: []string{""}},
		{name: "expected error, v2 traceback ignored", profile: engine.V214, suite: `
actionTests:
- action: fail
  inputPath: testdata/in.yaml
  expectedErrorMessage: no r`, want: []string{""}},
		{name: "wrong error", suite: `
actionTests:
- action: fail
  inputPath: testdata/in.yaml
  expectedErrorMessage: other`, want: []string{`want error "other", got "no r"`}},
		{name: "error expected, none raised", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedErrorMessage: other`, want: []string{`want error "other", the action succeeded`}},
		{name: "unexpected error", suite: `
actionTests:
- action: fail
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/in.yaml`, want: []string{"script error: no r"}},
		{name: "v3 parameters", profile: engine.V32, suite: `
actionTests:
- action: params
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/replicas7.yaml
  parameters: {count: "7"}`, want: []string{""}},
		{name: "parameters under v2", profile: engine.V214, suite: `
actionTests:
- action: params
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/replicas7.yaml
  parameters: {count: "7"}`, want: []string{"parameters need Argo CD v3"}},
		{name: "list form with create", suite: `
actionTests:
- action: create
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/created.yaml`, want: []string{""}},
		{name: "an expected object that is not returned fails", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/created.yaml`, want: []string{"expected v1 ConfigMap ns/cm was not returned"}},
		{name: "unknown action", suite: `
actionTests:
- action: nope
  inputPath: testdata/in.yaml
  expectedOutputPath: testdata/in.yaml`, want: []string{"no nope/action.lua beside the suite"}},
		{name: "neither output nor error", suite: `
actionTests:
- action: pause
  inputPath: testdata/in.yaml`, want: []string{"neither expectedOutputPath nor expectedErrorMessage"}},
		{name: "typo in the suite", suite: `
discoveryTest:
- inputPath: testdata/in.yaml`, wantErr: `g/K/actions/action_test.yaml:2: error unmarshaling JSON: while decoding JSON: json: unknown field "discoveryTest"`},
		{name: "suite that does not parse", suite: `
actionTests:
- action: pause
  inputPath: [`, wantErr: `g/K/actions/action_test.yaml:4: error converting YAML to JSON: yaml: line 4:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			profile := tc.profile
			if profile == "" {
				profile = engine.V32
			}
			res, err := Runner{Engine: Engine{Profile: Profile(profile)}, ExactActions: tc.exact}.ActionSuite(tree(tc.suite, nil), "g/K/actions/action_test.yaml")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(tc.want) {
				t.Fatalf("want %d results, got %d: %+v", len(tc.want), len(res), res)
			}
			for i, w := range tc.want {
				switch {
				case w == "" && !res[i].Passed():
					t.Errorf("case %d failed: %s", i, res[i].Failure)
				case w != "" && !strings.Contains(res[i].Failure, w):
					t.Errorf("case %d: want failure containing %q, got %q", i, w, res[i].Failure)
				}
			}
		})
	}
}

func TestActionSuiteNeedsDiscoveryScript(t *testing.T) {
	fsys := tree("discoveryTests:\n- inputPath: testdata/in.yaml\n  result: []\n", nil)
	delete(fsys, "g/K/actions/discovery.lua")
	_, err := Runner{}.ActionSuite(fsys, "g/K/actions/action_test.yaml")
	if err == nil || !strings.Contains(err.Error(), "no discovery.lua") {
		t.Fatalf("got %v", err)
	}
}

func TestTreeRunsActionSuites(t *testing.T) {
	rep, err := Runner{Engine: Engine{Profile: V214}, ExactActions: true}.Tree(tree("actionTests:\n- action: pause\n  inputPath: testdata/in.yaml\n  expectedOutputPath: testdata/in.yaml\n", nil), ".")
	if err != nil {
		t.Fatal(err)
	}
	if p, f := rep.Counts(); p != 0 || f != 1 {
		t.Errorf("want 0 passed, 1 failed; got %d, %d", p, f)
	}
}

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct{ name, a, b, want string }{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"change in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"},
		{"insert at start", "b\n", "a\nb\n", "--- a\n+++ b\n@@ -1 +1,2 @@\n+a\n b\n"},
		{"delete all", "a\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n"},
		{"no final newline", "a", "b", "--- a\n+++ b\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnifiedDiff(tc.a, tc.b, "a", "b"); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	in := map[string]any{"kind": "Deployment", "a": nil, "n": int64(2),
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			"kubectl.kubernetes.io/restartedAt": "2030-01-01T00:00:00Z", "keep": "x"}}}}}
	got := Normalize(in)
	if _, ok := got["a"]; ok {
		t.Error("null field kept")
	}
	if got["n"] != float64(2) {
		t.Errorf("n = %#v", got["n"])
	}
	ann := got["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann["kubectl.kubernetes.io/restartedAt"] != "0001-01-01T00:00:00Z" || ann["keep"] != "x" {
		t.Errorf("annotations %v", ann)
	}
	if in["n"] != int64(2) {
		t.Error("input modified")
	}
}
