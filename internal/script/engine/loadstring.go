package engine

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Scripts compile their rare paths lazily with loadstring, which gopher-lua parses again on every call.
// cachedLoadString gives the same function from the compiled-prototype cache (see compile): a new
// closure over the same immutable prototype, with the environment gopher-lua's own loadstring gives it
// (that of the loadstring function, not of the caller). Syntax errors and named chunks take gopher-lua's
// path, so every message stays its own.
func cachedLoadString(L *lua.LState) {
	var self *lua.LFunction
	self = L.NewFunction(func(L *lua.LState) int {
		src := L.CheckString(1)
		name := L.OptString(2, "<string>")
		if name == "<string>" {
			if proto, ok := compile(src); ok {
				fn := L.NewFunctionFromProto(proto)
				fn.Env = self.Env
				L.Push(fn)
				return 1
			}
		}
		fn, err := L.Load(strings.NewReader(src), name)
		if err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		L.Push(fn)
		return 1
	})
	L.SetGlobal("loadstring", self)
}

// The value stack starts small and grows on demand up to gopher-lua's fixed default (lua.RegistrySize),
// so "registry overflow" comes at the same depth as in Argo CD's VM, while a state for one evaluation
// no longer allocates and clears the whole 80 KB up front.
const initialRegistrySize = 1024
