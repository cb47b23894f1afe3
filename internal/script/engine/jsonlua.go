package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// ErrInvalidJSON wraps the decoding error of HealthJSON's input.
var ErrInvalidJSON = errors.New("invalid JSON")

// HealthJSON is Health on the object raw decodes to with encoding/json (json.Unmarshal into a map), built
// straight into Lua tables: for a bulk run, decoding to Go maps and converting those costs twice the
// decoding alone. The tables are those toLua builds from json.Unmarshal's result, value for value (a null
// member or array element is absent, numbers are float64); raw the fast path does not take (escapes in a
// string, invalid UTF-8, a number ParseFloat rejects, anything not JSON) goes through json.Unmarshal and
// toLua themselves, so both paths agree by construction. A decoding error is wrapped in ErrInvalidJSON.
func (e Engine) HealthJSON(raw []byte, script string) (Health, error) {
	return flatten(e.ExecuteJSON(raw, script))
}

// ExecuteJSON is Execute on the object raw decodes to, built as HealthJSON builds it.
func (e Engine) ExecuteJSON(raw []byte, script string) (*Health, error) {
	return e.execute(func(L *lua.LState) (lua.LValue, error) {
		if v, ok := jsonToLua(L, raw); ok {
			return v, nil
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidJSON, err)
		}
		return ToLua(L, obj), nil
	}, script)
}

// maxJSONDepth is encoding/json's nesting limit; deeper input takes json's path, which rejects it.
const maxJSONDepth = 10000

// jsonToLua decodes a JSON object; ok is false for anything outside the subset it handles exactly.
func jsonToLua(L *lua.LState, raw []byte) (lua.LValue, bool) {
	p := jsonParser{L: L, b: raw}
	p.space()
	if p.peek() != '{' {
		return nil, false
	}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.b)
}

type jsonParser struct {
	L       *lua.LState
	b       []byte
	i       int
	members []member
	elems   []lua.LValue
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *jsonParser) value(depth int) (lua.LValue, bool) {
	switch c := p.peek(); {
	case c == '{':
		if depth+1 > maxJSONDepth {
			return nil, false
		}
		return p.object(depth + 1)
	case c == '[':
		if depth+1 > maxJSONDepth {
			return nil, false
		}
		return p.array(depth + 1)
	case c == '"':
		s, ok := p.str()
		return lua.LString(s), ok
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, lit := range []struct {
		text string
		v    lua.LValue
	}{{"true", lua.LTrue}, {"false", lua.LFalse}, {"null", lua.LNil}} {
		if len(p.b)-p.i >= len(lit.text) && string(p.b[p.i:p.i+len(lit.text)]) == lit.text {
			p.i += len(lit.text)
			return lit.v, true
		}
	}
	return nil, false
}

// object and array gather their members on a stack shared by all levels before building the table, so
// that it is made at its final size, as toLua makes it: gopher-lua's NewTable reserves room for 32 of
// each, which for the many small objects of a Kubernetes object costs more than filling them.
func (p *jsonParser) object(depth int) (lua.LValue, bool) {
	p.i++ // {
	base := len(p.members)
	defer func() { p.members = p.members[:base] }()
	p.space()
	if p.peek() == '}' {
		p.i++
		return p.L.CreateTable(0, 0), true
	}
	for {
		p.space()
		if p.peek() != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.peek() != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		p.members = append(p.members, member{key, v})
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			ms := p.members[base:]
			t := p.L.CreateTable(0, len(ms))
			for _, m := range ms {
				// As toLua's RawSetH: a null member is absent, a repeated key keeps the last value.
				t.RawSetString(m.key, m.v)
			}
			return t, true
		default:
			return nil, false
		}
	}
}

type member struct {
	key string
	v   lua.LValue
}

func (p *jsonParser) array(depth int) (lua.LValue, bool) {
	p.i++ // [
	base := len(p.elems)
	defer func() { p.elems = p.elems[:base] }()
	p.space()
	if p.peek() == ']' {
		p.i++
		return p.L.CreateTable(0, 0), true
	}
	for {
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		p.elems = append(p.elems, v)
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			es := p.elems[base:]
			t := p.L.CreateTable(len(es), 0)
			for _, e := range es {
				// As toLua's Append, which skips nil: null elements do not take a slot.
				t.Append(e)
			}
			return t, true
		default:
			return nil, false
		}
	}
}

// str reads a string. One without escapes, in valid UTF-8 and without control characters, is what
// encoding/json returns byte for byte; any other goes through encoding/json on its own.
func (p *jsonParser) str() (string, bool) {
	open := p.i
	p.i++
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if plain {
				return string(p.b[open+1 : p.i-1]), true
			}
			var s string
			if json.Unmarshal(p.b[open:p.i], &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			p.i += 2
			continue
		case c < 0x20:
			return "", false
		case c >= 0x80:
			// Valid UTF-8 stays plain; json replaces invalid bytes.
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n <= 1 {
				plain = false
			}
			p.i += n
			continue
		}
		p.i++
	}
	return "", false
}

// number reads a number in JSON's grammar and converts it as encoding/json does for an interface value
// (strconv.ParseFloat, 64 bits); out of range is left to encoding/json, which reports it.
func (p *jsonParser) number() (lua.LValue, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek() == '-' {
		p.i++
	}
	switch {
	case p.peek() == '0':
		p.i++
	case digits() == 0:
		return nil, false
	}
	if p.peek() == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		return nil, false
	}
	return lua.LNumber(f), true
}
