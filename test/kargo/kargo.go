// Package kargo checks Kargo's view of a recorded timeline against its analysis verdicts (package
// timeline), with Kargo's Stage rules from package stage (a module of its own, which the live suite's
// Kargo driver shares). Re-implemented from Kargo v1.11.2 (github.com/akuity/kargo; summarised with file and
// function names in the project's shared/reference/kargo.md §1–§2): Kargo is not a Go module we can import, and
// its module could not share a build with Argo CD v2.14 anyway. Application health comes in as Argo CD's
// status string, so e2e (Argo CD v2.14) and test/argocd-v3.6 (v3.6.2) feed it from their own Argo CD.
package kargo

import (
	"fmt"
	"strings"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// Promotion is the Kargo Promotion's outcome when the sync carries the PostSync barrier hook: Phase
// Succeeded, Errored or Running, decided at Frame.
type Promotion struct {
	Phase string
	Frame int
}

// Problems compares Kargo's view of a timeline (the Stage assessed at every frame, and the Promotion with
// the barrier when there is one; nil when the replay runs no sync) with the analysis verdicts of the same
// frames:
//   - Freight is verified only once every analysis of the revision has passed;
//   - the Stage is Unhealthy in every frame in which an analysis of the revision has Failed or Errored;
//   - an inconclusive analysis never leaves the Stage Healthy;
//   - with the barrier, the Promotion succeeds only once every analysis has passed;
//   - and, so that a script that is never Healthy cannot pass: when the update ends promoted with every
//     analysis passed, the Freight is verified.
//
// Consecutive frames breaking a rule with the same runs are one problem.
func Problems(tl *timeline.Timeline, vs []timeline.Verdicts, s *stage.Stage, p *Promotion) []string {
	if len(vs) != len(tl.Frames) || len(s.Health) != len(tl.Frames) {
		return []string{fmt.Sprintf("%d frames, %d verdicts, %d Stage assessments", len(tl.Frames), len(vs), len(s.Health))}
	}
	var out []string
	if v := s.Verified; v >= 0 && !vs[v].AllPassed {
		why := append(append(append([]string{}, vs[v].Failed...), vs[v].Incon...), vs[v].Pending...)
		out = append(out, fmt.Sprintf("verified at frame %d (%s) although not every analysis passed (%s)", v, tl.Offset(v), strings.Join(why, ", ")))
	}
	out = append(out, ranges(tl, func(i int) (bool, string) {
		if len(vs[i].Failed) == 0 || s.Health[i] == stage.Unhealthy {
			return false, ""
		}
		return true, fmt.Sprintf("Stage %s, not Unhealthy, at %%s while %s", s.Health[i], strings.Join(vs[i].Failed, ", "))
	})...)
	out = append(out, ranges(tl, func(i int) (bool, string) {
		if len(vs[i].Incon) == 0 || s.Health[i] != stage.Healthy {
			return false, ""
		}
		return true, fmt.Sprintf("Stage Healthy at %%s while %s", strings.Join(vs[i].Incon, ", "))
	})...)
	if p != nil && p.Phase == "Succeeded" && !vs[p.Frame].AllPassed {
		out = append(out, fmt.Sprintf("with the barrier, the Promotion Succeeded at frame %d (%s) although not every analysis passed", p.Frame, tl.Offset(p.Frame)))
	}
	last := len(tl.Frames) - 1
	if tl.Outcome == "promoted" && vs[last].AllPassed && s.Verified < 0 {
		out = append(out, "never verified although every analysis passed and the update was promoted")
	}
	return out
}

// ranges groups consecutive frames for which f reports the same message (with %s for the frame range).
func ranges(tl *timeline.Timeline, f func(i int) (bool, string)) []string {
	var out []string
	start, msg := -1, ""
	flush := func(end int) {
		if start < 0 {
			return
		}
		span := fmt.Sprintf("frame %d (%s)", start, tl.Offset(start))
		if end > start {
			span = fmt.Sprintf("frames %d–%d (%s–%s)", start, end, tl.Offset(start), tl.Offset(end))
		}
		out = append(out, fmt.Sprintf(msg, span))
		start = -1
	}
	for i := range tl.Frames {
		bad, m := f(i)
		if bad && start >= 0 && m == msg {
			continue
		}
		flush(i - 1)
		if bad {
			start, msg = i, m
		}
	}
	flush(len(tl.Frames) - 1)
	return out
}

// KnownLimits are the Stage and verification rules our scripts break on a recorded controller state, by
// "<version>/<scenario>", with the exact problem text: a test fails if a problem appears that is not
// listed here, and if a listed one no longer happens. Each is explained in docs/why.md ("What no Rollout
// script can see"). They are the problems without a Promotion; the barrier rule's come after them in
// Problems' order, so a replay with the barrier appends its own.
var KnownLimits = map[string][]string{
	// The background run fails after the controller wrote the promotion. The controller itself ignores
	// it (rollout/analysis.go reconcileBackgroundAnalysisRun returns nil once rolloututil.IsFullyPromoted)
	// and the next Rollout write no longer mentions the run: no field of the Rollout shows the failure.
	"v1.8.5/canary-background-failed-after-promotion": {
		"Stage Healthy, not Unhealthy, at frame 18 (+190s) while checkout-54d7c4976f-2 Failed",
	},
	// The same on v1.10.2, where the failing measurement lands in the write that promotes: the Freight
	// is verified on that Healthy frame.
	"v1.10.2/canary-background-failed-after-promotion": {
		"verified at frame 19 (+200s) although not every analysis passed (checkout-d75d5bf65-2 Failed)",
		"Stage Healthy, not Unhealthy, at frame 19 (+200s) while checkout-d75d5bf65-2 Failed",
	},
}
