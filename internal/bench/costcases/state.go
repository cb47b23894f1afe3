package costcases

import (
	"context"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// State is the state Argo CD's util/lua prepares before it sets obj (v2.14 runLua, v3.6
// runLuaWithResourceActionParameters): a state with or without gopher-lua's libraries, the four openers
// Argo CD calls, the os preload and a context with timeout; extra (if not nil) then sets what the version
// adds (v3.6: the actionParams table). Callers cancel and Close.
func State(openLibs bool, timeout time.Duration, extra func(*lua.LState)) (*lua.LState, context.CancelFunc, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.OsLibName, safeOsStandIn}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			L.Close()
			return nil, nil, err
		}
	}
	L.PreloadModule(lua.OsLibName, safeOsLoaderStandIn)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	L.SetContext(ctx)
	if extra != nil {
		extra(L)
	}
	return L, cancel, nil
}

// safeOsStandIn costs what Argo CD's OpenSafeOs costs (util/lua/oslib_safe.go): a module table of two
// functions registered under the table library's name, as Argo CD registers it (the table library being
// loaded already, RegisterModule returns it unchanged).
func safeOsStandIn(L *lua.LState) int {
	mod := L.RegisterModule(lua.TabLibName, map[string]lua.LGFunction{
		"time": func(*lua.LState) int { return 0 },
		"date": func(*lua.LState) int { return 0 },
	})
	L.Push(mod)
	return 1
}

// safeOsLoaderStandIn is what require("os") gets in Argo CD's sandbox (SafeOsLoader): a new table of
// time and date. None of the measured scripts requires os; this keeps the state faithful if one does.
func safeOsLoaderStandIn(L *lua.LState) int {
	L.Push(L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"time": func(*lua.LState) int { return 0 },
		"date": func(*lua.LState) int { return 0 },
	}))
	return 1
}

// ToLua is the engine's conversion (engine.ToLua, Argo CD's decodeValue), which the measured states use.
func ToLua(L *lua.LState, v any) lua.LValue { return engine.ToLua(L, v) }

// CachedLoadstring is loadstring with compiled prototypes kept by source, so that a run with it, minus a
// run with the real loadstring, is the time spent compiling lazily compiled chunks. An error is returned
// as loadstring returns it: nil and the message.
func CachedLoadstring() lua.LGFunction {
	protos := map[string]*lua.FunctionProto{}
	return func(L *lua.LState) int {
		src := L.CheckString(1)
		p, ok := protos[src]
		if !ok {
			fn, err := L.LoadString(src)
			if err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString(err.Error()))
				return 2
			}
			p = fn.Proto
			protos[src] = p
		}
		L.Push(L.NewFunctionFromProto(p))
		return 1
	}
}
