package engine

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	luascripts "github.com/analysis-health/analysis-health/lua"
)

// vandal changes everything a sandboxed script can reach, and succeeds.
const vandal = `
leaked = "global"
_G.leakedTable = {1, 2, 3}
print = nil
table.insert(package.loaders, 1, function() return nil end)
table.foo = "bar"
local t = table
t.concat = nil
package.path = "/evil/?.lua"
package.loaded.table = nil
package.loaded.evil = {x = 1}
package.preload.evil = function() return {} end
local os = require("os")
os.time = nil
setmetatable(package, {__index = function() return "meta" end})
setmetatable(_G, {__index = function(_, k) return "missing " .. k end, __newindex = function() end})
rawset(_G, "afterMeta", true)
setmetatable("", {__index = function() return "leaked string method" end})
setmetatable(true, {__index = {leaked = true}})
setmetatable(1, {__add = function() return 0 end})
setmetatable(function() end, {__index = {}})
setfenv(0, {})
module("evilmodule")
return {status = "Healthy", message = "vandalised"}
`

// A reused state, reset after a script that changed all it could, holds exactly what a fresh sandboxed
// state holds: the same tables reachable from the globals and the registry, with the same keys, values
// and metatables, and the globals as the thread's environment.
func TestResetStateIsFresh(t *testing.T) {
	fresh := newSandboxState()
	defer fresh.Close()
	want := fingerprint(fresh)

	p := &pooledState{L: newSandboxState()}
	p.tables, p.builtinMts = snapshot(p.L), builtinMetatables(p.L)
	for i, mt := range p.builtinMts {
		if mt != lua.LNil {
			t.Fatalf("a fresh sandbox has a metatable for %s: GetMetatable cannot be trusted to read it raw", builtinSamples[i].Type())
		}
	}
	if got := fingerprint(p.L); got != want {
		t.Fatalf("two fresh states differ:\n%s\n---\n%s", got, want)
	}
	if err := p.L.DoString(vandal); err != nil {
		t.Fatal(err)
	}
	if fingerprint(p.L) == want {
		t.Fatal("the script changed nothing: the test proves nothing")
	}
	p.reset()
	if got := fingerprint(p.L); got != want {
		t.Errorf("after reset:\n%s\nfresh:\n%s", diffLines(got, want), "")
	}
}

// With reused states every fixture evaluates as with fresh ones, also right after vandalism.
func TestReuseStatesMatchesFresh(t *testing.T) {
	fixtures, err := luascripts.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		for _, f := range fixtures {
			script, err := luascripts.Health(f.Kind.Group, f.Kind.Kind)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := f.Object()
			if err != nil {
				t.Fatal(err)
			}
			if h, err := (Engine{ReuseStates: true}).Health(obj, vandal); err != nil || h.Message != "vandalised" {
				t.Fatalf("vandal: %v %v", h, err)
			}
			for _, p := range []Profile{V214, V32, V36} {
				want, wantErr := Engine{Profile: p}.Health(obj, script)
				got, gotErr := Engine{Profile: p, ReuseStates: true}.Health(obj, script)
				if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("%s %s: reused %v %v, fresh %v %v", f.Path, p, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

// fingerprint describes everything reachable from a state's globals and registry, tables numbered in the
// order a sorted walk meets them and functions named by their Go code, so that two states compare.
func fingerprint(L *lua.LState) string {
	ids := map[*lua.LTable]int{}
	var queue []*lua.LTable
	name := func(v lua.LValue) string {
		switch x := v.(type) {
		case *lua.LTable:
			if _, ok := ids[x]; !ok {
				ids[x] = len(ids)
				queue = append(queue, x)
			}
			return fmt.Sprintf("table#%d", ids[x])
		case *lua.LFunction:
			if x.IsG {
				return fmt.Sprintf("gofunc@%x", reflect.ValueOf(x.GFunction).Pointer())
			}
			return fmt.Sprintf("luafunc@%p", x.Proto)
		case lua.LString:
			return fmt.Sprintf("%q", string(x))
		}
		return fmt.Sprintf("%s:%v", v.Type(), v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "env is globals: %v\n", L.Env == L.G.Global)
	name(L.G.Global)
	name(L.G.Registry)
	for _, v := range builtinSamples {
		fmt.Fprintf(&b, "metatable of every %s: %s\n", v.Type(), name(L.GetMetatable(v)))
	}
	for i := 0; i < len(queue); i++ {
		t := queue[i]
		type kv struct{ k, v lua.LValue }
		var entries []kv
		t.ForEach(func(k, v lua.LValue) { entries = append(entries, kv{k, v}) })
		sort.Slice(entries, func(a, c int) bool { return entries[a].k.String() < entries[c].k.String() })
		fmt.Fprintf(&b, "table#%d metatable=%s\n", i, name(t.Metatable))
		for _, e := range entries {
			fmt.Fprintf(&b, "  %s = %s\n", name(e.k), name(e.v))
		}
	}
	return b.String()
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(al), len(bl))
}

// leak is issue 44's script: it reports a built-in metatable left by an earlier evaluation, then leaves
// its own on strings and booleans. Argo CD runs each evaluation in a fresh VM, so it is always Healthy.
const leak = `
if getmetatable("") ~= nil or getmetatable(true) ~= nil then
  return {status = "Degraded", message = "state left behind by an earlier evaluation"}
end
setmetatable("", {__index = function() return "leaked" end})
setmetatable(true, {})
return {status = "Healthy", message = "fresh state"}
`

func TestReusedStateForgetsBuiltinMetatables(t *testing.T) {
	for i := 0; i < 3; i++ {
		h, err := Engine{ReuseStates: true}.Health(map[string]any{"kind": "Rollout"}, leak)
		if err != nil || h.Status != Healthy {
			t.Fatalf("evaluation %d: %+v %v, want Healthy as in a fresh state", i+1, h, err)
		}
	}
}

// BenchmarkReusedState is one health evaluation of the bundled Rollout script in a reused state: the
// cost of the reset, built-in metatables included, beside the script's.
func BenchmarkReusedState(b *testing.B) {
	fixtures, err := luascripts.Fixtures()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range fixtures {
		if f.Kind.Kind != "Rollout" {
			continue
		}
		script, err := luascripts.Health(f.Kind.Group, f.Kind.Kind)
		if err != nil {
			b.Fatal(err)
		}
		obj, err := f.Object()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := (Engine{ReuseStates: true}).Health(obj, script); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.Fatal("no Rollout fixture")
}
