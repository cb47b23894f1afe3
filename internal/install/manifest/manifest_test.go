package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// Inputs whose document boundaries are easy to get wrong: helm's leading "---", separators in a row,
// trailing separators, comment-only documents, CRLF, no final newline, a separator with a comment.
var splitCases = map[string]string{
	"helm template":             "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: A\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: B\n",
	"no leading separator":      "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n",
	"separators in a row":       "---\n---\napiVersion: v1\nkind: A\n---\n---\n---\napiVersion: v1\nkind: B\n",
	"trailing separator":        "apiVersion: v1\nkind: A\n---\n",
	"two trailing separators":   "apiVersion: v1\nkind: A\n---\n---\n",
	"separator then blank line": "apiVersion: v1\nkind: A\n---\n\n",
	"comment-only document":     "# just a comment\n---\napiVersion: v1\nkind: A\n",
	"separator with comment":    "apiVersion: v1\nkind: A\n--- # next\napiVersion: v1\nkind: B",
	"crlf":                      "---\r\napiVersion: v1\r\nkind: A\r\n---\r\napiVersion: v1\r\nkind: B\r\n",
	"json":                      "{\"apiVersion\": \"v1\",\n \"kind\": \"A\"}\n",
	"empty":                     "",
	"only separators":           "---\n---\n",
	"blank lines":               "\n\napiVersion: v1\nkind: A\n\n\n",
}

// The splitter must cut exactly where apimachinery's YAMLReader does (so "document N" in messages keeps
// its meaning), and Stream.Bytes must give the input back byte for byte.
func TestSplitMatchesYAMLReaderAndRoundTrips(t *testing.T) {
	for name, in := range splitCases {
		t.Run(name, func(t *testing.T) {
			var want []string
			r := yaml.NewYAMLReader(bufio.NewReader(strings.NewReader(in)))
			for {
				c, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, string(c))
			}
			s, err := DecodeStream("in", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Docs) != len(want) {
				t.Fatalf("%d documents, YAMLReader returns %d: %q", len(s.Docs), len(want), want)
			}
			for i, d := range s.Docs {
				// YAMLReader drops consumed separators and normalises line ends; compare content lines only.
				got := strings.ReplaceAll(string(d.Raw), "\r\n", "\n")
				w := strings.TrimPrefix(want[i], "---\n")
				for strings.HasPrefix(w, "---") {
					w = w[strings.Index(w, "\n")+1:]
				}
				if strings.TrimRight(got, "\n") != strings.TrimRight(w, "\n") {
					t.Errorf("document %d: %q, YAMLReader %q", i+1, got, want[i])
				}
				if d.Doc != i+1 {
					t.Errorf("document %d numbered %d", i+1, d.Doc)
				}
			}
			if got := string(s.Bytes()); got != in {
				t.Errorf("round trip:\n got %q\nwant %q", got, in)
			}
		})
	}
}

