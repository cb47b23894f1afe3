package verdict_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// fixtureVersion is the Rollouts version the fixtures are taken from.
const fixtureVersion = "v1.8.5"

// verdictTestdata holds the fixtures the plugin's unit tests read.
const verdictTestdata = "../../internal/plugin/verdict/testdata"

// fixtureFrames say which recorded frame each of testdata/*.yaml is: a scenario of
// test/testdata/timelines/<fixtureVersion>/ and a rule that picks one of its frames, so a re-recording
// moves the fixture with it.
var fixtureFrames = []struct {
	file, scenario string
	pick           func(tl *timeline.Timeline) int
}{
	{"step-successful", "canary-step-successful", last},
	{"step-running", "canary-step-successful", firstRun(func(phase string, count int64) bool { return phase == "Running" && count >= 1 })},
	{"step-failed", "canary-step-failed", last},
	{"step-inconclusive", "canary-step-inconclusive-resumed", firstRun(func(phase string, _ int64) bool { return phase == "Inconclusive" })},
}

func last(tl *timeline.Timeline) int { return len(tl.Frames) - 1 }

// firstRun picks the first frame with an AnalysisRun whose phase and first metric's count match.
func firstRun(match func(phase string, count int64) bool) func(tl *timeline.Timeline) int {
	return func(tl *timeline.Timeline) int {
		for i, f := range tl.Frames {
			for _, ar := range f.AnalysisRuns {
				var count int64
				if mrs, _ := mapOf(ar["status"])["metricResults"].([]any); len(mrs) > 0 {
					fmt.Sscan(text(mapOf(mrs[0])["count"]), &count)
				}
				if match(text(mapOf(ar["status"])["phase"]), count) {
					return i
				}
			}
		}
		return -1
	}
}

// TestFixturesAreRecorded holds testdata/*.yaml equal to the recorded frames they say they are; -update
// (go test ./verdict/ -run TestFixturesAreRecorded -update) takes them from the timelines again.
func TestFixturesAreRecorded(t *testing.T) {
	tls, err := timeline.Load(filepath.Join("..", "testdata", "timelines"), fixtureVersion)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*timeline.Timeline{}
	for _, tl := range tls {
		byName[tl.Name] = tl
	}
	for _, fx := range fixtureFrames {
		tl := byName[fx.scenario]
		if tl == nil {
			t.Fatalf("%s: no timeline %s", fx.file, fx.scenario)
		}
		i := fx.pick(tl)
		if i < 0 {
			t.Fatalf("%s: no frame of %s matches", fx.file, fx.scenario)
		}
		f := tl.Frames[i]
		raw, err := yaml.Marshal(map[string]any{"rollout": f.Rollout, "analysisRuns": f.AnalysisRuns, "experiments": f.Experiments})
		if err != nil {
			t.Fatal(err)
		}
		header := fmt.Sprintf("# Frame %d of test/testdata/timelines/%s/%s.yaml, recorded from Argo Rollouts %s's controllers by\n"+
			"# test/rollouts/scenarios RunRecord; taken again by: go test ./verdict/ -run TestFixturesAreRecorded -update\n", i, fixtureVersion, fx.scenario, fixtureVersion)
		golden.File(t, filepath.Join(verdictTestdata, fx.file+".yaml"), append([]byte(header), raw...))
	}
}
