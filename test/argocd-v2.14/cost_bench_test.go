package conformance

import (
	"encoding/json"
	"testing"

	"github.com/argoproj/gitops-engine/pkg/health"

	"github.com/analysis-health/analysis-health/internal/bench/costcases"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The cost benchmarks (`make bench`; docs/performance.md is rendered from their output by
// internal/bench/benchdoc) measure one health evaluation per op through Argo CD v2.14.21's real controller path
// (gitops-engine GetResourceHealth → util/lua ResourceHealthOverrides), per kind and path, for ours (the
// form the generator emits for --argocd-version v2.14), builtin and floor. The sets, variants and bodies
// are internal/bench/costcases', shared with test/argocd-v3.6 through test/suite's CostVM.

// argoCD is Argo CD v2.14.21 as the cost benchmarks use it.
func argoCD(b *testing.B) costcases.VM {
	vm := suite.CostVM(b, release)
	vm.DecodeHealth = func(raw []byte) error { return json.Unmarshal(raw, new(health.HealthStatus)) }
	return vm
}

// BenchmarkCost is one evaluation of each variant per op, the variants taking turns, cycling over a set's
// objects, in Argo CD's own code.
func BenchmarkCost(b *testing.B) { costcases.Cost(b, argoCD(b)) }

// BenchmarkPhases splits an evaluation into the steps Argo CD v2.14's util/lua runLua and
// ExecuteHealthLua take, each measured alone with the same gopher-lua calls: setup (lua.NewState, the four
// library openers Argo CD calls, the os preload, the 1 s context, Close), convert (decodeValue), parse and
// compile (every call in v2.14), run, run-cached (run minus run-cached is the lazy compilation) and result.
func BenchmarkPhases(b *testing.B) { costcases.Phases(b, argoCD(b)) }

// BenchmarkWorstCase evaluates the largest objects a cluster plausibly holds (internal/bench/worstcase) through
// Argo CD's real path; the target is at most 10 ms each.
func BenchmarkWorstCase(b *testing.B) { costcases.WorstCase(b, argoCD(b)) }
