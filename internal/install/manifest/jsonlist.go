package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A `kubectl get -o json` List is one JSON document of tens of megabytes. Decoding it whole into maps
// costs about ten times its size in memory and runs on one core. splitJSONList instead finds where each
// item starts and ends in one pass over the bytes, so that items are decoded one at a time, on any core,
// and dropped once used.
//
// The scan checks only the top level of the document (the punctuation between keys and values); every
// key and value it slices out is then decoded by encoding/json, which checks the rest. So the document
// is decoded as encoding/json would decode it whole. Anything the scan does not recognise (not JSON, a
// repeated key, no items) makes it give up, and the document takes the general path.

// jsonList is the top level of a JSON document with an items array.
type jsonList struct {
	kind  any               // the value of "kind", decoded
	other map[string][]byte // every other top-level value, undecoded (items excluded)
	items [][]byte          // each item's bytes; none when "items" is null
	// headers are the items' identifying fields, nil where the scan could not read them exactly.
	headers []map[string]any
}

var errNotJSONList = errors.New("not a JSON object with items")

// maxScanDepth matches encoding/json's nesting limit, so that the scan refuses what json would.
const maxScanDepth = 10000

func splitJSONList(b []byte) (*jsonList, error) {
	s := scanner{b: b}
	s.space()
	if !s.eat('{') {
		return nil, errNotJSONList
	}
	l := &jsonList{other: map[string][]byte{}}
	seen := map[string]bool{}
	hasItems := false
	s.space()
	if s.eat('}') {
		return nil, errNotJSONList
	}
	for {
		s.space()
		keyStart := s.i
		if !s.skipString() {
			return nil, errNotJSONList
		}
		var key string
		if err := json.Unmarshal(b[keyStart:s.i], &key); err != nil {
			return nil, errNotJSONList
		}
		if seen[key] {
			return nil, errNotJSONList
		}
		seen[key] = true
		s.space()
		if !s.eat(':') {
			return nil, errNotJSONList
		}
		s.space()
		switch {
		case key == "items" && s.peek() == '[':
			hasItems = true
			s.i++
			s.space()
			if !s.eat(']') {
				for {
					s.space()
					start := s.i
					if s.peek() == '{' {
						// Read the item's identifying fields on the way (see Header).
						end, header, ok := scanHeader(b, s.i)
						if !ok {
							return nil, errNotJSONList
						}
						s.i = end
						l.items = append(l.items, b[start:s.i])
						l.headers = append(l.headers, header)
					} else {
						if !s.skipValue(1) {
							return nil, errNotJSONList
						}
						l.items = append(l.items, b[start:s.i])
						l.headers = append(l.headers, nil)
					}
					s.space()
					if s.eat(']') {
						break
					}
					if !s.eat(',') {
						return nil, errNotJSONList
					}
				}
			}
		default:
			start := s.i
			if !s.skipValue(1) {
				return nil, errNotJSONList
			}
			v := b[start:s.i]
			switch key {
			case "items":
				if !bytes.Equal(v, []byte("null")) {
					// Not a list: the general path reports it.
					return nil, errNotJSONList
				}
				hasItems = true
			case "kind":
				if err := json.Unmarshal(v, &l.kind); err != nil {
					return nil, errNotJSONList
				}
			default:
				l.other[key] = v
			}
		}
		s.space()
		if s.eat('}') {
			break
		}
		if !s.eat(',') {
			return nil, errNotJSONList
		}
	}
	s.space()
	if s.i != len(b) || !hasItems {
		return nil, errNotJSONList
	}
	return l, nil
}

// header decodes the List's own fields (apiVersion, kind, metadata...), items excluded.
func (l *jsonList) header() (map[string]any, error) {
	obj := make(map[string]any, len(l.other)+1)
	for k, raw := range l.other {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		obj[k] = v
	}
	obj["kind"] = l.kind
	return obj, nil
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// skipString moves past a JSON string starting at s.i.
func (s *scanner) skipString() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		j := bytes.IndexAny(s.b[s.i:], "\"\\")
		if j < 0 {
			return false
		}
		s.i += j
		if s.b[s.i] == '"' {
			s.i++
			return true
		}
		s.i += 2 // a backslash and the character it escapes
	}
	return false
}

