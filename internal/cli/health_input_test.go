package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthInputErrors: an input without objects is an error naming the file, alone or beside other
// files (whose objects are still evaluated, exit 1, as for a stray document); a kind no script here
// covers is listed as not evaluated and exits 0 (README: exit 0 once every object is read).
func TestHealthInputErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.yaml", "")
	comments := write("comments.yaml", "# nothing rendered\n---\n")
	emptyList := write("empty-list.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
	nullItems := write("null-items.yaml", "apiVersion: v1\nkind: RolloutList\nitems:\nmetadata: {resourceVersion: \"1\"}\n")
	emptyJSONList := `{"apiVersion": "v1", "kind": "List", "items": [], "metadata": {"resourceVersion": ""}}`
	deployment := write("deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n")
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a-empty.yaml": "", "b-run.json": mustRead(t, "testdata/run.json")} {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const run2 = "testdata/run.json"
	noObjects := ": no Kubernetes objects in the input: the file is empty (or holds only comments, --- or null)"
	for _, tc := range []struct {
		name    string
		args    []string
		stdin   string
		code    int
		wantOut []string // substrings of stdout; none: stdout is empty
		wantErr []string // lines of stderr, in order; none: stderr is empty
	}{
		{name: "empty file", args: []string{"-f", empty}, code: 1, wantErr: []string{"Error: " + empty + noObjects}},
		{name: "comments only", args: []string{"-f", comments}, code: 1, wantErr: []string{"Error: " + comments + noObjects}},
		{name: "empty stdin", args: []string{"-f", "-"}, code: 1,
			wantErr: []string{"Error: -: no Kubernetes objects in the input: standard input is empty (or holds only comments, --- or null)"}},
		{name: "two empty files", args: []string{"-f", empty, "-f", comments}, code: 1,
			wantErr: []string{"Error: " + empty + noObjects, "Error: " + comments + noObjects}},
		{name: "empty file before a good one", args: []string{"-f", empty, "-f", run2}, code: 1,
			wantOut: []string{"run-2", "Healthy"}, wantErr: []string{"Error: " + empty + noObjects}},
		{name: "empty file after a good one, json", args: []string{"-f", run2, "-f", empty, "-o", "json"}, code: 1,
			wantOut: []string{`"name": "run-2"`}, wantErr: []string{"Error: " + empty + noObjects}},
		{name: "empty file in a folder", args: []string{"-f", folder}, code: 1,
			wantOut: []string{"run-2"}, wantErr: []string{"Error: " + filepath.Join(folder, "a-empty.yaml") + noObjects}},
		// kubectl get on a cluster without any of the kinds: an answer, exit 0, nothing on stdout in a
		// table, an empty array in json and yaml, and a note on stderr.
		{name: "empty List: exit 0", args: []string{"-f", emptyList}, code: 0, wantErr: []string{emptyList + ": an empty List: no objects to evaluate"}},
		{name: "List with null items", args: []string{"-f", nullItems}, code: 0, wantErr: []string{nullItems + ": an empty List: no objects to evaluate"}},
		{name: "empty JSON List on stdin, json", args: []string{"-f", "-", "-o", "json"}, stdin: emptyJSONList, code: 0,
			wantOut: []string{"[]\n"}, wantErr: []string{"-: an empty List: no objects to evaluate"}},
		{name: "empty List, yaml", args: []string{"-f", emptyList, "-o", "yaml"}, code: 0,
			wantOut: []string{"[]\n"}, wantErr: []string{emptyList + ": an empty List: no objects to evaluate"}},
		{name: "empty List beside a good file", args: []string{"-f", emptyList, "-f", run2}, code: 0,
			wantOut: []string{"run-2"}, wantErr: []string{emptyList + ": an empty List: no objects to evaluate"}},
		{name: "empty List beside an empty file", args: []string{"-f", emptyList, "-f", empty}, code: 1,
			wantErr: []string{emptyList + ": an empty List: no objects to evaluate", "Error: " + empty + noObjects}},
		{name: "Deployment only: not evaluated, exit 0", args: []string{"-f", deployment}, code: 0,
			wantOut: []string{"Deployment", "not evaluated: no script here for apps/Deployment; Argo CD uses gitops-engine's built-in Go health check"}},
		{name: "Deployment only, json", args: []string{"-f", deployment, "-o", "json"}, code: 0,
			wantOut: []string{`"status": ""`, `"script": "none"`, "not evaluated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.stdin, append([]string{"health"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if len(tc.wantOut) == 0 && out != "" {
				t.Errorf("stdout should be empty, got:\n%s", out)
			}
			want := ""
			if len(tc.wantErr) > 0 {
				want = strings.Join(tc.wantErr, "\n") + "\n"
			}
			if errOut != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNoObjectsNamesTheInput: every verb that reads objects names the input that had none.
func TestNoObjectsNamesTheInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"health", "-f", empty},
		{"inspect", "-f", empty},
		{"hooks", "-f", empty},
		{"scripts", "--argocd-cm", "testdata/argocd-cm-custom.yaml", "-f", empty},
	} {
		code, out, errOut := run(t, "", args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "Error: "+empty+": no Kubernetes objects in the input") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestHealthFileColumn: rows read from more than one file name their file (a FILE column in the table;
// json and yaml always carry file), so equal rows from two files can be told apart.
func TestHealthFileColumn(t *testing.T) {
	dir := t.TempDir()
	run2 := mustRead(t, "testdata/run.json")
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(run2), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, tc := range []struct {
		name string
		args []string
		want string // exact stdout
	}{
		{"a folder of two files", []string{"-f", dir},
			"FILE" + strings.Repeat(" ", len(a)-2) + "KIND         NAMESPACE  NAME   STATUS   MESSAGE\n" +
				a + "  AnalysisRun  -          run-2  Healthy  Analysis run completed successfully\n" +
				b + "  AnalysisRun  -          run-2  Healthy  Analysis run completed successfully\n"},
		{"one file: no FILE column", []string{"-f", a},
			"KIND         NAMESPACE  NAME   STATUS   MESSAGE\nAnalysisRun  -          run-2  Healthy  Analysis run completed successfully\n"},
		{"stdin beside a file", []string{"-f", "-", "-f", a},
			"FILE" + strings.Repeat(" ", len(a)-2) + "KIND         NAMESPACE  NAME   STATUS   MESSAGE\n" +
				"-" + strings.Repeat(" ", len(a)+1) + "AnalysisRun  -          run-2  Healthy  Analysis run completed successfully\n" +
				a + "  AnalysisRun  -          run-2  Healthy  Analysis run completed successfully\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, run2, append([]string{"health"}, tc.args...)...)
			if code != 0 || out != tc.want {
				t.Errorf("exit %d, stderr %q\nstdout:\n%s\nwant:\n%s", code, errOut, out, tc.want)
			}
		})
	}
	for _, format := range []string{"json", "yaml"} {
		code, out, _ := run(t, "", "health", "-f", a, "-o", format)
		want := `"file": "` + a + `"`
		if format == "yaml" {
			want = "file: " + a + "\n"
		}
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("-o %s: exit %d, no %q in:\n%s", format, code, want, out)
		}
	}
}
