// Package mutate rewrites decoded Kubernetes objects into the malformed shapes a Lua health or action script
// meets in a cluster (fields dropped, nulled or retyped, strings and numbers swapped, lists emptied or made
// huge) and shrinks a mutated object that still triggers a failure down to a small reproducer. It drives the
// bundled scripts' fuzz target and `verify --fuzz` alike, so the mutations are written once.
package mutate

import (
	"encoding/json"
	"math/rand"
	"sort"
	"strconv"
)

// GiantLen is the length of the lists a mutation blows up: long enough to expose scripts that copy or
// sort a list per element, short enough that a quadratic script still answers inside Argo CD's 1 s. A list
// of large elements grows to about giantBytes instead, but to no fewer than minGiantLen elements.
const (
	GiantLen    = 500
	minGiantLen = 50
	giantBytes  = 128 << 10
)

// Mutator rewrites values under the control of a byte stream, so a fuzzer's input or a seeded random
// source decides every choice and a run can be replayed.
type Mutator struct {
	next   func() byte
	giants int
	// Strings are extra string values substituted for fields: values a script compares against (phases,
	// condition types) reach branches that random text never does.
	Strings []string
}

// FromBytes makes a Mutator that reads its choices from data; past the end every choice is "keep".
func FromBytes(data []byte) *Mutator {
	pos := 0
	return &Mutator{next: func() byte {
		if pos >= len(data) {
			return 0
		}
		b := data[pos]
		pos++
		return b
	}}
}

// FromRand makes a Mutator that draws its choices from r.
func FromRand(r *rand.Rand) *Mutator {
	return &Mutator{next: func() byte { return byte(r.Intn(256)) }}
}

var generic = []func() any{
	func() any { return nil },
	func() any { return "" },
	func() any { return "7" },
	func() any { return "True" },
	func() any { return float64(-1) },
	func() any { return float64(0) },
	func() any { return float64(3) },
	func() any { return 1e300 },
	func() any { return true },
	func() any { return false },
	func() any { return map[string]any{} },
	func() any { return []any{} },
	func() any { return []any{"x", float64(1), nil, map[string]any{"status": "Error", "type": "Ready"}} },
	func() any { return map[string]any{"name": float64(1), "status": []any{}, "message": map[string]any{}} },
}

func (m *Mutator) replacement() any {
	n := int(m.next()) % (len(generic) + len(m.Strings))
	if n < len(generic) {
		return generic[n]()
	}
	return m.Strings[n-len(generic)]
}

// Value returns a mutation of v, which it may modify in place. At each node it keeps the value and
// descends, replaces it with a value of another type, swaps a string for a number or back, empties a list
// or repeats its first element GiantLen times (once per Object); in maps it may delete or null a key.
func (m *Mutator) Value(v any) any {
	switch m.next() % 8 {
	case 1:
		return m.replacement()
	case 2:
		return swap(v)
	case 3:
		if _, ok := v.([]any); ok {
			return []any{}
		}
	case 4:
		// One giant list per object: several multiply the object's size without finding more.
		// Rarer than the other mutations, since a giant list makes every evaluation slow.
		if l, ok := v.([]any); ok && len(l) > 0 && m.giants == 0 && m.next()%4 == 0 {
			m.giants++
			n := GiantLen
			if size := Size(l[0]); size > 0 && giantBytes/size < n {
				n = max(giantBytes/size, minGiantLen)
			}
			giant := make([]any, n)
			for i := range giant {
				giant[i] = DeepCopy(l[0])
			}
			return giant
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			switch m.next() % 16 {
			case 15:
				delete(x, k)
			case 14:
				x[k] = nil
			default:
				x[k] = m.Value(x[k])
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = m.Value(x[i])
		}
		return x
	}
	return v
}

// Object mutates obj in place and returns it, leaving the top-level keys in pinned untouched: Argo CD
// picks a script by apiVersion and kind, and the API server validates metadata, so a script never sees
// those retyped.
func (m *Mutator) Object(obj map[string]any, pinned ...string) map[string]any {
	m.giants = 0
	keep := map[string]any{}
	for _, k := range pinned {
		if v, ok := obj[k]; ok {
			keep[k] = v
			delete(obj, k)
		}
	}
	out, ok := m.Value(obj).(map[string]any)
	if !ok {
		out = map[string]any{}
	}
	for k, v := range keep {
		out[k] = v
	}
	return out
}

// swap turns a string into a number and a number or bool into a string, the mix-ups of hand-written
// manifests and of controllers that changed a field's type between versions.
func swap(v any) any {
	switch x := v.(type) {
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f
		}
		return float64(len(x))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		return []any{x}
	case []any:
		if len(x) > 0 {
			return x[0]
		}
		return map[string]any{}
	}
	return "x"
}

// DeepCopy copies a decoded JSON value.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = DeepCopy(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = DeepCopy(item)
		}
		return out
	}
	return v
}

// Strings collects the string values found in objs (sorted, deduplicated), for Mutator.Strings.
func Strings(objs ...map[string]any) []string {
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) <= 64 {
				seen[x] = true
			}
		case map[string]any:
			for _, item := range x {
				walk(item)
			}
		case []any:
			for _, item := range x {
				walk(item)
			}
		}
	}
	for _, o := range objs {
		walk(o)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Size is the length of v's JSON encoding, the measure Minimize reduces.
func Size(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Minimize returns a copy of obj shrunk while keep still holds: keys deleted, lists halved and elements
// dropped, depth first, until nothing more can go or budget candidates have been tried. Top-level keys in
// pinned are never touched. keep must not modify the object it is given.
func Minimize(obj map[string]any, pinned []string, keep func(map[string]any) bool, budget int) map[string]any {
	cur, _ := DeepCopy(obj).(map[string]any)
	skip := map[string]bool{}
	for _, k := range pinned {
		skip[k] = true
	}
	tries := 0
	try := func() bool {
		if tries >= budget {
			return false
		}
		tries++
		return keep(cur)
	}
	for tries < budget && shrinkMap(cur, skip, try) {
	}
	return cur
}

func shrinkMap(m map[string]any, skip map[string]bool, try func() bool) bool {
	progress := false
	for _, k := range sortedKeys(m) {
		if skip[k] {
			continue
		}
		v := m[k]
		delete(m, k)
		if try() {
			progress = true
			continue
		}
		m[k] = v
		if shrinkValue(v, func(nv any) { m[k] = nv }, try) {
			progress = true
		}
	}
	return progress
}

func shrinkValue(v any, set func(any), try func() bool) bool {
	switch x := v.(type) {
	case map[string]any:
		return shrinkMap(x, nil, try)
	case []any:
		progress := false
		for len(x) > 1 {
			half := x[: len(x)/2 : len(x)/2]
			set(half)
			if !try() {
				set(x)
				break
			}
			x, progress = half, true
		}
		for i := 0; i < len(x); {
			fewer := append(x[:i:i], x[i+1:]...)
			set(fewer)
			if try() {
				x, progress = fewer, true
				continue
			}
			set(x)
			i++
		}
		for i := range x {
			if shrinkValue(x[i], func(nv any) { x[i] = nv }, try) {
				progress = true
			}
		}
		return progress
	}
	return false
}