// skipValue moves past one JSON value starting at s.i: brackets balanced, strings skipped whole. It does
// not check what is between the brackets; encoding/json does, when the value is decoded.
func (s *scanner) skipValue(depth int) bool {
	switch c := s.peek(); c {
	case '"':
		return s.skipString()
	case '{', '[':
		level := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				level++
				if depth+level > maxScanDepth {
					return false
				}
			case '}', ']':
				level--
				if level == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	case 0:
		return false
	default:
		// A number, true, false or null: up to the next delimiter.
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}

// Header is, for an item of a JSON List, the object with only the fields that identify it decoded
// (apiVersion, kind, metadata.name, metadata.namespace and metadata.deletionTimestamp when present, keys
// unescaped; metadata's type as it is), checked as
// Decode checks objects, and the item's own JSON, for a caller that decodes the rest itself (the
// engine builds Lua tables from JSON directly). ok is false for any other unit, and for an item whose top
// level the scan could not read exactly (not an object, a repeated key): then use Decode. The header
// does not check the rest of the item; the caller's decoder must.
func (u Unit) Header() (obj Object, item []byte, ok bool, err error) {
	if u.Item == 0 || u.header == nil {
		return Object{}, nil, false, nil
	}
	obj = Object{Source: u.Source, Doc: u.Doc, Item: u.Item, Object: u.header, Raw: u.doc}
	if err := obj.validate(); err != nil {
		return Object{}, nil, true, err
	}
	return obj, u.item, true, nil
}

// scanHeader reads the object at b[at:] to its end, decoding only its identifying fields.
func scanHeader(b []byte, at int) (end int, header map[string]any, ok bool) {
	header = map[string]any{}
	end, ok = eachMember(b, at, func(key string, v []byte) bool {
		switch key {
		case "apiVersion", "kind":
			var x any
			if json.Unmarshal(v, &x) != nil {
				return false
			}
			header[key] = x
		case "metadata":
			if v[0] != '{' {
				var x any
				if json.Unmarshal(v, &x) != nil {
					return false
				}
				if x != nil {
					header[key] = x
				}
				return true
			}
			meta := map[string]any{}
			header[key] = meta
			_, ok := eachMember(v, 0, func(key string, v []byte) bool {
				if key == "name" || key == "namespace" || key == "deletionTimestamp" {
					var x any
					if json.Unmarshal(v, &x) != nil {
						return false
					}
					meta[key] = x
				}
				return true
			})
			return ok
		}
		return true
	})
	return end, header, ok
}

// eachMember calls fn with every member of the JSON object at b[at:], its value undecoded, and returns
// where the object ends; it stops and reports false when fn does, when it cannot read the object, or when
// a key repeats.
func eachMember(b []byte, at int, fn func(key string, v []byte) bool) (int, bool) {
	s := scanner{b: b, i: at}
	if !s.eat('{') {
		return 0, false
	}
	s.space()
	if s.eat('}') {
		return s.i, true
	}
	var seen []string // objects have few keys; a slice beats a map
	for {
		s.space()
		start := s.i
		if !s.skipString() {
			return 0, false
		}
		key := string(b[start+1 : s.i-1])
		if bytes.IndexByte(b[start:s.i], '\\') >= 0 {
			if json.Unmarshal(b[start:s.i], &key) != nil {
				return 0, false
			}
		}
		for _, k := range seen {
			if k == key {
				return 0, false
			}
		}
		seen = append(seen, key)
		s.space()
		if !s.eat(':') {
			return 0, false
		}
		s.space()
		start = s.i
		if !s.skipValue(1) || !fn(key, b[start:s.i]) {
			return 0, false
		}
		s.space()
		if s.eat('}') {
			return s.i, true
		}
		if !s.eat(',') {
			return 0, false
		}
	}
}