func TestDecodeKeepsRawAndComments(t *testing.T) {
	in := "---\n# Source: shop/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # inline\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"
	objs, err := Decode("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("want 3 objects, got %d", len(objs))
	}
	if !bytes.HasPrefix(objs[0].Raw, []byte("# Source: shop/templates/cm.yaml\n")) || !bytes.Contains(objs[0].Raw, []byte("# inline")) {
		t.Errorf("first object lost its comments: %q", objs[0].Raw)
	}
	if objs[1].Item != 1 || objs[2].Item != 2 || !bytes.Equal(objs[1].Raw, objs[2].Raw) {
		t.Errorf("list items should share their document's Raw: %+v", objs[1:])
	}
	if got := objs[2].Where(); got != "in.yaml (document 2, item 2)" {
		t.Errorf("Where() = %q", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"bad separator", "apiVersion: v1\nkind: A\n---foo\nkind: B\n", "in (document 1): invalid Yaml document separator: foo"},
		{"malformed", "apiVersion: v1\nkind: A\n---\nkind: [\n", "in (document 2, line 4): did not find expected node content"},
		{"error line counts from the file's start", "# c\napiVersion: v1\nkind: A\n---\n---\n# c\napiVersion: v1\nkind: B\nmetadata: {name: [\n", "in (document 2, line 9): did not find expected"},
		{"a list", "- a\n- b\n", "in (document 1, line 1): not a Kubernetes object: the document is a list"},
		{"a JSON array", "---\n[1, 2]\n", "in (document 1, line 2): not a Kubernetes object: the document is a list"},
		{"a string", "hello\n", "in (document 1, line 1): not a Kubernetes object: the document is a string"},
		{"no kind", "---\napiVersion: v1\nmetadata: {name: x}\n", "in (document 1): not a Kubernetes object: missing or non-string kind"},
		{"list item", "apiVersion: v1\nkind: List\nitems:\n- 3\n", "in (document 1, item 1): item is not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("in", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadStreamsFilesFoldersStdin(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"b.yaml":     "apiVersion: v1\nkind: B\n",
		"a.yml":      "apiVersion: v1\nkind: A\n",
		"notes.txt":  "not yaml",
		"sub/c.json": `{"apiVersion": "v1", "kind": "C"}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	streams, err := ReadStreams([]string{dir, "-"}, strings.NewReader("apiVersion: v1\nkind: D\n"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range streams {
		for _, o := range s.Objects() {
			kinds = append(kinds, o.Kind())
		}
	}
	if got := strings.Join(kinds, ","); got != "A,B,C,D" {
		t.Errorf("kinds in read order = %s, want A,B,C,D (folder in lexical order, then stdin)", got)
	}
	if streams[3].Source != "-" {
		t.Errorf("stdin source = %q", streams[3].Source)
	}
	if _, err := ReadStreams([]string{filepath.Join(dir, "nope.yaml")}, nil); err == nil {
		t.Error("a missing file must fail")
	}
}

// A JSON List read item by item must give the objects the general (sigs.k8s.io/yaml) decoding gives, in
// the same order, with the same Where, and Header must agree with them.
func TestJSONListItemsMatchGeneralDecode(t *testing.T) {
	for name, in := range map[string]string{
		"kubectl":           `{"apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A", "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"}}, "spec": {"n": [1, null, 2.5], "s": "\u00e9\n"}}, {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "b"}, "status": null}], "kind": "List", "metadata": {"resourceVersion": ""}}`,
		"kind first":        `{"kind": "RolloutList", "apiVersion": "argoproj.io/v1alpha1", "items": [{"apiVersion": "v1", "kind": "A", "metadata": null}]}`,
		"escaped key":       `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "k\u0069nd": "A"}]}`,
		"repeated item key": `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A", "kind": "B"}]}`,
		"empty items":       `{"kind": "List", "apiVersion": "v1", "items": []}`,
		"null items":        `{"kind": "List", "apiVersion": "v1", "items": null}`,
		"not a List":        `{"kind": "Thing", "apiVersion": "v1", "items": [1, 2]}`,
		"yaml flow":         `{kind: List, apiVersion: v1, items: [{apiVersion: v1, kind: A, metadata: {name: a}}]}`,
		"yaml flow item":    `{"kind": "List", "apiVersion": "v1", "items": [{apiVersion: v1, kind: A}, {"apiVersion": "v1", "kind": "B"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr := decodeGeneral("in.json", 1, 1, []byte(in))
			var got []Object
			var gotErr error
			for _, u := range planDocument("in.json", 1, 1, []byte(in)) {
				objs, err := u.Decode()
				if err != nil {
					gotErr = err
					break
				}
				got = append(got, objs...)
				if h, _, ok, err := u.Header(); ok && err == nil {
					if h.APIVersion() != objs[0].APIVersion() || h.Kind() != objs[0].Kind() || h.Name() != objs[0].Name() || h.Namespace() != objs[0].Namespace() || h.Where() != objs[0].Where() {
						t.Errorf("header %v, object %v", h.Object, objs[0].Object)
					}
				}
			}
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, general decoding %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("objects differ:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// Errors in a JSON List name the item, and the first bad item in input order is the one reported.
func TestJSONListErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no kind", `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A"}, {"apiVersion": "v1"}]}`, "in.json (document 1, item 2): not a Kubernetes object: missing or non-string kind"},
		{"not an object", `{"kind": "List", "apiVersion": "v1", "items": [3]}`, "in.json (document 1, item 1): item is not an object"},
		{"metadata", `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A", "metadata": []}]}`, "in.json (document 1, item 1): metadata is not an object"},
		{"malformed", `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A", "spec": {"a": [1,}}]}`, "in.json (document 1): yaml: did not find expected node content"},
		{"too deep", `{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "A", "spec": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}]}`, "in.json (document 1): yaml: exceeded max depth of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader([]string{"-"}, strings.NewReader(tc.in))
			var err error
			for {
				u, ok, e := r.Next()
				if e != nil || !ok {
					err = e
					break
				}
				// As the consumers do: a split unit that fails leaves the verdict to the whole document.
				_, _, hok, herr := u.Header()
				if hok && herr == nil {
					_, herr = u.Decode()
				} else if !hok {
					_, herr = u.Decode()
				}
				if herr != nil {
					if u.Item > 0 {
						_, herr = u.DecodeDocument()
					}
					err = herr
					break
				}
			}
			if err == nil || !strings.Contains(strings.Replace(err.Error(), "-", "in.json", 1), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A YAML List is cut into items only where that cannot change what it means: the consumers' outcome
// (decodeDocument) is always that of the general decoding, including where goyaml lets a quoted scalar
// or a flow mapping go on in the first column, and the kubectl form is actually cut.
func TestYAMLListCutsNeverChangeTheOutcome(t *testing.T) {
	kubectl := "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n  metadata:\n    name: a\n  data:\n    s: |\n      line one\n      line two\n- apiVersion: v1\n  kind: B\n  metadata: {name: b}\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
	for name, tc := range map[string]struct {
		in  string
		cut bool
	}{
		"kubectl":                      {kubectl, true},
		"crlf":                         {strings.ReplaceAll(kubectl, "\n", "\r\n"), true},
		"kind first":                   {"kind: RolloutList\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n", true},
		"quoted scalar in column one":  {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n  x: \"abc\n- b: 2\"\n- apiVersion: v1\n  kind: C\nkind: List\n", true},
		"flow mapping in column one":   {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n  x: {p: 1,\nq: 2}\nkind: List\n", true},
		"alias across items":           {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n  metadata: &m {name: a}\n- apiVersion: v1\n  kind: B\n  metadata: *m\nkind: List\n", true},
		"header scalar swallows items": {"apiVersion: v1\na: \"x\nitems:\n- apiVersion: v1\n  kind: A\nb: y\"\nkind: List\n", false},
		"kind swallowed by an item":    {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n  x: \"abc\nkind: List\ny: z\"\n", true},
		"comment in column one":        {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n# note\n- apiVersion: v1\n  kind: B\nkind: List\n", false},
		"indented items":               {"apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: A\nkind: List\n", false},
		"not a list":                   {"apiVersion: v1\nitems:\n- a: 1\nkind: Thing\n", false},
		"item not an object":           {"apiVersion: v1\nitems:\n- 3\nkind: List\n", true},
		"item without kind":            {"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: A\n- apiVersion: v1\nkind: List\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			units := planDocument("in.yaml", 1, 1, []byte(tc.in))
			if cut := len(units) > 1 || units[0].Item > 0; cut != tc.cut {
				t.Errorf("cut into %d units, want cut=%v", len(units), tc.cut)
			}
			want, wantErr := decodeGeneral("in.yaml", 1, 1, []byte(tc.in))
			got, gotErr := decodeDocument("in.yaml", 1, 1, []byte(tc.in))
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeDocument %v %v\ngeneral decoding %v %v", got, gotErr, want, wantErr)
			}
		})
	}
}

// TestReaderSources: Sources names every file read, in input order, an empty one (no document at all)
// included, and stdin as "-".
func TestReaderSources(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.yaml": "", "b.yaml": "apiVersion: v1\nkind: A\n", "c.json": "# only a comment\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{dir}, []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.json")}},
		{[]string{filepath.Join(dir, "a.yaml"), "-"}, []string{filepath.Join(dir, "a.yaml"), "-"}},
	} {
		r := NewReader(tc.paths, strings.NewReader(""))
		for {
			_, ok, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
		if got := r.Sources(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: Sources %v, want %v", tc.paths, got, tc.want)
		}
	}
}

// TestEmptyList: a List without items is one unit that knows it is an empty List; an empty document, an
// object and a List with items are not.
func TestEmptyList(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"YAML List, items []", "apiVersion: v1\nkind: List\nitems: []\n", true},
		{"YAML List, items null", "apiVersion: v1\nkind: RolloutList\nitems:\n", true},
		{"JSON List", `{"apiVersion": "v1", "kind": "List", "items": []}`, true},
		{"List without items", "apiVersion: v1\nkind: List\n", false},
		{"empty document", "# nothing\n", false},
		{"a ConfigMap with items", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nitems: []\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader([]string{"-"}, strings.NewReader(tc.body))
			u, ok, err := r.Next()
			if err != nil || !ok {
				t.Fatalf("Next: ok %v, %v", ok, err)
			}
			if got := u.EmptyList(); got != tc.want {
				t.Errorf("EmptyList() = %v, want %v", got, tc.want)
			}
		})
	}
}
