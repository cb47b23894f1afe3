package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/plugin/field"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
	"github.com/analysis-health/analysis-health/test/timeline"
)

var mapOf, text = field.Map, field.Text

// TestTimelines plays a verification started at the release over every recorded frame of every
// scenario, as the plugin would measure it: the first judgement pins the released revision, each later
// one is given the pin, and the measurement ends at the first verdict that is not Running. Checked
// against the ground truth of the timelines (test/timeline, whose newest runs come from analysisruns):
// never Successful before every analysis of the released revision passed, Failed once one failed, and
// the final verdict is the outcome the scenario declares (rolled-back, bypassed and replaced revisions
// included). Every value is bounded compact JSON.
//
// The timelines are every one the e2e recorders captured from Argo Rollouts' real controllers
// (test/testdata/timelines/<version>/), read strictly by the loader the e2e tests use.
func TestTimelines(t *testing.T) {
	n := 0
	for _, v := range timeline.Versions {
		tls, err := timeline.Load("../testdata/timelines", v)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tls {
			testTimeline(t, v, tl)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no recorded timelines under ../test/testdata/timelines")
	}
}

func testTimeline(t *testing.T, version string, tl *timeline.Timeline) {
	t.Run(version+"/"+tl.Name, func(t *testing.T) {
		released := tl.ReleasedHash()
		var seq []string
		var pin *verdict.Pin
		final := ""
		for i, f := range tl.Frames {
			objs := verdict.Objects{Rollout: f.Rollout, AnalysisRuns: f.AnalysisRuns, Experiments: f.Experiments}
			v, err := verdict.Judge(objs, verdict.Options{Pin: pin})
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			pin = v.Pin
			if pin != nil && pin.Hash != released {
				t.Fatalf("frame %d: pinned revision %s, the scenario released %s", i, pin.Hash, released)
			}
			if len(seq) == 0 || seq[len(seq)-1] != v.Phase {
				seq = append(seq, v.Phase)
			}
			if len(v.Value) > verdict.DefaultMaxValueBytes || !json.Valid([]byte(v.Value)) || strings.Contains(v.Value, "\n") {
				t.Fatalf("frame %d: value is not bounded compact JSON: %s", i, v.Value)
			}
			// the ground truth speaks of the revision the timeline delivers at its end
			if released == tl.PodTemplateHash {
				truth := tl.Verdicts(i)
				st := mapOf(f.Rollout["status"])
				promoted := text(st["currentPodHash"]) == released && text(st["stableRS"]) == released
				switch {
				case v.Phase == verdict.Successful && !(truth.AllPassed && promoted):
					t.Errorf("frame %d: Successful before every analysis of the revision passed (%v)", i, truth.Pending)
				case len(truth.Failed) > 0 && v.Phase != verdict.Failed:
					t.Errorf("frame %d: %s although %v", i, v.Phase, truth.Failed)
				}
			} else if v.Phase == verdict.Successful {
				t.Errorf("frame %d: Successful for revision %s, which the Rollout no longer delivers (%s)", i, released, tl.PodTemplateHash)
			}
			if v.Phase != verdict.Running {
				final = v.Phase
				break
			}
		}
		if final == "" {
			final = verdict.Running
		}
		if final != tl.Verification {
			t.Errorf("the verification ends %s (%s), the scenario declares %s", final, strings.Join(seq, " → "), tl.Verification)
		}
		t.Logf("%s (%s): %s", tl.Name, tl.Outcome, strings.Join(seq, " → "))
	})
}
