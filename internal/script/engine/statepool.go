package engine

import (
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// Creating and sandboxing a state is about a sixth of a bulk evaluation's cost. With Engine.ReuseStates a
// state is reused, but only after it has been put back exactly as it was made: every table reachable at
// set-up (the globals, the libraries, package.loaded and the rest, and the registry) gets back its own
// keys, values and metatable, the thread its environment, and whatever the script created becomes
// unreachable. A state whose evaluation failed (an error, a timeout) is dropped, never reused. Each
// evaluation thus starts from what a fresh state holds, as Argo CD's does (statepool_test.go compares the
// whole reachable state of a reused one with a fresh one after a script that changes all it can).
// Only the sandbox without gopher-lua's full library set is pooled; OpenLibs states are always fresh.
//
// Beside tables, a state holds one metatable per built-in type (gopher-lua's Global.builtinMts, shared by
// every string, boolean, number, function...): setmetatable("", mt) or setmetatable(true, mt) replaces it,
// and nothing reachable from the globals shows it. Those are recorded and put back too.

type pooledState struct {
	L      *lua.LState
	tables []tableState
	// builtinMts are the built-in types' metatables at set-up, in the order of builtinSamples.
	builtinMts []lua.LValue
}

// builtinSamples holds one value of each type whose metatable gopher-lua keeps per type rather than per
// value (LState.SetMetatable's default case): setting any one's sets the whole type's.
var builtinSamples = []lua.LValue{lua.LNil, lua.LFalse, lua.LNumber(0), lua.LString(""),
	&lua.LFunction{}, &lua.LState{}, lua.LChannel(nil)}

type tableState struct {
	t    *lua.LTable
	mt   lua.LValue
	keys []lua.LValue
	vals map[lua.LValue]lua.LValue
}

var states sync.Pool

func newSandboxState() *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: initialRegistrySize, RegistryMaxSize: lua.RegistrySize})
	openSandbox(L)
	closeFileAccess(L) // pooled states are the closed sandbox; FileAccess states are always fresh
	return L
}

// acquireState returns a sandboxed state and what to do with it after the evaluation: reuse it if the
// evaluation succeeded, drop it otherwise.
func acquireState() (*lua.LState, func(ok bool)) {
	p, _ := states.Get().(*pooledState)
	if p == nil {
		L := newSandboxState()
		p = &pooledState{L: L, tables: snapshot(L), builtinMts: builtinMetatables(L)}
	}
	return p.L, func(ok bool) {
		if !ok {
			p.L.Close()
			return
		}
		p.reset()
		states.Put(p)
	}
}

// builtinMetatables reads the built-in types' metatables. GetMetatable answers a metatable's
// __metatable field instead of the table itself; a fresh sandbox has no built-in metatable at all (it
// opens no string library, the only one gopher-lua gives one), which TestResetStateIsFresh checks.
func builtinMetatables(L *lua.LState) []lua.LValue {
	mts := make([]lua.LValue, len(builtinSamples))
	for i, v := range builtinSamples {
		mts[i] = L.GetMetatable(v)
	}
	return mts
}

// snapshot records every table reachable from the globals, the registry and the built-in metatables.
func snapshot(L *lua.LState) []tableState {
	var out []tableState
	seen := map[*lua.LTable]bool{}
	var walk func(t *lua.LTable)
	walk = func(t *lua.LTable) {
		if seen[t] {
			return
		}
		seen[t] = true
		ts := tableState{t: t, mt: t.Metatable, vals: map[lua.LValue]lua.LValue{}}
		var children []*lua.LTable
		t.ForEach(func(k, v lua.LValue) {
			ts.keys = append(ts.keys, k)
			ts.vals[k] = v
			for _, x := range []lua.LValue{k, v} {
				if c, ok := x.(*lua.LTable); ok {
					children = append(children, c)
				}
			}
		})
		if mt, ok := t.Metatable.(*lua.LTable); ok {
			children = append(children, mt)
		}
		out = append(out, ts)
		for _, c := range children {
			walk(c)
		}
	}
	walk(L.G.Global)
	walk(L.G.Registry)
	for _, v := range builtinSamples {
		if mt, ok := L.GetMetatable(v).(*lua.LTable); ok {
			walk(mt)
		}
	}
	return out
}

func (p *pooledState) reset() {
	L := p.L
	L.SetTop(0)
	L.RemoveContext()
	L.Env = L.G.Global
	L.G.CurrentThread = L
	for _, ts := range p.tables {
		var extra []lua.LValue
		ts.t.ForEach(func(k, v lua.LValue) {
			if _, ok := ts.vals[k]; !ok {
				extra = append(extra, k)
			}
		})
		for _, k := range extra {
			ts.t.RawSet(k, lua.LNil)
		}
		for _, k := range ts.keys {
			if v := ts.vals[k]; ts.t.RawGet(k) != v {
				ts.t.RawSet(k, v)
			}
		}
		ts.t.Metatable = ts.mt
	}
	for i, v := range builtinSamples {
		L.SetMetatable(v, p.builtinMts[i])
	}
}
