package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, &Options{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestHealthCommand(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		stdin       string
		code        int
		wantOut     []string // substrings of stdout
		wantErr     string   // substring of stderr
		emptyStdout bool
	}{
		{name: "example table", args: []string{"health", "-f", "../../testdata/examples/canary-analysis.yaml"},
			wantOut: []string{"Rollout      shop       checkout", "Degraded", "Step analysis run checkout-7bb9d897fd-7-2 Failed", "Background analysis run payments-6f7c8d9b5-12 Running",
				// The AnalysisRun says why (issue 59): the last value and the condition it missed.
				`AnalysisRun  shop       checkout-7bb9d897fd-7-2  Degraded     Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1); last value [0.8972] missed successCondition "result[0] >= 0.95"`}},
		{name: "list and kind without script", args: []string{"health", "-f", "testdata/list.yaml"},
			wantOut: []string{"run-1", "Suspended", "Deployment   shop       web    -", "not evaluated: no script here for apps/Deployment; Argo CD uses gitops-engine's built-in Go health check"}},
		{name: "json from stdin", args: []string{"health", "-f", "-", "-o", "json"}, stdin: `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "s"}, "status": {"phase": "Running"}}`,
			wantOut: []string{`"status": "Progressing"`, `"message": "Analysis run is running"`, `"script": "bundled"`}},
		{name: "yaml output", args: []string{"health", "-f", "testdata/run.json", "-o", "yaml"},
			wantOut: []string{"status: Healthy", "name: run-2"}},
		{name: "argocd-cm scripts replace bundled ones", args: []string{"health", "-f", "testdata/list.yaml", "--argocd-cm", "testdata/argocd-cm-custom.yaml"},
			wantOut: []string{"custom run-1", "dep"}},
		{name: "v3 profile", args: []string{"health", "-f", "testdata/run.json", "--argocd-version", "v3"}, wantOut: []string{"Healthy"}},
		{name: "missing file", args: []string{"health", "-f", "testdata/nope.yaml"}, code: 1, wantErr: "testdata/nope.yaml", emptyStdout: true},
		{name: "malformed yaml", args: []string{"health", "-f", "testdata/malformed.yaml"}, code: 1, wantErr: "testdata/malformed.yaml (document 1, line 4)", emptyStdout: true},
		{name: "document without kind", args: []string{"health", "-f", "testdata/nokind.yaml"}, code: 1, wantErr: "testdata/nokind.yaml (document 2): not a Kubernetes object: missing or non-string kind"},
		{name: "not an argocd-cm", args: []string{"health", "-f", "testdata/run.json", "--argocd-cm", "testdata/not-argocd-cm.yaml"}, code: 1, wantErr: `not an argocd-cm: ConfigMap is named "my-config"`, emptyStdout: true},
		{name: "not a ConfigMap", args: []string{"health", "-f", "testdata/run.json", "--argocd-cm", "testdata/run.json"}, code: 1, wantErr: "not an argocd-cm", emptyStdout: true},
		{name: "syntax error in argocd-cm script", args: []string{"health", "-f", "testdata/run.json", "--argocd-cm", "testdata/argocd-cm-syntax.yaml"}, code: 1, wantErr: "argocd-cm-syntax.yaml: health script for argoproj.io/AnalysisRun", emptyStdout: true},
		{name: "runtime error: no string library in argocd-cm", args: []string{"health", "-f", "testdata/run.json", "--argocd-cm", "testdata/argocd-cm-runtime.yaml"}, code: 1, wantErr: "testdata/run.json (document 1): AnalysisRun run-2: health script failed", emptyStdout: true},
		{name: "key Argo CD rejects", args: []string{"health", "-f", "testdata/run.json", "--argocd-cm", "testdata/argocd-cm-badkey.yaml"}, code: 1, wantErr: "resource customization type healthz not supported", emptyStdout: true},
		{name: "no -f", args: []string{"health"}, code: 2, wantErr: "at least one -f", emptyStdout: true},
		{name: "bad output", args: []string{"health", "-f", "testdata/run.json", "-o", "xml"}, code: 2, wantErr: "table, json, yaml", emptyStdout: true},
		{name: "bad version", args: []string{"health", "-f", "testdata/run.json", "--argocd-version", "v4"}, code: 2, wantErr: "v2.14, v3.2, v3.6", emptyStdout: true},
		{name: "unknown command", args: []string{"healthz"}, code: 2, wantErr: "unknown command", emptyStdout: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tc.wantErr != "" && !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if tc.emptyStdout && out != "" {
				t.Errorf("stdout should be empty on error, got:\n%s", out)
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stack trace on stderr:\n%s", errOut)
			}
		})
	}
}

func TestHealthJSONShape(t *testing.T) {
	code, out, _ := run(t, "", "health", "-f", "../../testdata/examples/canary-analysis.yaml", "-o", "json")
	if code != 0 {
		t.Fatal(code)
	}
	var rows []map[string]string
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("want 3 rows, got %d", len(rows))
	}
	for _, key := range []string{"apiVersion", "kind", "namespace", "name", "status", "message"} {
		if _, ok := rows[0][key]; !ok {
			t.Errorf("row lacks %q: %v", key, rows[0])
		}
	}
	if rows[0]["status"] != "Degraded" || !strings.Contains(rows[0]["message"], `Metric "success-rate"`) {
		t.Errorf("unexpected first row %v", rows[0])
	}
}

