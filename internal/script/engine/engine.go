// Package engine evaluates Argo CD resource-customization Lua (health and actions) the way Argo CD's
// util/lua VM does: gopher-lua with only the libraries Argo CD opens, its 1 s timeout, its conversion of the
// object into Lua and its validation of what the script returns, and, for health, what gitops-engine's
// GetResourceHealth makes of that result (objects being deleted, "no health"). The conformance tests
// prove, fixture by fixture, that results equal those of Argo CD v2.14's, v3.2's and v3.6's own code.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/analysis-health/analysis-health/verify/result"
)

// DefaultTimeout is Argo CD's per-script deadline (util/lua/lua.go runLua: context.WithTimeout 1 s).
const DefaultTimeout = time.Second

// Health statuses Argo CD accepts from a script (util/lua/lua.go isValidHealthStatusCode).
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Suspended   = "Suspended"
	Degraded    = "Degraded"
	Missing     = "Missing"
	Unknown     = "Unknown"
)

// Messages Argo CD produces itself; tests compare them exactly.
const (
	invalidHealthStatus = "Lua returned an invalid health status"
	incorrectReturnType = "expect %s output from Lua script, not %s"
)

// Health is a health script's result, Argo CD's HealthStatus. It is defined in the public result package
// so that verify's suites and results, which hold it, can be named by a user's module.
type Health = result.Health

// Engine is a value like Argo CD's lua.VM: every evaluation gets a fresh Lua state.
type Engine struct {
	// Profile is the Argo CD release line to reproduce; empty means Default.
	Profile Profile
	// OpenLibs opens gopher-lua's full standard library, as Argo CD does for its built-in scripts and for
	// argocd-cm scripts with resource.customizations.useOpenLibs.<group>_<Kind>: "true".
	OpenLibs bool
	// FileAccess keeps the base library's dofile and loadfile, and require of a module file, as Argo CD's
	// controller has them on every state; without it (and without OpenLibs, which implies it) they refuse
	// before opening anything (fileaccess.go).
	FileAccess bool
	// Timeout defaults to DefaultTimeout.
	Timeout time.Duration
	// ReuseStates reuses sandboxed states between evaluations, each put back as it was made before its next
	// use (statepool.go), for callers that evaluate many objects; OpenLibs states are always fresh.
	ReuseStates bool
}

// Health runs a health script against obj and validates the result as Argo CD's ExecuteHealthLua does,
// flattening "no health" (a v3.6 script returning nil) into the zero Health. Use Execute where the two must
// be told apart and ResourceHealth for what Argo CD records.
func (e Engine) Health(obj map[string]any, script string) (Health, error) {
	return flatten(e.Execute(obj, script))
}

// Execute is Argo CD's ExecuteHealthLua: an empty table, or a table whose fields do not decode (a numeric
// message), is an empty Health, an unknown status becomes Unknown with Argo CD's message, and any other
// return type is an error. A nil result is an empty Health before v3.6 and nil ("no health") from v3.6.
func (e Engine) Execute(obj map[string]any, script string) (*Health, error) {
	return e.execute(func(L *lua.LState) (lua.LValue, error) { return ToLua(L, obj), nil }, script)
}

func flatten(h *Health, err error) (Health, error) {
	if h == nil {
		return Health{}, err
	}
	return *h, err
}

