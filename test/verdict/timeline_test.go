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
// included). Every value is a bounded JSON string, a sentence that names each newest run of the revision
// with its phase, and every structured verdict (the measurement's metadata) bounded compact JSON.
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
			words := checkValue(t, i, v)
			// the ground truth speaks of the revision the timeline delivers at its end
			if released == tl.PodTemplateHash {
				// the value names each newest run (or experiment) of the revision, with the phase its
				// controller wrote
				for _, a := range tl.ExpectedAnalyses() {
					if ar := tl.LatestRun(&tl.Frames[i], a); ar != nil && timeline.Str(ar, "status", "phase") != "" {
						kind := timeline.Str(ar, "kind") // an Experiment, or an AnalysisRun
						if kind == "" {
							kind = "AnalysisRun"
						}
						if run := kind + " " + timeline.Str(ar, "metadata", "name") + " " + timeline.Str(ar, "status", "phase"); !strings.Contains(words, run) {
							t.Errorf("frame %d: the value %q does not name %q", i, words, run)
						}
					}
				}
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

// checkValue holds a verdict's value and structured verdict to what the plugin promises (docs/kargo.md,
// "What the Verification tab shows") and returns the value's words: a JSON string, which Kargo's UI
// JSON.parses and shows as its text, that does not look like a number, which the UI would chart; the
// structured verdict compact JSON of the verdict's phase; both within DefaultMaxValueBytes.
func checkValue(t *testing.T, frame int, v verdict.Verdict) string {
	t.Helper()
	var words string
	var sum verdict.Summary
	switch {
	case len(v.Value) > verdict.DefaultMaxValueBytes || !strings.HasPrefix(v.Value, `"`) || json.Unmarshal([]byte(v.Value), &words) != nil:
		t.Fatalf("frame %d: the value is not a bounded JSON string: %s", frame, v.Value)
	case strings.TrimLeft(strings.TrimSpace(words), "+-.0123456789eExXabcdefABCDEF") == "":
		t.Fatalf("frame %d: the value looks like a number: %s", frame, v.Value)
	case len(v.Structured) > verdict.DefaultMaxValueBytes || strings.Contains(v.Structured, "\n") || json.Unmarshal([]byte(v.Structured), &sum) != nil || sum.Verdict != v.Phase:
		t.Fatalf("frame %d: the structured verdict is not bounded compact JSON of %s: %s", frame, v.Phase, v.Structured)
	}
	if got, ok := verdict.SummaryFromMetadata(v.Metadata()); !ok || got.Verdict != v.Phase {
		t.Fatalf("frame %d: the metadata %v holds no structured verdict of %s", frame, v.Metadata(), v.Phase)
	}
	return words
}
