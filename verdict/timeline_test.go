package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/e2e/timeline"
	"github.com/analysis-health/analysis-health/verdict"
)

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// truth is the ground truth of a frame from the runs themselves: passed when the revision is fully
// promoted and the newest run of each analysis (type and step; retries carry the name's collision
// counter, hence are longer or greater) and every experiment of the revision is Successful; failed names
// newest runs that Failed or Errored.
func truth(ro map[string]any, runs, experiments []map[string]any) (passed bool, failed []string) {
	st := mapOf(ro["status"])
	hash := text(st["currentPodHash"])
	passed = hash != "" && text(st["stableRS"]) == hash
	exps := map[string]bool{}
	for _, e := range experiments {
		if text(mapOf(mapOf(e["metadata"])["labels"])[verdict.LabelPodTemplateHash]) != hash {
			continue
		}
		exps[text(mapOf(e["metadata"])["name"])] = true
		if text(mapOf(e["status"])["phase"]) != verdict.Successful {
			passed = false
		}
	}
	newest := map[string]map[string]any{}
	for _, ar := range runs {
		md := mapOf(ar["metadata"])
		labels := mapOf(md["labels"])
		name := text(md["name"])
		key := ""
		refs, _ := md["ownerReferences"].([]any)
		for _, ref := range refs {
			if r := mapOf(ref); text(r["kind"]) == "Experiment" && exps[text(r["name"])] {
				key = "experiment/" + name
			}
		}
		if key == "" {
			if text(labels[verdict.LabelPodTemplateHash]) != hash {
				continue
			}
			key = text(labels[verdict.LabelRolloutType]) + "/" + text(labels[verdict.LabelStepIndex])
		}
		prev := text(mapOf(newest[key]["metadata"])["name"])
		if newest[key] == nil || len(name) > len(prev) || (len(name) == len(prev) && name > prev) {
			newest[key] = ar
		}
	}
	for _, ar := range newest {
		switch p := text(mapOf(ar["status"])["phase"]); p {
		case verdict.Successful:
		case verdict.Failed, verdict.Error:
			passed = false
			failed = append(failed, text(mapOf(ar["metadata"])["name"])+" "+p)
		default:
			passed = false
		}
	}
	return passed, failed
}

// TestTimelines judges every recorded frame of every scenario and checks the verdict against the runs
// themselves: never Successful before every analysis of the revision passed; Failed in every frame in
// which the newest run of an analysis Failed or Errored; and in the last frame Successful for a
// promoted revision whose analyses all passed, Failed for an aborted one. Every value is bounded
// compact JSON.
//
// The timelines are every one the e2e recorders captured from Argo Rollouts' real controllers
// (e2e/testdata/timelines/<version>/), read strictly by the loader the e2e tests use.
func TestTimelines(t *testing.T) {
	n := 0
	for _, v := range timeline.Versions {
		tls, err := timeline.Load("../e2e/testdata/timelines", v)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tls {
			testTimeline(t, v, tl)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no recorded timelines under ../e2e/testdata/timelines")
	}
}

func testTimeline(t *testing.T, version string, tl *timeline.Timeline) {
	t.Run(version+"/"+tl.Name, func(t *testing.T) {
		if len(tl.Frames) == 0 {
			t.Fatal("no frames")
		}
		var seq []string
		var last string
		clean := true // no run of the scenario ever Failed, Errored or was Inconclusive
		for i, f := range tl.Frames {
			for _, ar := range f.AnalysisRuns {
				switch text(mapOf(ar["status"])["phase"]) {
				case verdict.Failed, verdict.Error, verdict.Inconclusive:
					clean = false
				}
			}
			objs := verdict.Objects{Rollout: f.Rollout, AnalysisRuns: f.AnalysisRuns, Experiments: f.Experiments}
			v, err := verdict.Judge(objs, verdict.Options{})
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if len(seq) == 0 || seq[len(seq)-1] != v.Phase {
				seq = append(seq, v.Phase)
			}
			last = v.Phase
			passed, failed := truth(f.Rollout, f.AnalysisRuns, f.Experiments)
			switch {
			case v.Phase == verdict.Successful && !passed:
				t.Errorf("frame %d: Successful before every analysis of the revision passed", i)
			case len(failed) > 0 && v.Phase != verdict.Failed:
				t.Errorf("frame %d: %s although %v", i, v.Phase, failed)
			}
			if len(v.Value) > verdict.DefaultMaxValueBytes || !json.Valid([]byte(v.Value)) || strings.Contains(v.Value, "\n") {
				t.Fatalf("frame %d: value is not bounded compact JSON: %s", i, v.Value)
			}
		}
		switch {
		case tl.Outcome == "aborted" && last != verdict.Failed:
			t.Errorf("aborted, but the last verdict is %s", last)
		case tl.Outcome == "promoted" && clean && last != verdict.Successful:
			t.Errorf("promoted with every analysis passed, but the last verdict is %s", last)
		}
		t.Logf("%s (%s): %s", tl.Name, tl.Outcome, strings.Join(seq, " → "))
	})
}
