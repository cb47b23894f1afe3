package picture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/test/timeline"
)

const timelines = "../" + timeline.Dir

// The run lanes hold what the frames hold: every run and experiment of the revision the verdicts read
// (timeline.LatestRun), its last recorded phase at the end of its bar, at least the measurements its last
// frame keeps, and spans that follow each other without gaps inside the picture.
func TestRunLanes(t *testing.T) {
	for _, v := range timeline.Versions {
		tls, err := timeline.Load(timelines, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tls {
			t.Run(v+"/"+tl.Name, func(t *testing.T) {
				times, end := frameTimes(tl)
				lanes := runLanes(tl, times, end)
				byName := map[string]*runLane{}
				for _, l := range lanes {
					byName[l.Name] = l
				}
				last := &tl.Frames[len(tl.Frames)-1]
				for _, a := range tl.ExpectedAnalyses() {
					if run := tl.LatestRun(last, a); run != nil && byName[timeline.Str(run, "metadata", "name")] == nil {
						t.Errorf("no lane for %s (%s)", a, timeline.Str(run, "metadata", "name"))
					}
				}
				for _, l := range lanes {
					var lastSeen map[string]any
					for i := range tl.Frames {
						for _, o := range append(append([]map[string]any{}, tl.Frames[i].AnalysisRuns...), tl.Frames[i].Experiments...) {
							if timeline.Str(o, "metadata", "name") == l.Name {
								lastSeen = o
							}
						}
					}
					phase := timeline.Str(lastSeen, "status", "phase")
					if got := l.Spans[len(l.Spans)-1].State; !strings.HasPrefix(got, phase) {
						t.Errorf("%s ends %q, its last frame says %q", l.Name, got, phase)
					}
					if terminal(phase) != (l.End >= 0) {
						t.Errorf("%s: phase %s, end %v", l.Name, phase, l.End)
					}
					kept := 0
					results, _ := field(lastSeen, "status")["metricResults"].([]any)
					for _, r := range results {
						ms, _ := r.(map[string]any)["measurements"].([]any)
						kept += len(ms)
					}
					if len(l.Marks) < kept {
						t.Errorf("%s: %d marks, its last frame keeps %d measurements", l.Name, len(l.Marks), kept)
					}
					for i, s := range l.Spans {
						if s.From < 0 || s.To > end || s.To < s.From || (i > 0 && s.From != l.Spans[i-1].To) {
							t.Errorf("%s: span %d [%v, %v) after [%v, %v) in a picture ending at %v", l.Name, i, s.From, s.To, l.Spans[max(i-1, 0)].From, l.Spans[max(i-1, 0)].To, end)
						}
					}
					for i := 1; i < len(l.Marks); i++ {
						if l.Marks[i].At < l.Marks[i-1].At {
							t.Errorf("%s: marks out of order", l.Name)
						}
					}
				}
			})
		}
	}
}

// Draw refuses results that do not belong to the timeline instead of drawing something wrong.
func TestDrawRejectsMismatchedResults(t *testing.T) {
	tls, err := timeline.Load(timelines, timeline.Versions[0])
	if err != nil {
		t.Fatal(err)
	}
	tl := tls[0]
	n := len(tl.Frames)
	ok := Installation{App: make([]string, n), Stage: make([]string, n), Verified: -1}
	short := Installation{App: make([]string, n-1), Stage: make([]string, n), Verified: -1}
	late := ok
	late.Verified = n
	for name, r := range map[string]Results{
		"too few App values": {Builtin: ok, Ours: short},
		"verified too late":  {Builtin: late, Ours: ok},
	} {
		if _, err := Draw(tl, r); err == nil || !strings.Contains(err.Error(), tl.Name) {
			t.Errorf("%s: Draw = %v, want an error naming %s", name, err, tl.Name)
		}
	}
	if _, err := Draw(tl, Results{Builtin: ok, Ours: ok}); err != nil {
		t.Errorf("Draw: %v", err)
	}
}

func TestLoadPluginReport(t *testing.T) {
	dir := t.TempDir()
	write := func(version, s string) {
		if err := os.WriteFile(filepath.Join(dir, version+".yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a field the pictures do not know is no error: the recorder owns the format
	write("v1", "controller: x\nscenarios:\n- scenario: a\n  newField: 3\n  verifications:\n    at release: Running → Failed\n")
	r, err := LoadPluginReport(dir, "v1")
	if err != nil || r["a"][VerificationAtRelease] != "Running → Failed" {
		t.Errorf("LoadPluginReport = %v, %v", r, err)
	}
	if r, err := LoadPluginReport(dir, "v2"); err != nil || len(r) != 0 {
		t.Errorf("no report: %v, %v", r, err)
	}
	write("v3", "scenarios: [")
	if _, err := LoadPluginReport(dir, "v3"); err == nil || !strings.Contains(err.Error(), "v3.yaml") {
		t.Errorf("a broken report: %v, want an error naming the file", err)
	}
	write("v4", "scenarios:\n- verifications: {}\n")
	if _, err := LoadPluginReport(dir, "v4"); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("an entry without a name: %v", err)
	}
	// the committed reports load
	for _, v := range timeline.Versions {
		r, err := LoadPluginReport("../"+PluginDir, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(r) == 0 {
			t.Errorf("%s: the committed plugin report has no scenarios", v)
		}
	}
}
