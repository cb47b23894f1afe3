package suite

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/bench/costcases"
)

// CostVM is the release as the cost benchmarks (internal/bench/costcases) use it: ours in the form the
// generator emits for the release line, the built-ins from its tree, every evaluation through its
// controller path. The adapter adds what its runLua sets besides the libraries (ExtraGlobals) and its
// HealthStatus decoding (DecodeHealth).
func CostVM(b *testing.B, r Release) costcases.VM {
	return costcases.VM{
		ArgoCDVersion: string(r.Profile()),
		Profile:       r.Profile(),
		Builtins:      r.Builtins(),
		Evaluator: func(data map[string]string) (costcases.Eval, error) {
			if data == nil {
				return Defaults(r).Evaluator(), nil
			}
			s, err := r.Load(b, ArgoCM(data))
			if err != nil {
				return nil, err
			}
			return s.Evaluator(), nil
		},
	}
}
