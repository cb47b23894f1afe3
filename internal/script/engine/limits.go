package engine

import (
	"fmt"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

// Limits on a table a script returns, checked before it is encoded to JSON. gopher-json (the encoder Argo
// CD uses) recurses once per nested table through encoding/json, which re-reads each table's encoding at
// every enclosing level: a 1,000,000-deep table overflows the Go stack (a crash, not an error), and the
// time grows with depth times size (200,000 deep took minutes).
//
// No object Kubernetes stores comes near either limit: the API server takes requests of at most 3 MiB
// of JSON, and the deepest real objects (a CRD's openAPIV3Schema) nest a few dozen tables. 64 MiB,
// counted as the encoder pays for it, is over 20 times a 3 MiB object whose every byte sat 1 table deep
// (TestReturnedTableLimitsAdmitLargeObjects: a 3 MiB object 9 tables deep counts 27 MiB), and the worst
// table within both limits encodes in seconds, not minutes.
const (
	// MaxReturnedDepth is how deep tables may nest in a returned value.
	MaxReturnedDepth = 1000
	// MaxReturnedWork bounds the bytes the encoder reads: each byte of the JSON counted once for every
	// table enclosing it.
	MaxReturnedWork = 64 << 20
)

// encodeReturned is gopher-json's Encode for a value a script returned, refused with a one-line error
// beyond the limits above.
func encodeReturned(ret lua.LValue) ([]byte, error) {
	if err := checkReturned(ret); err != nil {
		return nil, err
	}
	return luajson.Encode(ret)
}

func checkReturned(ret lua.LValue) error {
	t, ok := ret.(*lua.LTable)
	if !ok {
		return nil
	}
	c := returnCheck{seen: map[*lua.LTable]bool{}}
	return c.table(t, 1)
}

type returnCheck struct {
	seen map[*lua.LTable]bool
	work int64
}

func (c *returnCheck) add(bytes, depth int) error {
	c.work += int64(bytes) * int64(depth)
	if c.work > MaxReturnedWork {
		return fmt.Errorf("the returned table is too large to encode: over %d MiB of JSON counting each byte once per enclosing table (the limit for a returned value)", MaxReturnedWork>>20)
	}
	return nil
}

// table walks t at depth (the root is 1). A table met twice is not walked again: gopher-json refuses it
// ("recursively nested"), so its size does not matter.
func (c *returnCheck) table(t *lua.LTable, depth int) error {
	if depth > MaxReturnedDepth {
		return fmt.Errorf("the returned table nests deeper than %d tables (the limit for a returned value)", MaxReturnedDepth)
	}
	if c.seen[t] {
		return nil
	}
	c.seen[t] = true
	if err := c.add(2, depth); err != nil {
		return err
	}
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		n := 1 // the comma
		if s, ok := k.(lua.LString); ok {
			n += encodedLen(string(s)) + 1
		}
		switch v := v.(type) {
		case lua.LString:
			n += encodedLen(string(v))
		case lua.LNumber:
			n += 24 // the longest float64 encoding/json writes
		case lua.LBool:
			n += 5
		case *lua.LTable:
			if err := c.table(v, depth+1); err != nil {
				return err
			}
		}
		if err := c.add(n, depth); err != nil {
			return err
		}
	}
	return nil
}

// encodedLen is at least the length of s as encoding/json writes it: quotes, and six bytes for each byte
// it escapes or replaces (control characters, HTML characters, invalid UTF-8).
func encodedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				n += 6
			} else {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}
