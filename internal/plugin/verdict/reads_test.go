package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// timelines are the frames test/rollouts/scenarios recorded from Argo Rollouts' real controllers
// (test/testdata/timelines/<version>/*.yaml; test/timeline is their loader, in the test module).
const timelines = "../../../test/testdata/timelines"

type recorded struct {
	name   string
	frames []Objects
}

func loadTimelines(t testing.TB) []recorded {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(timelines, "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded timelines under %s (%v)", timelines, err)
	}
	var out []recorded
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tl struct {
			Frames []struct {
				Rollout      map[string]any   `json:"rollout"`
				AnalysisRuns []map[string]any `json:"analysisRuns"`
				Experiments  []map[string]any `json:"experiments"`
			} `json:"frames"`
		}
		if err := yaml.Unmarshal(raw, &tl); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r := recorded{name: filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".yaml")}
		for _, fr := range tl.Frames {
			r.frames = append(r.frames, Objects{Rollout: fr.Rollout, AnalysisRuns: fr.AnalysisRuns, Experiments: fr.Experiments})
		}
		if len(r.frames) == 0 {
			t.Fatalf("%s: no frames", f)
		}
		out = append(out, r)
	}
	return out
}

// differences judges every frame of tls as the plugin measures a verification (the pin of each
// judgement given to the next), and each frame alone with every option a judgement reads (a revision
// number, the Freight's image, inconclusive as Degraded, a noAnalysis policy), once from the full
// objects and once from their projection (Judge), and lists the frames where the two differ (from the
// first, up to max).
func differences(tls []recorded, max int) []string {
	var diffs []string
	compare := func(what string, objs Objects, opts Options) *Pin {
		if len(diffs) >= max {
			return nil
		}
		full, errFull := judge(objs, opts)
		proj, errProj := Judge(objs, opts)
		if fmt.Sprint(errFull) != fmt.Sprint(errProj) || !reflect.DeepEqual(full, proj) {
			diffs = append(diffs, fmt.Sprintf("%s:\n  full:      %+v %v\n  projected: %+v %v", what, full, errFull, proj, errProj))
		}
		return full.Pin
	}
	for _, tl := range tls {
		final := tl.frames[len(tl.frames)-1].Rollout
		image := ""
		if images := podImages(final); len(images) > 0 {
			image = images[0]
		}
		variants := map[string]Options{
			"alone, inconclusive Degraded, noAnalysis failed": {InconclusiveDegraded: true, NoAnalysis: NoAnalysis{Policy: NoAnalysisFailed}},
			"revision 1": {Revision: "1"},
			"image":      {Image: image},
		}
		var pin *Pin
		for i, objs := range tl.frames {
			pin = compare(fmt.Sprintf("%s frame %d, measured", tl.name, i), objs, Options{Pin: pin})
			for name, opts := range variants {
				compare(fmt.Sprintf("%s frame %d, %s", tl.name, i, name), objs, opts)
			}
		}
	}
	return diffs
}

// TestProjectionJudgesAsTheFullObject: what Reads keeps of the objects is all a judgement reads. Every
// recorded frame, judged from its full objects and from their projection, gets the same verdict
// (phase, message, value, pin), so the watch cache, which holds projections, answers as the API server's
// objects would.
func TestProjectionJudgesAsTheFullObject(t *testing.T) {
	tls := loadTimelines(t)
	for _, d := range differences(tls, 10) {
		t.Error(d)
	}
}

// TestProjectionMissingAFieldIsSeen: the frames catch a projection that drops a field the verdict reads:
// without the last measurement of a metric, a run's owners, the Rollout's steps or an experiment's runs,
// some recorded frame is judged otherwise. (A field no frame tells apart, status.pauseConditions among
// them, is held by the unit tests, which judge through Judge and so through Reads.)
func TestProjectionMissingAFieldIsSeen(t *testing.T) {
	tls := loadTimelines(t)
	for _, c := range []struct{ kind, path string }{
		{"AnalysisRun", "status.metricResults.measurements"},
		{"AnalysisRun", "metadata.ownerReferences"},
		{"Rollout", "spec.strategy.canary.steps"},
		{"Experiment", "status.analysisRuns"},
	} {
		t.Run(c.kind+"."+c.path, func(t *testing.T) {
			saved := Reads[c.kind]
			defer func() { Reads[c.kind] = saved }()
			Reads[c.kind] = without(saved, strings.Split(c.path, "."))
			if diffs := differences(tls, 1); len(diffs) == 0 {
				t.Errorf("no recorded frame is judged otherwise without %s of the %s", c.path, c.kind)
			}
		})
	}
}

// without is a copy of fs without the field at path.
func without(fs Fields, path []string) Fields {
	out := Fields{}
	for k, f := range fs {
		out[k] = f
	}
	if len(path) == 1 {
		delete(out, path[0])
		return out
	}
	f := out[path[0]]
	f.fields = without(f.fields, path[1:])
	out[path[0]] = f
	return out
}
