package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// TestRolloutHealthGolden keeps timeline.RolloutHealthFile equal to what v2.14's GetResourceHealth with
// our argocd-cm gives for every frame of every timeline; -update rewrites it.
func TestRolloutHealthGolden(t *testing.T) {
	oursCD, _ := installations(t)
	got := timeline.RolloutHealth{}
	for _, version := range timeline.Versions {
		got[version] = map[string][]string{}
		for _, tl := range loadTimelines(t, version) {
			var frames []string
			for i := range tl.Frames {
				hs := oursCD.resourceHealth(t, tl.Frames[i].RolloutObject())
				frames = append(frames, timeline.FrameHealth(string(hs.Status), hs.Message))
			}
			got[version][tl.Name] = frames
		}
	}
	raw, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	current, err := os.ReadFile(rolloutHealthFile)
	if err == nil && bytes.Equal(current, raw) {
		return
	}
	if golden.Updating() {
		if err := os.WriteFile(rolloutHealthFile, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with Argo CD v2.14's Rollout health; run make e2e UPDATE=1 and review the diff (%v)", rolloutHealthFile, err)
}

// testDir is the proofs' folder (test/), whose testdata/ holds the recorded timelines and reports.
const testDir = "../.."

// rolloutHealthFile is Argo CD v2.14's Rollout health of every recorded frame, which the live suite reads.
var rolloutHealthFile = filepath.Join(testDir, timeline.RolloutHealthFile)
