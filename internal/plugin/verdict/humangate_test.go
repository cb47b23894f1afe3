package verdict_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
	"github.com/analysis-health/analysis-health/lua"
)

// At a human gate the verification stays Running, whatever argocd-cm's scripts say, and its message is the
// one --human-gate healthy gives in Argo CD; the Rollouts are the controllers', recorded by the live suite
// (TestLiveHumanGate), without their runs: the step run the canary passed is no longer named in its status.
func TestHumanGateRunning(t *testing.T) {
	for _, tc := range []struct{ fixture, want string }{
		{"canary_step_analysis_passed_indefinite_pause.yaml", "Rollout shop/checkout: waiting for a person; analysis passed (steps[1] analysis); paused at steps[3], a pause without duration: CanaryPauseStep; revision d75d5bf65 is not fully promoted yet (stable revision 6fb9f9fdd6)"},
		{"bluegreen_prepromotion_passed_autopromotion_disabled.yaml", "Rollout shop/checkout: waiting for a person; analysis passed (pre-promotion analysis run checkout-d75d5bf65-2-pre); paused before promotion (autoPromotionEnabled: false): BlueGreenPause; revision d75d5bf65 is not fully promoted yet (stable revision 6fb9f9fdd6)"},
		// no analysis before the pause: the default script's message
		{"canary_pause_step.yaml", "Rollout web/frontend is Suspended: CanaryPauseStep"},
	} {
		raw, err := lua.FS.ReadFile("argoproj.io/Rollout/testdata/" + tc.fixture)
		if err != nil {
			t.Fatal(err)
		}
		var ro map[string]any
		if err := yaml.Unmarshal(raw, &ro); err != nil {
			t.Fatal(err)
		}
		v, err := verdict.Judge(verdict.Objects{Rollout: ro}, verdict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Phase != verdict.Running || v.Message != tc.want {
			t.Errorf("%s: %s %q, want Running %q", tc.fixture, v.Phase, v.Message, tc.want)
		}
		if strings.Contains(tc.want, lua.HumanGateMessage) && v.Pin.Promoted {
			t.Errorf("%s: pinned as promoted", tc.fixture)
		}
	}
}
