// Package manifest reads Kubernetes objects from files, folders and standard input: multi-document YAML
// as `helm template` and `kustomize build` print it, JSON, and `kind: List` as `kubectl get -o yaml`
// prints it. Every error names the source and the document.
//
// Besides the decoded objects it keeps every document's bytes as read (Object.Raw, Stream), so that a
// post-renderer can pass its input through unchanged, comments and document order included.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// Object is one decoded object and where it came from.
type Object struct {
	Source string // file path, or "-" for standard input
	Doc    int    // 1-based document index within Source
	Item   int    // 1-based index inside a List, 0 otherwise
	Object map[string]any
	// Raw is the document's bytes as read, comments included and separator lines excluded; every item of
	// a List shares its document's Raw.
	Raw []byte
}

// Where names the object's origin for error messages: "file.yaml (document 2, item 3)".
func (o Object) Where() string {
	s := fmt.Sprintf("%s (document %d", o.Source, o.Doc)
	if o.Item > 0 {
		s += fmt.Sprintf(", item %d", o.Item)
	}
	return s + ")"
}

// APIVersion, Kind, Namespace and Name read the identifying fields; they are empty when absent.
func (o Object) APIVersion() string { return str(o.Object["apiVersion"]) }
func (o Object) Kind() string       { return str(o.Object["kind"]) }
func (o Object) Name() string       { return str(meta(o.Object)["name"]) }
func (o Object) Namespace() string  { return str(meta(o.Object)["namespace"]) }

// Group is the API group of apiVersion ("" for core).
func (o Object) Group() string {
	if i := strings.Index(o.APIVersion(), "/"); i >= 0 {
		return o.APIVersion()[:i]
	}
	return ""
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Read loads every object from the given paths; "-" reads stdin. Folders are walked for .yaml, .yml and
// .json files in lexical order.
func Read(paths []string, stdin io.Reader) ([]Object, error) {
	streams, err := ReadStreams(paths, stdin)
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, s := range streams {
		out = append(out, s.Objects()...)
	}
	return out, nil
}

// ReadStreams is Read keeping each file (or stdin) as a Stream, in the order read.
func ReadStreams(paths []string, stdin io.Reader) ([]Stream, error) {
	var out []Stream
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				return nil, errors.New("-: no standard input")
			}
			raw, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("-: %w", err)
			}
			s, err := DecodeStream("-", raw)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		files, err := expand(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			s, err := DecodeStream(f, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func expand(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(f)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, f)
			}
		}
		return nil
	})
	sort.Strings(files)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: no .yaml, .yml or .json files", p)
	}
	return files, err
}

// Decode splits raw into documents and decodes each; empty documents are skipped, a `kind: List` (or any
// kind ending in List with items) is flattened.
func Decode(source string, raw []byte) ([]Object, error) {
	s, err := DecodeStream(source, raw)
	if err != nil {
		return nil, err
	}
	return s.Objects(), nil
}

// Stream is one source (a file or stdin) as read: its documents in order, each with the exact bytes it
// was read from, so that Bytes gives the input back byte for byte.
type Stream struct {
	Source string
	Docs   []Document
	// Tail holds separator lines after the last document ("---" at the end of a file).
	Tail []byte
}

// Document is one YAML document of a Stream. Doc numbers documents as error messages do (the way
// k8s.io/apimachinery's YAMLReader splits a stream), so an empty or comment-only document still counts.
type Document struct {
	Doc int
	// Lead holds the separator lines ("---", "--- # comment") that precede the document.
	Lead []byte
	// Raw is the document's own lines, comments included.
	Raw []byte
	// Objects are what the document decodes to: none for an empty document, the items of a List.
	Objects []Object
}

// Bytes reassembles the stream exactly as it was read.
func (s Stream) Bytes() []byte {
	var b bytes.Buffer
	for _, d := range s.Docs {
		b.Write(d.Lead)
		b.Write(d.Raw)
	}
	b.Write(s.Tail)
	return b.Bytes()
}

// Objects lists the stream's objects in document order.
func (s Stream) Objects() []Object {
	var out []Object
	for _, d := range s.Docs {
		out = append(out, d.Objects...)
	}
	return out
}

