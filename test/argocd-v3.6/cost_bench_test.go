package v36

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/analysis-health/analysis-health/internal/bench/costcases"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The cost benchmarks in Argo CD v3.6.2's VM, the counterpart of conformance/cost_bench_test.go (v2.14):
// the same sets, variants and phases, from internal/bench/costcases (`make bench`; docs/performance.md is
// rendered from their output by internal/bench/benchdoc). v3.6 compiles each script once into a
// process-wide cache (util/lua compiledScriptCache), so an evaluation is setup, conversion, run and
// result; parse and compile are measured as the one-time cost they are. One evaluation per op through
// v3.6.2's real controller path (gitops-engine GetResourceHealth → util/lua ResourceHealthOverrides), for
// ours (the form the generator emits for --argocd-version v3.6), builtin and floor. The committed output
// (internal/bench/benchdoc/testdata/v3.6.txt) was measured on v3.6.1, whose util/lua and gitops-engine
// pkg/health v3.6.2 leaves unchanged; benchdoc.VMs names the release a file was measured on.

// argoCD is Argo CD v3.6.2 as the cost benchmarks use it.
func argoCD(b *testing.B) costcases.VM {
	vm := suite.CostVM(b, release)
	// runLuaWithResourceActionParameters sets actionParams for health scripts too (empty: no parameters).
	vm.ExtraGlobals = func(L *lua.LState) { L.SetGlobal("actionParams", L.CreateTable(0, 0)) }
	vm.DecodeHealth = release.DecodeHealth
	return vm
}

// BenchmarkCost is one evaluation of each variant per op, the variants taking turns, cycling over a set's
// objects, in Argo CD's own code.
func BenchmarkCost(b *testing.B) { costcases.Cost(b, argoCD(b)) }

// BenchmarkPhases splits an evaluation into the steps Argo CD v3.6.2's util/lua
// runLuaWithResourceActionParameters and ExecuteHealthLua take, each measured alone with the same
// gopher-lua calls: setup (lua.NewState, the four library openers Argo CD calls, the os preload, the 1 s
// context, the actionParams table, Close), convert (decodeValue), parse and compile (once per process in
// v3.6: cached), run, run-cached (run minus run-cached is the lazy compilation) and result.
func BenchmarkPhases(b *testing.B) { costcases.Phases(b, argoCD(b)) }

// BenchmarkWorstCase evaluates the largest objects a cluster plausibly holds (internal/bench/worstcase)
// through Argo CD's real path; the target is at most 10 ms each.
func BenchmarkWorstCase(b *testing.B) { costcases.WorstCase(b, argoCD(b)) }
