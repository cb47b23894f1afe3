// Package probe holds the inputs both conformance suites (Argo CD v2.14 here, v3.2 in ./v3) run through
// Argo CD and through the engine, so the two modules test the same things.
package probe

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Case is one probe script.
type Case struct{ Name, Script string }

// Deviation is a case of Argo CD's built-in suites where our script answers differently.
type Deviation struct {
	StatusDiffers bool
	Why           string
}

// Cases probe the parts of Argo CD's VM the engine must reproduce: opened libraries, result
// validation, error text, timeout and value conversion.
var Cases = []Case{
	{"table result", `return {status="Healthy", message="ok"}`},
	{"nil result", `return nil`},
	{"no return", `local x = 1`},
	{"empty table", `return {}`},
	{"lowercase status", `return {status="healthy"}`},
	{"numeric message", `return {status="Healthy", message=42}`},
	{"message only", `return {message="x"}`},
	{"string result", `return "Healthy"`},
	{"number result", `return 1`},
	{"error", `error("boom")`},
	{"error level 0", `error("boom", 0)`},
	{"syntax error", `return {`},
	{"string library", `return {status="Healthy", message=string.upper("a")}`},
	{"string method", `return {status="Healthy", message=("a"):upper()}`},
	{"math library", `return {status="Healthy", message=tostring(math.floor(1.5))}`},
	{"global os", `return {status="Healthy", message=tostring(os.time())}`},
	{"require os", `local os = require("os"); return {status="Healthy", message=type(os.time()) .. type(os.date)}`},
	{"require string", `local s = require("string"); return {status="Healthy"}`},
	{"table.time quirk", `return {status="Healthy", message=type(table.time) .. type(table.date)}`},
	{"io", `return {status="Healthy", message=type(io)}`},
	{"coroutine", `return {status="Healthy", message=type(coroutine)}`},
	{"table.concat", `return {status="Healthy", message=table.concat({"a","b"}, ",")}`},
	{"numbers", `return {status="Healthy", message=tostring(obj.spec.replicas) .. "/" .. tostring(obj.spec.big) .. "/" .. tostring(obj.spec.ratio)}`},
	{"int64", `return {status="Healthy", message=tostring(obj.spec.int64 + 1)}`},
	{"null vanishes", `local n = 0; for k, v in pairs(obj.spec) do n = n + 1 end; return {status="Healthy", message=tostring(n) .. tostring(obj.spec.nothing)}`},
	{"array", `return {status="Healthy", message=tostring(#obj.spec.list) .. obj.spec.list[1]}`},
	{"empty map and list", `return {status="Healthy", message=type(obj.spec.emptyMap) .. tostring(#obj.spec.emptyList)}`},
	{"bool", `return {status=(obj.spec.flag and "Degraded" or "Healthy")}`},
	{"index nil", `return {status=obj.status.phase}`},
	{"concat table", `return {status="Healthy", message="x" .. obj.spec}`},
	{"invalid status field type", `return {status=1}`},
	{"extra fields", `return {status="Suspended", message="m", extra={1,2}}`},
	{"nested error", `local function f() error({code=1}) end f()`},
	{"timeout", `while true do end`},
	{"unpack select", `return {status="Healthy", message=tostring(select("#", unpack({1,2,3})))}`},
	{"load", `local f = loadstring("return 5"); return {status="Healthy", message=tostring(f())}`},
	{"print", `print("x"); return {status="Healthy"}`},
	// gopher-lua keeps one metatable per built-in type (strings, booleans, numbers, functions): a VM
	// evaluates each script fresh in Argo CD, so what one evaluation leaves there no other sees
	// (issue 44; Sandbox runs each case again in the engine's reused states).
	{"built-in metatables", `local b, s, n = getmetatable(true), getmetatable(""), getmetatable(1)
if (b ~= nil and b.leaked) or (s ~= nil and s.leaked) or (n ~= nil and n.leaked) then
  return {status="Degraded", message="state left behind by an earlier evaluation"}
end
setmetatable(true, {leaked=true}); setmetatable("", {leaked=true}); setmetatable(1, {leaked=true})
return {status="Healthy", message=type(getmetatable(true))}`},
}

// Object is the `obj` every probe runs against: every Go type Argo CD may hand the VM.
func Object() map[string]any {
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": "x", "generation": int64(3)},
		"spec": map[string]any{
			"replicas":   float64(3),
			"big":        float64(9007199254740993),
			"ratio":      0.25,
			"int64":      int64(41),
			"int32":      int32(7),
			"nothing":    nil,
			"list":       []any{"a", "b"},
			"emptyMap":   map[string]any{},
			"emptyList":  []any{},
			"flag":       true,
			"observedAt": "2026-01-01T00:00:00Z",
		},
	}
}

// BuiltinDeviations lists every case of Argo CD's own health_test.yaml suites for these kinds where our
// script answers differently, and why. The test fails on an unlisted difference and on a listed case that
// no longer differs, and docs/health-semantics.md must name each case.
var BuiltinDeviations = map[string]Deviation{
	"AnalysisRun/testdata/runningAnalysisRun.yaml":                       {false, "per-metric progress appended"},
	"AnalysisRun/testdata/failedAnalysisRun.yaml":                        {false, "empty run message rebuilt from the failing metric result"},
	"AnalysisRun/testdata/errorAnalysisRun.yaml":                         {false, "empty run message rebuilt from the erroring metric result"},
	"AnalysisRun/testdata/inconclusiveAnalysisRun.yaml":                  {true, "Inconclusive is Suspended, not Unknown (Kargo treats Unknown as Unhealthy); message rebuilt"},
	"AnalysisRun/testdata/inconclusiveAnalysisRunWithStatusMessage.yaml": {true, "Inconclusive is Suspended, not Unknown"},
	"Experiment/testdata/failedExperiment.yaml":                          {false, "failing analysis named"},
	"Experiment/testdata/errorExperiment.yaml":                           {false, "erroring analysis named"},
}

var addresses = regexp.MustCompile(`0x[0-9a-f]+`)

// ErrText blanks table addresses, which differ between any two Lua states.
func ErrText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return addresses.ReplaceAllString(err.Error(), "0x…")
}

// CheckSuiteCounts fails unless doc (docs/argocd-versions.md) states, for version, the built-in health
// suite counts a conformance module measured: "<version>: <total> = <passed> + <deviations>".
func CheckSuiteCounts(t *testing.T, doc, version string, total, passed, deviations int) {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s: %d = %d + %d", version, total, passed, deviations)
	if !strings.Contains(string(raw), want) {
		t.Errorf("%s does not state %q, what this run measured; update its table", doc, want)
	}
}
