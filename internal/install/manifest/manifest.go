// Package manifest reads Kubernetes objects from files, folders and standard input: multi-document YAML
// as `helm template` and `kustomize build` print it, JSON, and `kind: List` as `kubectl get -o yaml`
// prints it. Every error names the source and the document.
//
// Besides the decoded objects it keeps every document's bytes as read (Object.Raw, Stream), so that a
// post-renderer can pass its input through unchanged, comments and document order included.
//
// Read and ReadStreams decode documents on every core. For inputs too big to hold decoded, Reader hands
// out units that decode on their own, in input order: whole documents, and the items of a List (JSON, or
// YAML as kubectl prints it), cut without decoding the rest; a cut that cannot be trusted for an item
// (ErrSplit) leaves the document to be decoded whole, so the outcome is always that of decoding each
// document whole.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/ordered"
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

// ErrNoObjects is the one error of every verb given input without a single object: an empty file, a
// lone ---, comments only, null or an empty List. That is almost always a broken pipeline, never a
// clean result (as a Config Management Plugin, passing it on would let Argo CD prune everything).
var ErrNoObjects = errors.New("no Kubernetes objects in the input")

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

// ReadStreams is Read keeping each file (or stdin) as a Stream, in the order read. Documents are decoded
// on every core; the first error in input order is returned.
func ReadStreams(paths []string, stdin io.Reader) ([]Stream, error) {
	return ReadStreamsKeeping(paths, stdin, nil)
}

// ReadStreamsKeeping is ReadStreams that replaces every decoded object by keep(object) as soon as it is
// decoded, on the decoding goroutine: a caller that needs all of a big input's documents at once, but
// only part of most objects, holds the input's bytes and those parts instead of every decoded map.
func ReadStreamsKeeping(paths []string, stdin io.Reader, keep func(Object) Object) ([]Stream, error) {
	var out []Stream
	r := NewReader(paths, stdin)
	r.opened = func(source string) { out = append(out, Stream{Source: source}) }
	r.closed = func(tail []byte) { out[len(out)-1].Tail = tail }
	next := func() (docJob, bool, error) {
		c, ok, err := r.nextChunk()
		return docJob{stream: len(out) - 1, source: r.source, c: c}, ok, err
	}
	decode := func(j docJob) (docJob, error) {
		objs, err := decodeDocument(j.source, j.c.doc, j.c.line, j.c.body)
		if keep != nil {
			for i := range objs {
				objs[i] = keep(objs[i])
			}
		}
		j.objs = objs
		return j, err
	}
	emit := func(j docJob) error {
		s := &out[j.stream]
		s.Docs = append(s.Docs, Document{Doc: j.c.doc, Lead: j.c.lead, Raw: j.c.body, Objects: j.objs})
		return nil
	}
	if err := ordered.Map(0, next, decode, emit); err != nil {
		return nil, err
	}
	return out, nil
}

type docJob struct {
	stream int
	source string
	c      chunk
	objs   []Object
}

// Reader reads sources one after the other and splits them into units that decode independently, for
// callers that process objects as they come rather than all at once. Each source is read whole (a List is
// one document anyway), its objects are decoded only when asked for, one unit at a time.
type Reader struct {
	paths  []string
	stdin  io.Reader
	files  []string // the rest of the current path's expansion
	split  *splitter
	source string
	units  []Unit
	// opened and closed, when set, see each source begin and end (with its tail).
	opened func(source string)
	closed func(tail []byte)
	// sources are the sources opened so far, in order (Sources).
	sources []string
	// fromDir is set while r.files came from walking a folder; unreadable holds the files of a folder
	// that could not be read (a dangling symlink, no permission), which Next skips.
	fromDir    bool
	unreadable []error
}

// Unreadable are the files found in a folder that could not be read (a dangling symlink, no
// permission), one error each naming the file: Next skips them and reads the rest, as a verb reports an
// empty or binary file beside the others.
func (r *Reader) Unreadable() []error { return r.unreadable }

// Sources lists the sources (files, "-") opened so far, in input order: once Next has returned ok false,
// every file the paths expand to, those without a single document included.
func (r *Reader) Sources() []string { return r.sources }

