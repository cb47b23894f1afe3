package kargo

import (
	"reflect"
	"testing"
	"time"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/timeline"
)

func TestProblems(t *testing.T) {
	passed := timeline.Verdicts{AllPassed: true}
	running := timeline.Verdicts{Pending: []string{"r Running"}}
	failed := timeline.Verdicts{Failed: []string{"r Failed"}}
	incon := timeline.Verdicts{Incon: []string{"r Inconclusive"}}
	cases := []struct {
		name      string
		outcome   string
		verdicts  []timeline.Verdicts
		app       []string
		promotion *Promotion
		want      []string
	}{
		{name: "follows the analysis", outcome: "promoted",
			verdicts: []timeline.Verdicts{running, running, passed}, app: []string{"Progressing", "Progressing", "Healthy"}},
		{name: "verified before the analysis passed", outcome: "promoted",
			verdicts: []timeline.Verdicts{running, passed}, app: []string{"Healthy", "Healthy"},
			want: []string{"verified at frame 0 (+0s) although not every analysis passed (r Running)"}},
		{name: "the reasons of a premature verification, failed first", outcome: "aborted",
			verdicts: []timeline.Verdicts{{Failed: []string{"a Failed"}, Incon: []string{"b Inconclusive"}, Pending: []string{"c Running"}}},
			app:      []string{"Healthy"},
			want: []string{"verified at frame 0 (+0s) although not every analysis passed (a Failed, b Inconclusive, c Running)",
				"Stage Healthy, not Unhealthy, at frame 0 (+0s) while a Failed", "Stage Healthy at frame 0 (+0s) while b Inconclusive"}},
		{name: "failed while not Unhealthy, consecutive frames in one range", outcome: "aborted",
			verdicts: []timeline.Verdicts{running, failed, failed, failed, failed}, app: []string{"Progressing", "Progressing", "Progressing", "Degraded", "Suspended"},
			want: []string{"Stage Progressing, not Unhealthy, at frames 1–2 (+10s–+20s) while r Failed", "Stage Progressing, not Unhealthy, at frame 4 (+40s) while r Failed"}},
		{name: "a different Stage health starts a new range", outcome: "aborted",
			verdicts: []timeline.Verdicts{failed, failed}, app: []string{"Progressing", "Healthy"},
			want: []string{"verified at frame 1 (+10s) although not every analysis passed (r Failed)",
				"Stage Progressing, not Unhealthy, at frame 0 (+0s) while r Failed", "Stage Healthy, not Unhealthy, at frame 1 (+10s) while r Failed"}},
		{name: "inconclusive may be Progressing, not Healthy", outcome: "aborted",
			verdicts: []timeline.Verdicts{incon, incon, incon}, app: []string{"Suspended", "Healthy", "Healthy"},
			want: []string{"verified at frame 1 (+10s) although not every analysis passed (r Inconclusive)",
				"Stage Healthy at frames 1–2 (+10s–+20s) while r Inconclusive"}},
		{name: "never Healthy cannot pass", outcome: "promoted",
			verdicts: []timeline.Verdicts{running, passed}, app: []string{"Progressing", "Progressing"},
			want: []string{"never verified although every analysis passed and the update was promoted"}},
		{name: "never Healthy is right for an abort", outcome: "aborted",
			verdicts: []timeline.Verdicts{running, failed}, app: []string{"Progressing", "Degraded"}},
		{name: "the barrier's Promotion succeeded too early", outcome: "promoted",
			verdicts: []timeline.Verdicts{running, passed}, app: []string{"Progressing", "Healthy"}, promotion: &Promotion{Phase: "Succeeded", Frame: 0},
			want: []string{"with the barrier, the Promotion Succeeded at frame 0 (+0s) although not every analysis passed"}},
		{name: "the barrier's Promotion succeeded in time", outcome: "promoted",
			verdicts: []timeline.Verdicts{running, passed}, app: []string{"Progressing", "Healthy"}, promotion: &Promotion{Phase: "Succeeded", Frame: 1}},
		{name: "an errored Promotion is no problem", outcome: "aborted",
			verdicts: []timeline.Verdicts{running, failed}, app: []string{"Progressing", "Degraded"}, promotion: &Promotion{Phase: "Errored", Frame: -1}},
		{name: "the barrier rule after the Stage rules, before never verified", outcome: "promoted",
			verdicts: []timeline.Verdicts{failed, passed}, app: []string{"Progressing", "Progressing"}, promotion: &Promotion{Phase: "Succeeded", Frame: 0},
			want: []string{"Stage Progressing, not Unhealthy, at frame 0 (+0s) while r Failed",
				"with the barrier, the Promotion Succeeded at frame 0 (+0s) although not every analysis passed",
				"never verified although every analysis passed and the update was promoted"}},
		{name: "frames and verdicts must match", outcome: "promoted",
			verdicts: []timeline.Verdicts{passed}, app: []string{"Healthy", "Healthy"},
			want: []string{"2 frames, 1 verdicts, 2 Stage assessments"}},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := &timeline.Timeline{Outcome: c.outcome}
			s := stage.New()
			for i, a := range c.app {
				tl.Frames = append(tl.Frames, timeline.Frame{Time: t0.Add(time.Duration(i) * 10 * time.Second).Format(time.RFC3339)})
				s.Assess(a)
			}
			if got := Problems(tl, c.verdicts, s, c.promotion); !reflect.DeepEqual(got, c.want) {
				t.Errorf("problems\n  got:  %q\n  want: %q", got, c.want)
			}
		})
	}
}
