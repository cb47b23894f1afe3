package e2e

import (
	"fmt"
	"strings"

	"github.com/analysis-health/analysis-health/test/timeline"
)

// renderReport is the Markdown kept in docs/why.md between the generated-block markers.
func renderReport(version string, evals []*evaluation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Argo Rollouts %s\n\n", version)
	fmt.Fprintf(&b, "Recorded from %s; Application health from Argo CD v2.14.21 `controller.AppStateManager.CompareAppState`; Stage health and verification by Kargo v1.11.2's rules (`test/kargo`). A frame is the Rollout (with its AnalysisRuns and Experiments) after one tick of the controllers that changed something; frame 0 is Argo CD applying the new revision, times are from then. Promotion with barrier: the Kargo Promotion's outcome when the sync carries the PostSync barrier hook, replayed through gitops-engine's sync engine (`test/argocd-v2.14/e2e/barrier_test.go`), against argocd-update's default 5-minute timeout.\n\n", evals[0].tl.Controller)
	b.WriteString("| Scenario | Expected verdict (analysis controller) | Analysis verdict over time | Built-in script: Stage first Healthy = Freight verified | Our script: Stage first Healthy = Freight verified | Promotion with barrier, built-in | Promotion with barrier, ours | Built-in script disagrees with the analysis |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, e := range evals {
		problems := "—"
		if len(e.builtin.problems) > 0 {
			problems = strings.Join(e.builtin.problems, "; ")
		}
		verdict := e.tl.Verdict
		if verdict == "" {
			verdict = "none (no analysis)"
		}
		fmt.Fprintf(&b, "| `%s` (%s, [picture](%s)) | %s | %s | %s | %s | %s | %s | %s |\n", e.tl.Name, e.tl.Strategy, picturePath(version, e.tl.Name), cell(verdict), e.analysisVerdict(), e.moment(e.builtin), e.moment(e.ours),
			cell(e.builtin.promotion.String()), cell(e.ours.promotion.String()), cell(problems))
	}
	for _, e := range evals {
		if len(e.builtin.problems) == 0 && len(e.ours.problems) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s `%s`\n\n%s\n\n![%s, Argo Rollouts %s](%s)\n\n", version, e.tl.Name, e.tl.Summary, e.tl.Name, version, picturePath(version, e.tl.Name))
		if len(e.ours.problems) > 0 {
			fmt.Fprintf(&b, "Our script too (a known limit, asserted as such): %s.\n\n", strings.Join(e.ours.problems, "; "))
		}
		b.WriteString("| Frame | Time | What happened before it | Controller phase | Analysis runs of the revision | App health, built-in script | App health, our script | Stage (built-in / ours) |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		for i := range e.tl.Frames {
			f := &e.tl.Frames[i]
			phase := timeline.Str(f.Rollout, "status", "phase")
			if msg := timeline.Str(f.Rollout, "status", "message"); msg != "" {
				phase += ": " + msg
			}
			if phase == "" {
				phase = "—"
			}
			mark := func(r result) string {
				s := string(r.stage[i])
				if r.verified == i {
					s = "**" + s + ", verified**"
				}
				return s
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s / %s |\n", i, e.tl.Offset(i), cell(events(f)), cell(phase), cell(e.runs(f)),
				cell(rolloutHealth(e.builtin, i)), cell(rolloutHealth(e.ours, i)), mark(e.builtin), mark(e.ours))
		}
	}
	return b.String()
}

// moment is when Kargo verifies the Freight, or "never".
func (e *evaluation) moment(r result) string {
	if r.verified < 0 {
		return "never"
	}
	return fmt.Sprintf("frame %d (%s)", r.verified, e.tl.Offset(r.verified))
}

// analysisVerdict summarises the ground truth: when the analyses of the revision passed, failed or
// were inconclusive.
func (e *evaluation) analysisVerdict() string {
	var parts []string
	seen := map[string]bool{}
	note := func(what string, i int) {
		if !seen[what] {
			seen[what] = true
			parts = append(parts, fmt.Sprintf("%s at frame %d (%s)", what, i, e.tl.Offset(i)))
		}
	}
	for i, v := range e.verdicts {
		if len(v.Incon) > 0 {
			note("inconclusive", i)
		}
		if len(v.Failed) > 0 {
			note(strings.ToLower(strings.Fields(v.Failed[0])[1]), i)
		}
		if v.AllPassed {
			note("all passed", i)
		}
	}
	if len(parts) == 0 {
		return "never decided"
	}
	return strings.Join(parts, ", ")
}

// runs lists the revision's AnalysisRuns in a frame with their phase (terminated runs marked).
func (e *evaluation) runs(f *timeline.Frame) string {
	var parts []string
	for _, ar := range f.AnalysisRuns {
		if timeline.Str(ar, "metadata", "annotations", "rollout.argoproj.io/revision") != e.tl.Revision {
			continue
		}
		phase := timeline.Str(ar, "status", "phase")
		if phase == "" {
			phase = "(no status)"
		}
		if timeline.Str(ar, "spec", "terminate") == "true" && phase != "Successful" {
			phase += ", terminating"
		}
		parts = append(parts, fmt.Sprintf("%s %s", timeline.Str(ar, "metadata", "name"), phase))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "<br>")
}

// events are the world's events before the frame, without the reconcile itself.
func events(f *timeline.Frame) string {
	var out []string
	for _, ev := range f.Events {
		if ev != "rollout controller reconcile" {
			out = append(out, ev)
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, "<br>")
}

// rolloutHealth is the App health with the Rollout's own message (the App-level message is empty).
func rolloutHealth(r result, i int) string {
	s := string(r.app[i].Status)
	if m := r.rollout[i].Message; m != "" {
		s += ": " + m
	}
	return s
}

func cell(s string) string {
	return strings.ReplaceAll(s, "|", "\\|")
}