// NewReader reads paths in order; "-" reads stdin, folders are walked as Read walks them.
func NewReader(paths []string, stdin io.Reader) *Reader {
	return &Reader{paths: paths, stdin: stdin}
}

// Next returns the next unit in input order; ok is false after the last one.
func (r *Reader) Next() (u Unit, ok bool, err error) {
	for len(r.units) == 0 {
		c, ok, err := r.nextChunk()
		if err != nil || !ok {
			return Unit{}, ok, err
		}
		r.units = planDocument(r.source, c.doc, c.line, c.body)
	}
	u, r.units = r.units[0], r.units[1:]
	return u, true, nil
}

// nextChunk returns the next document, opening the next source when one ends.
func (r *Reader) nextChunk() (chunk, bool, error) {
	for {
		if r.split != nil {
			c, ok, err := r.split.next()
			if err != nil {
				return chunk{}, false, fmt.Errorf("%s (document %d): %w", r.source, r.split.doc+1, err)
			}
			if ok {
				return c, true, nil
			}
			if r.closed != nil {
				r.closed(r.split.tail)
			}
			r.split = nil
		}
		if err := r.open(); err != nil {
			return chunk{}, false, err
		}
		if r.split == nil {
			return chunk{}, false, nil
		}
	}
}

// open starts the next source, leaving r.split nil when there is none.
func (r *Reader) open() error {
	for len(r.files) == 0 {
		if len(r.paths) == 0 {
			return nil
		}
		p := r.paths[0]
		r.paths = r.paths[1:]
		if p == "-" {
			r.files, r.fromDir = []string{"-"}, false
			break
		}
		files, err := expand(p)
		if err != nil {
			return err
		}
		r.files = files
		if info, err := os.Stat(p); err == nil {
			r.fromDir = info.IsDir()
		}
	}
	f := r.files[0]
	r.files = r.files[1:]
	var raw []byte
	var err error
	if f == "-" {
		if r.stdin == nil {
			return errors.New("-: no standard input")
		}
		if raw, err = io.ReadAll(r.stdin); err != nil {
			return fmt.Errorf("-: %w", err)
		}
	} else if raw, err = os.ReadFile(f); err != nil {
		if !r.fromDir {
			return err
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		r.unreadable = append(r.unreadable, fmt.Errorf("%s: cannot read the file: %w", f, err))
		return r.open()
	}
	r.source, r.split = f, &splitter{raw: raw}
	r.sources = append(r.sources, f)
	if r.opened != nil {
		r.opened(f)
	}
	return nil
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
		if err != nil && f != p && d != nil && !d.IsDir() {
			files = append(files, f) // unreadable: reported when read
			return nil
		}
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
	sp := &splitter{raw: raw}
	s := Stream{Source: source}
	for {
		c, ok, err := sp.next()
		if err != nil {
			return Stream{}, fmt.Errorf("%s (document %d): %w", source, sp.doc+1, err)
		}
		if !ok {
			break
		}
		objs, err := decodeDocument(source, c.doc, c.line, c.body)
		if err != nil {
			return Stream{}, err
		}
		s.Docs = append(s.Docs, Document{Doc: c.doc, Lead: c.lead, Raw: c.body, Objects: objs})
	}
	s.Tail = sp.tail
	return s, nil
}

// chunk is one document as split: its separator lines and its own lines, both slices of the input.
type chunk struct {
	doc int
	// line is the 1-based line of the file that body starts on, for error messages.
	line       int
	lead, body []byte
}

// splitter reproduces the document boundaries of apimachinery's YAMLReader.Read, which error messages
// ("document N") have always counted: a separator line ends a non-empty document and is consumed; a
// separator met while no document is open (at the start, or right after another separator) is written
// into the next document, so "---\n---\nx" is two documents, the first one empty, and "x\n---\n" is one.
// Separator lines go to lead and everything else to body; both are slices of raw (a document's separator
// lines always come before its own lines), so nothing is copied and re-emitting lead+body gives the
// input back.
type splitter struct {
	raw []byte
	pos int
	doc int // documents returned so far
	// carry is where the separator that ended the last document starts: it opens the next one.
	carry int
	moved bool
	tail  []byte
	lines int // lines before pos
}

func (sp *splitter) next() (chunk, bool, error) {
	start, open := sp.pos, false
	if sp.moved {
		start, sp.moved = sp.carry, false
	}
	leadEnd, line := sp.pos, sp.lines+1
	for sp.pos < len(sp.raw) {
		n := bytes.IndexByte(sp.raw[sp.pos:], '\n') + 1
		if n == 0 {
			n = len(sp.raw) - sp.pos
		}
		text := sp.raw[sp.pos : sp.pos+n]
		if !bytes.HasPrefix(text, []byte("---")) {
			sp.pos += n
			sp.lines++
			open = true
			continue
		}
		if rest := strings.TrimSpace(string(text[3:])); rest != "" && rest[0] != '#' {
			return chunk{}, false, fmt.Errorf("invalid Yaml document separator: %s", rest)
		}
		if open {
			sp.doc++
			c := chunk{doc: sp.doc, line: line, lead: sp.raw[start:leadEnd], body: sp.raw[leadEnd:sp.pos]}
			sp.carry, sp.moved = sp.pos, true
			sp.pos += n
			sp.lines++
			return c, true, nil
		}
		sp.pos += n
		sp.lines++
		leadEnd, line = sp.pos, sp.lines+1
		open = true
	}
	if open {
		sp.doc++
		return chunk{doc: sp.doc, line: line, lead: sp.raw[start:leadEnd], body: sp.raw[leadEnd:sp.pos]}, true, nil
	}
	if start < sp.pos {
		sp.tail = sp.raw[start:sp.pos]
	}
	return chunk{}, false, nil
}

// Unit is a part of the input that decodes on its own: a whole document, or one item of a List cut by
// splitJSONList or splitYAMLList. Decode may run on any goroutine.
type Unit struct {
	Source string
	Doc    int
	// Item is the item's 1-based index in its List, 0 for a whole document.
	Item int
	// doc is the document's bytes (the Raw of its objects), item the item's when Item > 0; line is the
	// file line doc starts on.
	doc, item []byte
	line      int
	yaml      bool           // item is a "- ..." entry of a YAML List, else JSON
	header    map[string]any // see Header
	whole     *whole
}

// whole decodes a split document the general way, once for all its units, when one of them cannot be
// decoded on its own.
type whole struct {
	once sync.Once
	objs []Object
	err  error
}

// ErrSplit reports an item that does not decode on its own (YAML flow style that is not JSON, an alias to
// another item's anchor, a cut inside a scalar goyaml lets span lines): the consumer must drop what it
// took from the units of that document and use DecodeDocument instead.
var ErrSplit = errors.New("item does not decode on its own")

// Where names the unit's origin as Object.Where does.
func (u Unit) Where() string { return Object{Source: u.Source, Doc: u.Doc, Item: u.Item}.Where() }

// Document identifies the unit's document, the same for all its units.
func (u Unit) Document() (source string, doc int) { return u.Source, u.Doc }

// Decode decodes and checks the unit's objects: none for an empty document, the items of a List read
// whole, one otherwise. For an item of a split List it returns ErrSplit when the item does not decode on
// its own; nothing is decided about the item then, DecodeDocument does.
func (u Unit) Decode() ([]Object, error) {
	if u.Item == 0 {
		return decodeGeneral(u.Source, u.Doc, u.line, u.doc)
	}
	var v any
	if u.yaml {
		var ok bool
		if v, ok = decodeYAMLItem(u.item); !ok {
			return nil, fmt.Errorf("%s: %w", u.Where(), ErrSplit)
		}
	} else if err := json.Unmarshal(u.item, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", u.Where(), ErrSplit)
	}
	m, ok := v.(map[string]any)
	if !ok {
		// The general decoding says what this is.
		return nil, fmt.Errorf("%s: %w", u.Where(), ErrSplit)
	}
	item := Object{Source: u.Source, Doc: u.Doc, Item: u.Item, Object: m, Raw: u.doc}
	if err := item.validate(); err != nil {
		return nil, err
	}
	return []Object{item}, nil
}

// EmptyList reports a whole document that is a List without items (a kind ending in List, items empty or
// null), as kubectl get prints it when nothing matches: an answer of "none", where an empty document is a
// broken input. It decodes the document again, so call it only for a document that gave no objects.
func (u Unit) EmptyList() bool {
	if u.Item != 0 {
		return false
	}
	var v map[string]any
	if err := sigsyaml.Unmarshal(u.doc, &v); err != nil {
		return false
	}
	kind, _ := v["kind"].(string)
	items, has := v["items"]
	list, _ := items.([]any)
	return has && strings.HasSuffix(kind, "List") && len(list) == 0
}

// DecodeDocument decodes the unit's whole document the general way (once for all its units).
func (u Unit) DecodeDocument() ([]Object, error) {
	if u.whole == nil {
		return decodeGeneral(u.Source, u.Doc, u.line, u.doc)
	}
	u.whole.once.Do(func() { u.whole.objs, u.whole.err = decodeGeneral(u.Source, u.Doc, u.line, u.doc) })
	return u.whole.objs, u.whole.err
}

// planDocument cuts a document into units: one per item for a List it can cut, the whole document
// otherwise.
func planDocument(source string, doc, line int, body []byte) []Unit {
	wholeDoc := []Unit{{Source: source, Doc: doc, doc: body, line: line}}
	if looksLikeJSON(body) {
		l, err := splitJSONList(body)
		if err != nil {
			return wholeDoc
		}
		kind, _ := l.kind.(string)
		if !strings.HasSuffix(kind, "List") {
			return wholeDoc
		}
		if _, err := l.header(); err != nil || len(l.items) == 0 {
			// An empty List stays one unit, so that its consumer sees the document (Unit.EmptyList).
			return wholeDoc
		}
		units := make([]Unit, len(l.items))
		w := &whole{}
		for i, it := range l.items {
			units[i] = Unit{Source: source, Doc: doc, Item: i + 1, doc: body, line: line, item: it, header: l.headers[i], whole: w}
		}
		return units
	}
	items, ok := splitYAMLList(body)
	if !ok || len(items) == 0 {
		return wholeDoc
	}
	units := make([]Unit, len(items))
	w := &whole{}
	for i, it := range items {
		units[i] = Unit{Source: source, Doc: doc, Item: i + 1, doc: body, line: line, item: it, yaml: true, whole: w}
	}
	return units
}

func looksLikeJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// decodeDocument decodes every object of a document, its units one after the other; when one of them
// fails, the document is decoded whole, which gives the outcome and the message of decoding it whole.
func decodeDocument(source string, doc, line int, body []byte) ([]Object, error) {
	units := planDocument(source, doc, line, body)
	if len(units) == 1 && units[0].Item == 0 {
		return units[0].Decode()
	}
	out := make([]Object, 0, len(units))
	for _, u := range units {
		objs, err := u.Decode()
		if err != nil {
			// Whatever went wrong, the general decoding decides, with its own message.
			return u.DecodeDocument()
		}
		out = append(out, objs...)
	}
	return out, nil
}

// decodeGeneral decodes a document with sigs.k8s.io/yaml (YAML, and JSON as YAML), as Kubernetes tools
// read manifests.
func decodeGeneral(source string, doc, line int, body []byte) ([]Object, error) {
	if len(bytes.TrimSpace(stripComments(body))) == 0 {
		return nil, nil
	}
	var v any
	if err := sigsyaml.Unmarshal(body, &v); err != nil {
		return nil, syntaxError(source, doc, line, err)
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		what := fmt.Sprintf("a %T", v)
		switch v.(type) {
		case []any:
			what = "a list (to give several objects, use a kind: List with items, or --- between YAML documents)"
		case string:
			what = "a string"
		case bool:
			what = "a boolean"
		case float64, int64:
			what = "a number"
		}
		return nil, fmt.Errorf("%s (document %d, line %d): not a Kubernetes object: the document is %s", source, doc, line, what)
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

// yamlLine is goyaml's position, counted from the document's first line.
var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): `)

// syntaxError names the file line of a YAML error, which goyaml counts from the document's start.
func syntaxError(source string, doc, line int, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("%s (document %d, line %d): %s", source, doc, line+n-1, msg[len(m[0]):])
	}
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	return fmt.Errorf("%s (document %d): %s", source, doc, msg)
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
