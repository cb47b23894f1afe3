package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	sigsyaml "sigs.k8s.io/yaml"

	luascripts "github.com/analysis-health/analysis-health/lua"
)

// jsonToLua must build exactly what toLua builds from json.Unmarshal, wherever it does not hand over to
// json (ok == false): same types, same numbers, same strings, nulls dropped the same way.
func TestJSONToLuaMatchesUnmarshal(t *testing.T) {
	cases := map[string]string{
		"nulls":             `{"a": null, "b": [1, null, 2, null], "c": {"d": null}}`,
		"repeated key":      `{"a": 1, "a": 2, "b": 1, "b": null}`,
		"numbers":           `{"n": [0, -0, 1, -1.5, 1e3, 1E-7, 2.5e+2, 12345678901234567890, 9007199254740993, 0.1]}`,
		"escapes":           `{"s": "a\"b\\c\/d\n\t\u00e9\ud83d\ude00 \ud800", "k\u0041": 1}`,
		"utf-8":             "{\"s\": \"h\u00e9llo \u4e16\u754c\", \"bad\": \"\xff\xfe\"}",
		"empty":             `{"o": {}, "a": [], "s": ""}`,
		"literals":          `{"t": true, "f": false, "l": [true, false, null]}`,
		"nested":            `{"a": [[[]], [{"b": [{"c": {}}]}]]}`,
		"whitespace":        " \n\t{ \"a\" :\r\n [ 1 , 2 ] }\n ",
		"out of range":      `{"n": 1e400}`,
		"leading zero":      `{"n": 01}`,
		"trailing garbage":  `{"a": 1} x`,
		"control character": "{\"s\": \"a\tb\"}",
		"top-level array":   `[1, 2]`,
	}
	fixtures, err := luascripts.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		j, err := sigsyaml.YAMLToJSON(f.Raw)
		if err != nil {
			t.Fatal(err)
		}
		cases[f.Path] = string(j)
	}
	fast := 0
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			L := lua.NewState(lua.Options{SkipOpenLibs: true})
			defer L.Close()
			got, ok := jsonToLua(L, []byte(in))
			var obj map[string]any
			jsonErr := json.Unmarshal([]byte(in), &obj)
			if !ok {
				return // json's path, by construction
			}
			fast++
			if jsonErr != nil {
				t.Fatalf("fast path accepted what json rejects (%v)", jsonErr)
			}
			if d := luaDiff("obj", got, ToLua(L, obj)); d != "" {
				t.Error(d)
			}
		})
	}
	if fast < len(fixtures) {
		t.Errorf("the fast path took %d of %d inputs; every fixture should take it", fast, len(cases))
	}
}

// HealthJSON and Health agree on every fixture, in both profiles.
func TestHealthJSONMatchesHealth(t *testing.T) {
	fixtures, err := luascripts.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		script, err := luascripts.Health(f.Kind.Group, f.Kind.Kind)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := f.Object()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range Profiles() {
			want, wantErr := Engine{Profile: p}.Health(obj, script)
			got, gotErr := Engine{Profile: p}.HealthJSON(raw, script)
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s %s: HealthJSON %v %v, Health %v %v", f.Path, p, got, gotErr, want, wantErr)
			}
		}
	}
	if _, err := (Engine{}).HealthJSON([]byte(`{"a": `), "return {}"); err == nil || !strings.Contains(err.Error(), ErrInvalidJSON.Error()) {
		t.Errorf("invalid JSON: %v", err)
	}
}

// luaDiff describes the first difference between two Lua values built from data (no functions, no
// metatables, no cycles).
func luaDiff(path string, a, b lua.LValue) string {
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: %s vs %s", path, a.Type(), b.Type())
	}
	ta, ok := a.(*lua.LTable)
	if !ok {
		if a != b {
			return fmt.Sprintf("%s: %#v vs %#v", path, a, b)
		}
		return ""
	}
	tb := b.(*lua.LTable)
	if ta.Len() != tb.Len() {
		return fmt.Sprintf("%s: length %d vs %d", path, ta.Len(), tb.Len())
	}
	var diff string
	count := 0
	ta.ForEach(func(k, v lua.LValue) {
		count++
		if diff == "" {
			diff = luaDiff(fmt.Sprintf("%s[%v]", path, k), v, tb.RawGet(k))
		}
	})
	if diff != "" {
		return diff
	}
	tb.ForEach(func(lua.LValue, lua.LValue) { count-- })
	if count != 0 {
		return fmt.Sprintf("%s: %d more keys on one side", path, count)
	}
	return ""
}

// The Go types Argo CD's decodeValue converts, and those it turns into nil, reach the script the same way
// here (util/lua/lua.go decodeValue, v2.14 to v3.6).
func TestConversionOfGoTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"float64", float64(1.5), "number"},
		{"int", 2, "number"},
		{"int32", int32(3), "number"},
		{"int64", int64(4), "number"},
		{"json.Number stays text", json.Number("5"), "string"},
		{"float32 is not listed", float32(1), "nil"},
		{"uint is not listed", uint(1), "nil"},
		{"nil", nil, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Engine{}.Health(map[string]any{"v": tc.v}, `return {status = "Healthy", message = type(obj.v)}`)
			if err != nil || h.Message != tc.want {
				t.Fatalf("type(obj.v) = %q, %v; want %q", h.Message, err, tc.want)
			}
		})
	}
}