// DecodeStream splits raw into documents exactly where k8s.io/apimachinery's YAMLReader does (a line
// starting with "---" followed only by blanks or a comment), keeping every byte, and decodes each document.
func DecodeStream(source string, raw []byte) (Stream, error) {
	chunks, tail, err := splitDocuments(raw)
	if err != nil {
		return Stream{}, fmt.Errorf("%s (document %d): %w", source, len(chunks)+1, err)
	}
	s := Stream{Source: source, Tail: tail}
	for i, c := range chunks {
		d := Document{Doc: i + 1, Lead: c.lead, Raw: c.body}
		objs, err := decodeDocument(source, d.Doc, c.body)
		if err != nil {
			return Stream{}, err
		}
		d.Objects = objs
		s.Docs = append(s.Docs, d)
	}
	return s, nil
}

type chunk struct{ lead, body []byte }

// splitDocuments reproduces the document boundaries of apimachinery's YAMLReader.Read, which error
// messages ("document N") have always counted: a separator line ends a non-empty document and is consumed;
// a separator met while no document is open (at the start, or right after another separator) is written
// into the next document, so "---\n---\nx" is two documents, the first one empty, and "x\n---\n" is one.
// Separator lines go to Lead and everything else to Raw, so re-emitting Lead+Raw gives the input back.
func splitDocuments(raw []byte) (chunks []chunk, tail []byte, err error) {
	var cur chunk
	open := false // YAMLReader's buffer.Len() != 0
	for len(raw) > 0 {
		n := bytes.IndexByte(raw, '\n') + 1
		if n == 0 {
			n = len(raw)
		}
		line := raw[:n]
		raw = raw[n:]
		if bytes.HasPrefix(line, []byte("---")) {
			if rest := strings.TrimSpace(string(line[3:])); rest != "" && rest[0] != '#' {
				return chunks, nil, fmt.Errorf("invalid Yaml document separator: %s", rest)
			}
			if open {
				chunks = append(chunks, cur)
				cur = chunk{lead: append([]byte(nil), line...)}
				open = false
				continue
			}
			cur.lead = append(cur.lead, line...)
			open = true
			continue
		}
		cur.body = append(cur.body, line...)
		open = true
	}
	if open {
		return append(chunks, cur), nil, nil
	}
	return chunks, cur.lead, nil
}

func decodeDocument(source string, doc int, body []byte) ([]Object, error) {
	if len(bytes.TrimSpace(stripComments(body))) == 0 {
		return nil, nil
	}
	var obj map[string]any
	if err := sigsyaml.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("%s (document %d): %w", source, doc, err)
	}
	if obj == nil {
		return nil, nil
	}
	o := Object{Source: source, Doc: doc, Object: obj, Raw: body}
	if items, isList := obj["items"]; isList && strings.HasSuffix(o.Kind(), "List") {
		list, ok := items.([]any)
		if !ok && items != nil {
			return nil, fmt.Errorf("%s: items is not a list", o.Where())
		}
		var out []Object
		for i, it := range list {
			m, ok := it.(map[string]any)
			item := Object{Source: source, Doc: doc, Item: i + 1, Object: m, Raw: body}
			if !ok {
				return nil, fmt.Errorf("%s: item is not an object", item.Where())
			}
			if err := item.validate(); err != nil {
				return nil, err
			}
			out = append(out, item)
		}
		return out, nil
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return []Object{o}, nil
}

func (o Object) validate() error {
	var missing []string
	if _, ok := o.Object["apiVersion"].(string); !ok || o.APIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if _, ok := o.Object["kind"].(string); !ok || o.Kind() == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: not a Kubernetes object: missing or non-string %s", o.Where(), strings.Join(missing, " and "))
	}
	if m, ok := o.Object["metadata"]; ok && m != nil {
		if _, ok := m.(map[string]any); !ok {
			return fmt.Errorf("%s: metadata is not an object", o.Where())
		}
	}
	return nil
}

func stripComments(chunk []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || string(t) == "---" {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