// execute is Execute with obj built into the state by build.
func (e Engine) execute(build func(*lua.LState) (lua.LValue, error), script string) (*Health, error) {
	var h *Health
	err := e.runWith(build, script, nil, func(ret lua.LValue) error {
		switch ret.Type() {
		case lua.LTNil:
			if !e.Profile.AtLeast(V36) {
				h = &Health{}
			}
			return nil
		case lua.LTTable:
		default:
			return fmt.Errorf(incorrectReturnType, "table", ret.Type().String())
		}
		raw, err := encodeReturned(ret)
		if err != nil {
			return err
		}
		h, err = e.decodeHealth(raw)
		return err
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// decodeHealth decodes into the profile's HealthStatus: before v3.6 it has no deletionMessage, so a
// script's deletionMessage is ignored, even one of the wrong type.
func (e Engine) decodeHealth(raw []byte) (*Health, error) {
	var h Health
	var err error
	if e.Profile.AtLeast(V36) {
		err = json.Unmarshal(raw, &h)
	} else {
		var old struct {
			Status  string `json:"status,omitempty"`
			Message string `json:"message,omitempty"`
		}
		err = json.Unmarshal(raw, &old)
		h = Health{Status: old.Status, Message: old.Message}
	}
	if err != nil {
		// Argo CD swallows every type error (an empty table encodes as [], a numeric message as a number)
		// into an empty status rather than failing.
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return &Health{}, nil
		}
		return nil, err
	}
	if !validStatus(h.Status) {
		return &Health{Status: Unknown, Message: invalidHealthStatus}, nil
	}
	return &h, nil
}

func validStatus(s string) bool {
	switch s {
	case Healthy, Progressing, Suspended, Degraded, Missing, Unknown:
		return true
	}
	return false
}

// run evaluates script with obj as the global `obj` and hands the value left on the stack to read,
// before the state is closed.
func (e Engine) run(obj map[string]any, script string, params map[string]string, read func(lua.LValue) error) error {
	return e.runWith(func(L *lua.LState) (lua.LValue, error) { return ToLua(L, obj), nil }, script, params, read)
}

func (e Engine) runWith(build func(*lua.LState) (lua.LValue, error), script string, params map[string]string, read func(lua.LValue) error) (err error) {
	var L *lua.LState
	if e.ReuseStates && !e.OpenLibs && !e.FileAccess {
		var release func(ok bool)
		L, release = acquireState()
		defer func() { release(err == nil) }()
	} else {
		L = lua.NewState(lua.Options{SkipOpenLibs: !e.OpenLibs, RegistrySize: initialRegistrySize, RegistryMaxSize: lua.RegistrySize})
		defer L.Close()
		openSandbox(L)
		if !e.OpenLibs && !e.FileAccess {
			closeFileAccess(L)
		}
	}

	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	L.SetContext(ctx)
	obj, err := build(L)
	if err != nil {
		return err
	}
	L.SetGlobal("obj", obj)
	if e.Profile.AtLeast(V32) {
		tbl := L.CreateTable(0, len(params))
		for k, v := range params {
			tbl.RawSetH(lua.LString(k), lua.LString(v))
		}
		L.SetGlobal("actionParams", tbl)
	}

	if err := e.exec(L, script); err != nil {
		return err
	}
	return read(L.Get(-1))
}

func (e Engine) exec(L *lua.LState, script string) error {
	proto, ok := compile(script)
	if !ok {
		// Let gopher-lua produce the syntax error so its text is exactly Argo CD's.
		return e.scrub(L.DoString(script))
	}
	L.Push(L.NewFunctionFromProto(proto))
	return e.scrub(L.PCall(0, lua.MultRet, nil))
}

// scrub reproduces v3's removal of the stack traceback from runtime errors (util/lua/lua.go
// runLuaWithResourceActionParameters); v2 reports it.
func (e Engine) scrub(err error) error {
	if err == nil || !e.Profile.AtLeast(V32) {
		return err
	}
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorRun {
		apiErr.StackTrace = ""
	}
	return err
}

// Parsing dominates the cost of a short script; compiled prototypes are immutable and shared safely
// between states (Argo CD v3.6 caches them the same way, in a 1024-entry LRU). The cache stops growing at
// maxCachedScripts: a process evaluates a handful of scripts, and one fed endless distinct sources
// (a fuzzer) must not grow without bound.
var (
	protoCache   sync.Map // script source -> *lua.FunctionProto
	cachedProtos atomic.Int64
)

const maxCachedScripts = 1024

func compile(script string) (*lua.FunctionProto, bool) {
	if p, ok := protoCache.Load(script); ok {
		return p.(*lua.FunctionProto), true
	}
	chunk, err := parse.Parse(strings.NewReader(script), "<string>")
	if err != nil {
		return nil, false
	}
	proto, err := lua.Compile(chunk, "<string>")
	if err != nil {
		return nil, false
	}
	if cachedProtos.Load() < maxCachedScripts {
		if _, loaded := protoCache.LoadOrStore(script, proto); !loaded {
			cachedProtos.Add(1)
		}
	}
	return proto, true
}

// CheckSyntax reports a script that Argo CD could not load, with gopher-lua's message.
func CheckSyntax(script string) error {
	if _, ok := compile(script); ok {
		return nil
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	_, err := L.LoadString(script)
	return err
}

// ToLua converts a decoded JSON/YAML object the way Argo CD's decodeValue does (util/lua/lua.go, v2.14 to
// v3.6): float64, int, int32 and int64 become Lua numbers, json.Number stays a string, null and every type
// it does not list (float32 among them) become nil, so null keys vanish.
func ToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case json.Number:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(ToLua(L, item))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetH(lua.LString(k), ToLua(L, item))
		}
		return t
	}
	return lua.LNil
}
