package lint_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/lint"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script lint.Script
		want   []string // "line: rule"
	}{
		{"clean health", lint.Script{Source: `
local hs = {}
if obj.status ~= nil and obj.status.phase == "Running" then
  hs.status = "Progressing"
  hs.message = "running " .. tostring(#obj.status.items)
  return hs
end
for i, c in ipairs(obj.status and obj.status.conditions or {}) do
  if c.type == "Ready" then return {status = "Healthy"} end
end
return {status = "Unknown", message = table.concat({"a", "b"}, ",")}`}, nil},
		{"string library without open libs", lint.Script{Source: `
local hs = {}
if string.find(obj.status.message, "fail") then hs.status = "Degraded" end
local n = math.max(1, 2)
return hs`}, []string{"3: stdlib", "4: stdlib"}},
		{"string library with open libs", lint.Script{OpenLibs: true, Source: `
if string.find(obj.status.message, "fail") then return {status = "Degraded"} end
return {status = os.date("!%Y") and "Healthy"}`}, nil},
		{"string methods", lint.Script{Source: `
local m = obj.status.message
if m:sub(1, 4) == "fail" or ("x"):upper() == "X" then return {status = "Degraded"} end
return {status = "Healthy"}`}, []string{"3: string-method", "3: string-method"}},
		{"string method on an action, even for a built-in", lint.Script{Role: lint.Action, OpenLibs: false, Kind: "Rollout", Source: `
local name = obj.metadata.name
if name:find("canary") then obj.spec.paused = true end
return obj`}, []string{"3: string-method"}},
		{"safe os", lint.Script{Role: lint.Action, Kind: "CronJob", Source: `
local os = require("os")
obj.metadata.annotations["at"] = os.date("!%Y-%m-%dT%XZ")
local home = os.getenv("HOME")
return obj`}, []string{"4: stdlib"}},
		{"global os is nil even with a local elsewhere", lint.Script{Role: lint.Action, Kind: "CronJob", Source: `
local t = os.time()
return obj`}, []string{"2: stdlib"}},
		{"globals", lint.Script{Source: `
hs = {}
hs.status = "Healthy"
if onj.status then hs.message = "x" end
function helper() return 1 end
local function ok() return helper() end
return hs`}, []string{"2: global", "4: global", "5: global"}},
		{"locals, parameters and loop variables are not globals", lint.Script{Source: `
local function count(list, pred)
  local n = 0
  for _, item in ipairs(list) do if pred(item) then n = n + 1 end end
  for i = 1, 3 do n = n + i end
  repeat local done = true until done
  return n
end
local t = {}
function t.get(self) return self end
function t:name() return self end
return {status = count(obj.items or {}, function(x) return x.ok end) > 0 and "Healthy" or "Degraded"}`}, nil},
		{"actionParams only in actions", lint.Script{Source: `return {status = actionParams and "Healthy" or "Degraded"}`}, []string{"1: global"}},
		{"invalid status", lint.Script{Source: `
local hs = {status = "healthy"}
if obj.status.phase == "Paused" then hs.status = "Paused" end
if obj.x then return {status = "Degraded"} end
return hs`}, []string{"2: status", "3: status"}},
		{"status literals in actions are not health", lint.Script{Role: lint.Action, Kind: "Job", Source: `
obj.status = {}
obj.status["phase"] = "whatever"
return obj`}, nil},
		{"action returning another kind without create", lint.Script{Role: lint.Action, Kind: "CronJob", Source: `
local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name}}
return job`}, []string{"2: kind"}},
		{"action creating another kind", lint.Script{Role: lint.Action, Kind: "CronJob", Source: `
local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name}}
local impacted = {operation = "create", resource = job}
return {impacted}`}, nil},
		{"action keeping its kind", lint.Script{Role: lint.Action, Kind: "Rollout", Source: `
obj.kind = "Rollout"
return obj`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.script.Path = "x.lua"
			got, err := lint.Check(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range got {
				lines = append(lines, strings.SplitN(strings.TrimPrefix(f.String(), "x.lua:"), ": ", 3)[0]+": "+f.Rule)
				if f.Path != "x.lua" || f.Message == "" {
					t.Errorf("finding without path or message: %+v", f)
				}
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("findings %q, want %q\n%v", lines, tc.want, got)
			}
		})
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := lint.Check(lint.Script{Path: "x.lua", Source: "return {status = }"})
	if err == nil || !strings.Contains(err.Error(), "line:1") {
		t.Fatalf("want a syntax error naming line 1, got %v", err)
	}
}

// The globals lint accepts are exactly those the engine's sandbox defines (which the conformance tests
// hold to Argo CD's): with and without open libraries.
func TestGlobalsMatchEngine(t *testing.T) {
	const list = `local t = {} for k in pairs(_G) do table.insert(t, k) end table.sort(t)
return {status = "Healthy", message = table.concat(t, " ")}`
	for _, open := range []bool{false, true} {
		h, err := engine.Engine{Profile: engine.V214, OpenLibs: open}.Health(map[string]any{}, list)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range strings.Fields(h.Message) {
			src := "local x = " + name + "\nreturn {status = 'Healthy'}"
			if name == "obj" {
				continue
			}
			f, err := lint.Check(lint.Script{Path: "x.lua", Source: src, OpenLibs: open})
			if err != nil {
				t.Fatal(err)
			}
			if len(f) != 0 {
				t.Errorf("open libs %v: %s exists in the sandbox, lint says %v", open, name, f)
			}
		}
		// and a name the sandbox lacks is reported
		for _, name := range []string{"string", "math", "os", "io", "coroutine", "debug", "channel", "bit32", "utf8"} {
			if strings.Contains(" "+h.Message+" ", " "+name+" ") {
				continue
			}
			f, _ := lint.Check(lint.Script{Path: "x.lua", Source: "local x = " + name + "\nreturn {status = 'Healthy'}", OpenLibs: open})
			if len(f) != 1 {
				t.Errorf("open libs %v: %s is nil in the sandbox, lint says %v", open, name, f)
			}
		}
	}
}

func TestStatusOnlyInReturnedTables(t *testing.T) {
	src := `
local scratch = {}
if obj.a then scratch.status = "False" end
local hs = {}
if obj.b then hs.status = "Paused" end
local other = {status = "True"}
print(tostring({status = "nope"}))
if obj.c then return {status = "Bad"} end
return hs`
	got, err := lint.Check(lint.Script{Path: "x.lua", Source: src})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range got {
		if f.Rule != lint.RuleStatus {
			t.Errorf("unexpected %v", f)
		}
		lines = append(lines, f.Line)
	}
	if !slices.Equal(lines, []int{5, 8}) {
		t.Errorf("status findings at lines %v, want [5 8]: %v", lines, got)
	}
}