func TestVerifyCommand(t *testing.T) {
	code, out, errOut := run(t, "", "verify")
	if code != 0 {
		t.Fatalf("bundled suites: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasSuffix(out, " 0 failed\n") || strings.HasPrefix(out, "0 passed") {
		t.Errorf("want a final 'N passed, 0 failed' line, got %q", out)
	}

	code, out, _ = run(t, "", "verify", "testdata/suite-failing")
	if code != 1 {
		t.Fatalf("failing suite: exit %d, want 1", code)
	}
	if !strings.Contains(out, "FAIL testdata/suite-failing/argoproj.io/AnalysisRun/health_test.yaml: tests[1] (testdata/run.json): want Degraded \"wrong on purpose\", got Healthy \"ok\"") {
		t.Errorf("failure not reported:\n%s", out)
	}
	if !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Errorf("summary: %q", out)
	}

	empty := t.TempDir()
	code, out, errOut = run(t, "", "verify", empty)
	if code != 0 || errOut != empty+": no health_test.yaml or action_test.yaml found, nothing to verify\n" || out != "" {
		t.Errorf("a tree without suites is a one-line notice: exit %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = run(t, "", "verify", "testdata/nope")
	if code != 1 || !strings.Contains(errOut, "testdata/nope") {
		t.Errorf("missing dir: exit %d, %s", code, errOut)
	}
}

// TestNoObjects: input without a single object is one error for every verb that reads objects, never an
// empty table or a JSON null with exit 0.
func TestNoObjects(t *testing.T) {
	for _, in := range []string{"", "---\n", "# only a comment\n", "null\n", "---\n# c\n---\n"} {
		for _, args := range [][]string{
			{"health", "-f", "-"}, {"health", "-f", "-", "-o", "json"},
			{"inspect", "-f", "-"}, {"inspect", "-f", "-", "-o", "json"},
			{"hooks", "-f", "-"},
		} {
			code, stdout, stderr := run(t, in, args...)
			if code != 1 || stdout != "" || !strings.Contains(stderr, "no Kubernetes objects in the input") {
				t.Errorf("%v on %q: exit %d, stdout %q, stderr %q", args, in, code, stdout, stderr)
			}
		}
	}
}

// TestErrorLines: usage errors point at the verb's own help; input that is not an object says what it
// is and where, with the file line of a YAML error.
func TestErrorLines(t *testing.T) {
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"", []string{"health", "--bogus"}, 2, "Run 'analysis-health health --help' for usage."},
		{"", []string{"generate", "--format", "helm", "--project", "x"}, 2, "Run 'analysis-health generate --help' for usage."},
		{"", []string{"bogus"}, 2, "Run 'analysis-health --help' for usage."},
		{"[1, 2]\n", []string{"health", "-f", "-"}, 1, "Error: - (document 1, line 1): not a Kubernetes object: the document is a list"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: [\n", []string{"health", "-f", "-"}, 1, "Error: - (document 2, line 7): did not find expected"},
	} {
		code, _, stderr := run(t, tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "map[string]interface") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestFolderWithStrayFile: a folder with one file that is not a Kubernetes object (Argo Rollouts'
// examples/ has a dashboard.json) is evaluated all the same; the stray file is reported and the exit
// status is 1.
func TestFolderWithStrayFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"dashboard.json": `{"annotations": {"list": []}, "panels": []}`,
		"rollout.yaml":   "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: checkout, namespace: shop}\nspec: {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, output := range []string{"table", "json"} {
		code, stdout, stderr := run(t, "", "health", "-f", dir, "-o", output)
		if code != 1 || !strings.Contains(stdout, "checkout") ||
			!strings.Contains(stderr, filepath.Join(dir, "dashboard.json")+" (document 1): not a Kubernetes object") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("-o %s: exit %d\nstdout %s\nstderr %s", output, code, stdout, stderr)
		}
	}
}

// TestHealthWithoutScript: for a kind without a script here, health never claims there is no health when
// Argo CD has one: it names Argo CD's built-in, with the bundled scripts and with an argocd-cm alike.
func TestHealthWithoutScript(t *testing.T) {
	cm := filepath.Join(t.TempDir(), "argocd-cm.yaml")
	code, out, stderr := run(t, "", "generate", "--format", "argocd-cm", "--out", cm)
	if code != 0 {
		t.Fatalf("generate: %d %s %s", code, out, stderr)
	}
	for _, v := range []string{"v2.14", "v3.2", "v3.6"} {
		for _, extra := range [][]string{nil, {"--argocd-cm", cm}} {
			args := append([]string{"health", "-f", "testdata/no-script-kinds.yaml", "--argocd-version", v, "-o", "json"}, extra...)
			code, out, stderr := run(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: %d %s", args, code, stderr)
			}
			var rows []HealthRow
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
				t.Fatalf("%v: %v %s", args, err, out)
			}
			for i, want := range []string{
				"Argo CD uses gitops-engine's built-in Go health check",
				"Argo CD " + v + " uses its built-in resource_customizations/cert-manager.io/Certificate/health.lua",
				"no health script for ConfigMap, and Argo CD " + v + " has no built-in one",
			} {
				if !strings.Contains(rows[i].Message, want) || rows[i].Status != "" {
					t.Errorf("%v: %s %s: %q, want %q", args, rows[i].Kind, rows[i].Status, rows[i].Message, want)
				}
			}
		}
	}
}
