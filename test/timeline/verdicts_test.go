package timeline

import (
	"reflect"
	"testing"
)

// canary is a Rollout named checkout whose spec has the given canary steps and background analysis.
func canary(steps []any, background bool, status map[string]any) map[string]any {
	c := map[string]any{"steps": steps}
	if background {
		c["analysis"] = map[string]any{"templates": []any{}}
	}
	return map[string]any{
		"metadata": map[string]any{"name": "checkout"},
		"spec":     map[string]any{"strategy": map[string]any{"canary": c}},
		"status":   status,
	}
}

func run(name, kind, step, revision, phase string, terminate bool) map[string]any {
	labels := map[string]any{"rollouts-pod-template-hash": "abc", "rollout-type": kind}
	if step != "" {
		labels["step-index"] = step
	}
	ar := map[string]any{
		"metadata": map[string]any{"name": name, "labels": labels, "annotations": map[string]any{"rollout.argoproj.io/revision": revision},
			"ownerReferences": []any{map[string]any{"kind": "Rollout", "name": "checkout"}}},
		"spec":   map[string]any{},
		"status": map[string]any{"phase": phase},
	}
	if terminate {
		ar["spec"] = map[string]any{"terminate": true}
	}
	return ar
}

var (
	analysisStep   = []any{map[string]any{"analysis": map[string]any{}}}
	experimentStep = []any{map[string]any{"setWeight": int64(20)}, map[string]any{"experiment": map[string]any{"analyses": []any{}}}}
	promoted       = map[string]any{"stableRS": "abc", "currentPodHash": "abc"}
)

