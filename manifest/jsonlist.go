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
	items [][]byte          // each item's bytes; nil items when "items" is null
	null  bool              // "items": null
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
					if !s.skipValue(1) {
						return nil, errNotJSONList
					}
					l.items = append(l.items, b[start:s.i])
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
				hasItems, l.null = true, true
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
