package timeline

import (
	"path/filepath"
	"testing"

	"github.com/analysis-health/analysis-health/analysisruns"
)

// TestNewestRunIsTheControllers holds the one rule of "the newest run of an analysis" (package
// analysisruns, which the plugin, the scripts' tests and every e2e check call) against the rollout
// controller's own answer: on every recorded frame of every timeline of both Rollouts versions, wherever
// the Rollout's status names a current run (status.canary.currentStepAnalysisRunStatus,
// currentBackgroundAnalysisRunStatus, status.blueGreen.prePromotionAnalysisRunStatus,
// postPromotionAnalysisRunStatus, status.canary.currentExperiment), the newest run of that analysis for
// the current revision is the run it names.
func TestNewestRunIsTheControllers(t *testing.T) {
	checked := map[string]int{}
	for _, v := range Versions {
		tls, err := Load(filepath.Join("..", "testdata", "timelines"), v)
		if err != nil {
			t.Fatal(err)
		}
		if len(tls) == 0 {
			t.Fatalf("no timelines for %s", v)
		}
		for _, tl := range tls {
			for i, f := range tl.Frames {
				hash := Str(f.Rollout, "status", "currentPodHash")
				rv := analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, hash)
				for typ, name := range analysisruns.StatusRefs(f.Rollout) {
					if typ == analysisruns.Experiment {
						found := false
						for _, e := range rv.Experiments {
							found = found || Str(e, "metadata", "name") == name
						}
						if !found && experimentExists(f, name) {
							t.Errorf("%s %s frame %d: the status names experiment %s, not the revision's newest", v, tl.Name, i, name)
						}
						checked[typ]++
						continue
					}
					// the named run's own analysis (type and step), among every run of the revision
					var key string
					for _, r := range append(append([]analysisruns.Run{}, rv.Runs...), rv.Superseded...) {
						if r.Name == name {
							key = r.Key()
						}
					}
					if key == "" {
						if exists(f, name) {
							t.Errorf("%s %s frame %d: the status names %s (%s), which is not a run of the current revision", v, tl.Name, i, name, typ)
						}
						continue
					}
					if r, _ := rv.Newest(key); r.Name != name {
						t.Errorf("%s %s frame %d: the status names %s as the %s run, analysisruns picks %s", v, tl.Name, i, name, key, r.Name)
					}
					checked[typ]++
				}
			}
		}
	}
	// every kind of reference was compared on some frame, or the test proves nothing about it
	for _, key := range []string{analysisruns.Step, analysisruns.Background, analysisruns.PrePromotion, analysisruns.PostPromotion, analysisruns.Experiment} {
		if checked[key] == 0 {
			t.Errorf("no frame names a %s run: nothing was compared", key)
		}
	}
	t.Logf("compared on frames: %v", checked)
}

func experimentExists(f Frame, name string) bool {
	for _, e := range f.Experiments {
		if Str(e, "metadata", "name") == name {
			return true
		}
	}
	return false
}

func exists(f Frame, name string) bool {
	for _, ar := range f.AnalysisRuns {
		if Str(ar, "metadata", "name") == name {
			return true
		}
	}
	return false
}