func TestVerdicts(t *testing.T) {
	type frame struct {
		status      map[string]any
		events      []string
		runs        []map[string]any
		experiments []map[string]any
	}
	cases := []struct {
		name       string
		outcome    string
		steps      []any
		background bool
		frames     []frame
		want       Verdicts // of the last frame
	}{
		{name: "no analysis asked", frames: []frame{{}}, want: Verdicts{AllPassed: true}},
		{name: "a rollback runs no analysis", outcome: "rolled-back", steps: analysisStep, frames: []frame{{}}, want: Verdicts{AllPassed: true}},
		{name: "step analysis not started", steps: analysisStep, frames: []frame{{}},
			want: Verdicts{Pending: []string{"step 0 analysis not started"}}},
		{name: "successful", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Successful", false)}}},
			want: Verdicts{AllPassed: true}},
		{name: "failed", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Failed", false)}}},
			want: Verdicts{Failed: []string{"r Failed"}}},
		{name: "error", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Error", false)}}},
			want: Verdicts{Failed: []string{"r Error"}}},
		{name: "inconclusive", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Inconclusive", false)}}},
			want: Verdicts{Incon: []string{"r Inconclusive"}}},
		{name: "running", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Running", false)}}},
			want: Verdicts{Pending: []string{"r Running"}}},
		{name: "no status yet", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "", false)}}},
			want: Verdicts{Pending: []string{"r Pending"}}},
		{name: "terminated while running", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Running", true)}}},
			want: Verdicts{AllPassed: true}},
		{name: "terminated after failing still failed", steps: analysisStep, frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Failed", true)}}},
			want: Verdicts{Failed: []string{"r Failed"}}},
		{name: "background released by the promotion", background: true,
			frames: []frame{{status: promoted, runs: []map[string]any{run("bg", "Background", "", "2", "Running", false)}}},
			want:   Verdicts{AllPassed: true}},
		{name: "background still current after the promotion", background: true,
			frames: []frame{{status: map[string]any{"stableRS": "abc", "currentPodHash": "abc", "canary": map[string]any{"currentBackgroundAnalysisRunStatus": map[string]any{"name": "bg"}}},
				runs: []map[string]any{run("bg", "Background", "", "2", "Running", false)}}},
			want: Verdicts{Pending: []string{"bg Running"}}},
		{name: "background not released before the promotion", background: true,
			frames: []frame{{status: map[string]any{"stableRS": "old", "currentPodHash": "abc"}, runs: []map[string]any{run("bg", "Background", "", "2", "Running", false)}}},
			want:   Verdicts{Pending: []string{"bg Running"}}},
		{name: "the latest attempt decides", steps: analysisStep,
			frames: []frame{{runs: []map[string]any{run("r.1", "Step", "0", "2", "Successful", false), run("r", "Step", "0", "2", "Failed", false)}}},
			want:   Verdicts{AllPassed: true}},
		{name: "another revision's run does not count", steps: analysisStep,
			frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "1", "Successful", false)}}},
			want:   Verdicts{Pending: []string{"step 0 analysis not started"}}},
		{name: "another step's run does not count", steps: analysisStep,
			frames: []frame{{runs: []map[string]any{run("r", "Step", "1", "2", "Successful", false)}}},
			want:   Verdicts{Pending: []string{"step 0 analysis not started"}}},
		{name: "experiment failed", steps: experimentStep,
			frames: []frame{{experiments: []map[string]any{{"metadata": map[string]any{"name": "checkout-abc-2-1",
				"labels": map[string]any{"rollouts-pod-template-hash": "abc"}, "ownerReferences": []any{map[string]any{"kind": "Rollout", "name": "checkout"}}},
				"status": map[string]any{"phase": "Failed"}}}}},
			want: Verdicts{Failed: []string{"checkout-abc-2-1 Failed"}}},
		{name: "experiment not started", steps: experimentStep, frames: []frame{{}},
			want: Verdicts{Pending: []string{"step 1 experiment not started"}}},
		{name: "promoted past an inconclusive run", steps: analysisStep,
			frames: []frame{
				{runs: []map[string]any{run("r", "Step", "0", "2", "Inconclusive", false)}},
				{events: []string{"user runs kubectl argo rollouts promote checkout"}, runs: []map[string]any{run("r", "Step", "0", "2", "Inconclusive", false)}},
			},
			want: Verdicts{AllPassed: true}},
		{name: "a promotion before the verdict does not count", steps: analysisStep,
			frames: []frame{
				{events: []string{"user runs kubectl argo rollouts promote checkout"}, runs: []map[string]any{run("r", "Step", "0", "2", "Inconclusive", false)}},
			},
			want: Verdicts{Incon: []string{"r Inconclusive"}}},
		{name: "retried after the failure", steps: analysisStep,
			frames: []frame{
				{status: map[string]any{"abort": true}, runs: []map[string]any{run("r", "Step", "0", "2", "Failed", false)}},
				{runs: []map[string]any{run("r", "Step", "0", "2", "Failed", false)}},
			},
			want: Verdicts{Pending: []string{"r Failed, retried"}}},
		{name: "still aborted", steps: analysisStep,
			frames: []frame{
				{status: map[string]any{"abort": true}, runs: []map[string]any{run("r", "Step", "0", "2", "Failed", false)}},
				{status: map[string]any{"abort": true}, runs: []map[string]any{run("r", "Step", "0", "2", "Failed", false)}},
			},
			want: Verdicts{Failed: []string{"r Failed"}}},
		{name: "every analysis counts", steps: analysisStep, background: true,
			frames: []frame{{runs: []map[string]any{run("r", "Step", "0", "2", "Successful", false), run("bg", "Background", "", "2", "Inconclusive", false)}}},
			want:   Verdicts{Incon: []string{"bg Inconclusive"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := &Timeline{Outcome: c.outcome, Revision: "2", PodTemplateHash: "abc"}
			if tl.Outcome == "" {
				tl.Outcome = "promoted"
			}
			for _, f := range c.frames {
				tl.Frames = append(tl.Frames, Frame{Events: f.events, Rollout: canary(c.steps, c.background, f.status), AnalysisRuns: f.runs, Experiments: f.experiments})
			}
			all := tl.AllVerdicts()
			if len(all) != len(tl.Frames) {
				t.Fatalf("%d verdicts for %d frames", len(all), len(tl.Frames))
			}
			if got := all[len(all)-1]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("verdicts %+v, want %+v", got, c.want)
			}
		})
	}
}
