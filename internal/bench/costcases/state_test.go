package costcases

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/analysis-health/analysis-health/internal/bench/worstcase"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// dump renders obj canonically (keys sorted, every value with its Lua type), with only what Argo CD's
// sandbox opens, so the same script reads the tables of both conversions.
const dump = `
local function dump(v)
  if type(v) ~= "table" then return type(v) .. ":" .. tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return type(a) .. tostring(a) < type(b) .. tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = type(k) .. ":" .. tostring(k) .. "=" .. dump(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end
return {status = "Healthy", message = dump(obj)}
`

// dumpToLua is dump of ToLua's conversion of obj.
func dumpToLua(t *testing.T, obj map[string]any) string {
	t.Helper()
	L, cancel, err := State(false, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer L.Close()
	defer cancel()
	L.SetGlobal("obj", ToLua(L, obj))
	if err := L.DoString(dump); err != nil {
		t.Fatal(err)
	}
	return lua.LVAsString(L.GetField(L.Get(-1), "message"))
}

// TestToLuaMatchesEngine proves the benchmarks convert as our engine does (which the conformance tests
// prove equal to Argo CD's), on every fixture, small worst cases and every type decodeValue lists.
func TestToLuaMatchesEngine(t *testing.T) {
	cases := map[string]map[string]any{
		"types": {
			"bool": true, "float64": 1.5, "int": 2, "int32": int32(3), "int64": int64(1 << 40), "string": "s",
			"json.Number": json.Number("4.25"), "null": nil, "empty map": map[string]any{}, "empty list": []any{},
			"list": []any{"a", 1.0, false, nil, []any{map[string]any{"x": "y"}}},
		},
		"analysisrun-3x4":          worstcase.AnalysisRun(3, 4),
		"rollout-5-steps-2-pauses": worstcase.Rollout(5, 2),
	}
	fixtures, err := ahlua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range fixtures {
		m, err := fx.Object()
		if err != nil {
			t.Fatal(err)
		}
		cases[fx.Path] = m
	}
	for name, obj := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := engine.Engine{Profile: engine.V214, Timeout: time.Minute}.Health(obj, dump)
			if err != nil {
				t.Fatal(err)
			}
			if got := dumpToLua(t, obj); got != want.Message {
				t.Errorf("ToLua:\n%s\nengine:\n%s", got, want.Message)
			}
		})
	}
}

// TestToLua pins what decodeValue does that a round trip through the engine cannot show.
func TestToLua(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for _, tc := range []struct {
		name string
		in   any
		want lua.LValue
	}{
		{"json.Number stays a string", json.Number("1e3"), lua.LString("1e3")},
		{"int32", int32(-7), lua.LNumber(-7)},
		{"int64", int64(9), lua.LNumber(9)},
		{"nil", nil, lua.LNil},
		{"float32 is not a type decodeValue lists", float32(1), lua.LNil},
		{"uint is not either", uint(1), lua.LNil},
		{"typed map is not either", map[string]string{"a": "b"}, lua.LNil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToLua(L, tc.in); got != tc.want {
				t.Errorf("ToLua(%#v) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
	list := ToLua(L, []any{"a", nil, "b"}).(*lua.LTable)
	if list.Len() != 2 || list.RawGetInt(2) != lua.LString("b") {
		t.Errorf("a nil item is dropped, the list closes up: len %d, [2] = %v", list.Len(), list.RawGetInt(2))
	}
}

func TestState(t *testing.T) {
	extra := func(L *lua.LState) { L.SetGlobal("actionParams", L.CreateTable(0, 0)) }
	for _, tc := range []struct {
		name     string
		openLibs bool
		extra    func(*lua.LState)
		// want is what the probe script returns.
		want string
	}{
		{"sandbox", false, nil, "base table:nil os:table,function nil nil"},
		{"open libraries", true, nil, "base table:nil os:table,function string nil"},
		{"sandbox with v3.6's globals", false, extra, "base table:nil os:table,function nil table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			L, cancel, err := State(tc.openLibs, time.Minute, tc.extra)
			if err != nil {
				t.Fatal(err)
			}
			defer L.Close()
			defer cancel()
			deadline, ok := L.Context().Deadline()
			if !ok || time.Until(deadline) > time.Minute || time.Until(deadline) < 50*time.Second {
				t.Errorf("deadline %v, want in a minute", deadline)
			}
			// The os opener adds nothing to table, which is loaded already; os is reached through require;
			// string only with the libraries opened.
			probe := `
local base = (pairs and loadstring and "base") or "no base"
local tab = (table and table.insert and "table:" .. type(table.time)) or "no table"
local os = require("os")
local str = "nil"
if string ~= nil then str = "string" end
return base .. " " .. tab .. " os:" .. type(os) .. "," .. type(os.time) .. " " .. str .. " " .. type(actionParams)`
			if err := L.DoString(probe); err != nil {
				t.Fatal(err)
			}
			if got := L.Get(-1).String(); got != tc.want {
				t.Errorf("probe = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCachedLoadstring(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	cached := L.NewFunction(CachedLoadstring())
	call := func(fn lua.LValue, src string) (lua.LValue, lua.LValue) {
		t.Helper()
		if err := L.CallByParam(lua.P{Fn: fn, NRet: 2, Protect: true}, lua.LString(src)); err != nil {
			t.Fatal(err)
		}
		defer L.Pop(2)
		return L.Get(-2), L.Get(-1)
	}
	for _, tc := range []struct {
		name, src string
		// results are what the compiled function returns when called.
		result string
	}{
		{"chunk", `return "a" .. "b"`, "ab"},
		{"another chunk", `local x = 2; return tostring(x * 21)`, "42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := call(cached, tc.src)
			second, _ := call(cached, tc.src)
			f1, ok1 := first.(*lua.LFunction)
			f2, ok2 := second.(*lua.LFunction)
			if !ok1 || !ok2 {
				t.Fatalf("got %v and %v, want functions", first, second)
			}
			if f1 == f2 || f1.Proto != f2.Proto {
				t.Errorf("want a new closure over the one cached prototype: %p/%p, %p/%p", f1, f2, f1.Proto, f2.Proto)
			}
			if err := L.CallByParam(lua.P{Fn: f2, NRet: 1, Protect: true}); err != nil {
				t.Fatal(err)
			}
			if got := L.Get(-1).String(); got != tc.result {
				t.Errorf("chunk returned %q, want %q", got, tc.result)
			}
			L.Pop(1)
		})
	}
	t.Run("syntax error as loadstring reports it", func(t *testing.T) {
		const bad = `return (`
		fn, msg := call(cached, bad)
		wantFn, wantMsg := call(L.GetGlobal("loadstring"), bad)
		if fn != lua.LNil || wantFn != lua.LNil || msg.String() != wantMsg.String() || !strings.Contains(msg.String(), "<string>") {
			t.Errorf("cached: %v %q; loadstring: %v %q", fn, msg, wantFn, wantMsg)
		}
	})
}
