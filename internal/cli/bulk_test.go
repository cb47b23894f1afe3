package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/bench/bulkgen"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// The parallel pipeline gives, for a List as kubectl prints it in JSON and in YAML, exactly the rows of
// evaluating every object one after the other, in input order, in every output format.
func TestHealthBulkMatchesSerial(t *testing.T) {
	raw, err := bulkgen.List(600)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "list.json")
	yamlFile := filepath.Join(dir, "list.yaml")
	y, err := sigsyaml.JSONToYAML(raw)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, jsonFile, raw)
	writeFile(t, yamlFile, y)

	// The reference decodes the List whole with sigs.k8s.io/yaml, as manifest did before it cut Lists.
	var list struct{ Items []map[string]any }
	if err := sigsyaml.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	var want []HealthRow
	for i, item := range list.Items {
		o := manifest.Object{Source: jsonFile, Doc: 1, Item: i + 1, Object: item}
		row, script, _ := newRow(o, bundledScripts, engine.Default)
		if script != "" {
			// The CLI's default profile, one object at a time.
			h, err := engine.Engine{Profile: engine.Default}.ResourceHealth(o.Object, script)
			if err != nil {
				t.Fatal(err)
			}
			row = row.with(o, h)
		}
		want = append(want, row)
	}
	for _, format := range []string{"json", "yaml", "table"} {
		for _, f := range []string{jsonFile, yamlFile} {
			for i := range want {
				want[i].File = f // the rows name the file they come from
			}
			var wantOut strings.Builder
			if err := writeRows(&wantOut, format, want, false); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := run(t, "", "health", "-f", f, "-o", format)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", f, code, errOut)
			}
			if out != wantOut.String() {
				t.Errorf("%s -o %s differs from serial evaluation", filepath.Base(f), format)
			}
		}
	}
	// And from stdin.
	if code, out, _ := run(t, string(raw), "health", "-f", "-", "-o", "json"); code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("stdin: exit %d", code)
	}
}

// An error anywhere in a bulk run (here the 300th of 600 items) is one line naming the file, document and
// item, exit 1, and nothing on stdout, although rows before it were ready long before.
func TestHealthBulkErrorLeavesStdoutEmpty(t *testing.T) {
	raw, err := bulkgen.List(600)
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	delete(list["items"].([]any)[299].(map[string]any), "kind")
	bad, _ := json.MarshalIndent(list, "", "    ")
	f := filepath.Join(t.TempDir(), "bad.json")
	writeFile(t, f, bad)
	for _, format := range []string{"table", "json", "yaml"} {
		code, out, errOut := run(t, "", "health", "-f", f, "-o", format)
		if code != 1 || out != "" {
			t.Errorf("-o %s: exit %d, stdout %d bytes; want exit 1 and nothing", format, code, len(out))
		}
		if want := fmt.Sprintf("Error: %s (document 1, item 300): not a Kubernetes object: missing or non-string kind\n", f); errOut != want {
			t.Errorf("-o %s: stderr %q, want %q", format, errOut, want)
		}
	}
}

// A YAML bomb or a document nested deeper than the decoders allow is a one-line error naming the file
// and document for every verb that reads manifests, and nothing else on stdout; the bomb is refused before it
// expands (billions of nodes from a few hundred bytes would exhaust any machine's memory).
func TestHostileInput(t *testing.T) {
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i := 1; i < 9; i++ {
		bomb += fmt.Sprintf("  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	deepYAML := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	deepJSON := `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "data": ` + strings.Repeat(`{"a": `, 50000) + "1" + strings.Repeat("}", 50000) + "}]}"
	dir := t.TempDir()
	for name, tc := range map[string]struct{ body, want string }{
		"bomb.yaml":      {"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n" + bomb, "(document 2): yaml: document contains excessive aliasing"},
		"deep.yaml":      {deepYAML, "(document 1, line 4): exceeded max depth of 10000"},
		"deep-list.json": {deepJSON, "(document 1): yaml: exceeded max depth of 10000"},
	} {
		f := filepath.Join(dir, name)
		writeFile(t, f, []byte(tc.body))
		for _, args := range [][]string{{"health", "-f", f}, {"inspect", "-f", f}, {"hooks", "--post-renderer", "-f", f}} {
			code, out, errOut := run(t, "", args...)
			// health evaluates the documents that decode (the bomb file's first one) and reports the rest.
			wantOut := args[0] == "health" && name == "bomb.yaml"
			if code != 1 || (out != "") != wantOut || !strings.HasPrefix(errOut, "Error: "+f+" ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s %s: exit %d, stdout %d bytes, stderr %q; want exit 1, nothing, one line with %q", args[0], name, code, len(out), errOut, tc.want)
			}
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// -o yaml prints exactly what sigs.k8s.io/yaml's Marshal prints for the rows, whatever the strings
// hold, in one chunk or many.
func TestYAMLRowsMatchSigsYAML(t *testing.T) {
	odd := []string{"", "true", "no", "1", "1.5", "~", "null", "a: b", "- x", "#c", "'q", "\"dq", "multi\nline\n", "trail ", " lead",
		"é ü 世界", "bad \xff\xfe byte", "<&>", strings.Repeat("long words ", 20), "{x}", "[y]", "*a", "&b", "!t", "%p", "@", "`", "a\tb", "---"}
	var rows []HealthRow
	for i := 0; i < 1200; i++ {
		s := odd[i%len(odd)]
		rows = append(rows, HealthRow{APIVersion: "v1", Kind: s, Namespace: odd[(i+3)%len(odd)], Name: fmt.Sprintf("%s-%d", s, i), Status: odd[(i+7)%len(odd)], Message: s + odd[(i+11)%len(odd)], Script: "bundled"})
	}
	for _, n := range []int{0, 1, 7, len(rows)} {
		want, err := sigsyaml.Marshal(rows[:n])
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if err := writeYAMLRows(&got, rows[:n]); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("%d rows differ from sigs.k8s.io/yaml's Marshal:\n got %.300q\nwant %.300q", n, got.String(), want)
		}
	}
}

// When an item of a List cut into items does not decode on its own (here a quoted scalar that goes on in
// the first column, so the cut is wrong), the rows of the items before it are dropped and the document is
// evaluated whole: the output is that of decoding it whole, although the units after it decode.
func TestHealthBulkFallsBackToTheWholeDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "- apiVersion: argoproj.io/v1alpha1\n  kind: AnalysisRun\n  metadata: {name: run-%02d}\n  status: {phase: Running}\n", i)
		if i == 30 {
			b.WriteString("  note: \"abc\n- apiVersion: argoproj.io/v1alpha1\n  kind: AnalysisRun\n  metadata: {name: phantom}\n  status: {phase: Failed}\"\n")
		}
	}
	b.WriteString("kind: List\n")
	f := filepath.Join(t.TempDir(), "list.yaml")
	writeFile(t, f, []byte(b.String()))
	code, out, errOut := run(t, "", "health", "-f", f, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []HealthRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 60 || strings.Contains(out, "phantom") {
		t.Fatalf("%d rows (want 60, no phantom item from the wrong cut):\n%s", len(rows), out)
	}
	for i, r := range rows {
		if r.Name != fmt.Sprintf("run-%02d", i) || r.Status != "Progressing" {
			t.Errorf("row %d: %+v", i, r)
		}
	}
}
