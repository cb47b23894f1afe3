// Package picture draws one recorded timeline (package timeline) with what the e2e proof made of it, as an
// SVG for docs/timelines/: time runs left to right on the recorded clock; the AnalysisRuns and
// Experiments of the delivered revision, the Rollout's phase, then for Argo CD's built-in health and for
// ours, one above the other, the Application's health, Kargo's Stage health, the moment the Freight is
// verified, the Promotion with the barrier hook and the plugin's verification. Everything in a picture
// comes from the timeline and the Results the caller computed; nothing is written per scenario, so a new
// recording needs nothing here.
package picture

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// Results are what the e2e proof computed for one timeline.
type Results struct {
	Version string // Argo Rollouts version of the recording
	Builtin Installation
	Ours    Installation
	// AtRelease is the plugin verification started when Argo CD applied the revision, as the plugin
	// report holds it (a phase sequence, "Running → Successful"); "" when the report has no entry.
	AtRelease string
}

// Installation is one Argo CD installation's view of the timeline and Kargo's view through it.
type Installation struct {
	App      []string // Application health status per frame
	Stage    []string // Kargo Stage health per frame
	Verified int      // frame at which Kargo verifies the Freight, -1 never
	Promo    Promotion
	Problems []string // where Kargo's verdict and the analysis verdict disagree
	// Verification is Kargo's verification with the plugin, started when this installation's Stage is
	// first Healthy: the plugin report's phase sequence, "not started", or "" when the report has no entry.
	Verification string
}

// Promotion is the Kargo Promotion with the PostSync barrier: Running from frame 0 until At, then Phase.
type Promotion struct {
	Phase   string  // Succeeded, Errored, or Running when the timeline ended first
	At      float64 // seconds after frame 0
	Message string
}

// span is one stretch of a lane: [From, To) seconds in one state.
type span struct {
	From, To float64
	State    string // colour key: a phase or health status
	Labels   []string
	Faded    bool // the object has ended; its final state, shown lighter
}

// mark is a point event on a lane (a measurement).
type mark struct {
	At    float64
	Phase string
}

// runLane is an AnalysisRun or Experiment of the delivered revision.
type runLane struct {
	Label string
	Name  string
	Spans []span
	Marks []mark
	End   float64 // when it ended (completedAt or first terminal frame); -1 while running
	Final string  // its last phase, with the controller's message
}

func seconds(t0 time.Time, s string) (float64, bool) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false
	}
	return t.Sub(t0).Seconds(), true
}

// frameTimes are the frames' seconds after frame 0 and where the picture ends: one recorder tick (the
// smallest gap between frames) after the last frame, so the last state has a width.
func frameTimes(tl *timeline.Timeline) ([]float64, float64) {
	t0, _ := time.Parse(time.RFC3339, tl.Frames[0].Time)
	out := make([]float64, len(tl.Frames))
	tick := 0.0
	for i := range tl.Frames {
		s, _ := seconds(t0, tl.Frames[i].Time)
		out[i] = s
		if i > 0 && s > out[i-1] && (tick == 0 || s-out[i-1] < tick) {
			tick = s - out[i-1]
		}
	}
	if tick == 0 {
		tick = 10
	}
	return out, out[len(out)-1] + tick
}

// perFrame turns one value per frame into spans, merging equal neighbours; labels gives a value's
// labels, longest first.
func perFrame(times []float64, end float64, values []string, labels func(string) []string) []span {
	var out []span
	for i, v := range values {
		to := end
		if i+1 < len(times) {
			to = times[i+1]
		}
		if n := len(out); n > 0 && out[n-1].State == v {
			out[n-1].To = to
			continue
		}
		out = append(out, span{From: times[i], To: to, State: v, Labels: labels(v)})
	}
	return out
}

func terminal(phase string) bool {
	switch phase {
	case "Successful", "Failed", "Error", "Inconclusive":
		return true
	}
	return false
}

// runLanes are the revision's AnalysisRuns and Experiments in the order they first appear, each with its
// phase per frame and the union of its measurements over the frames (a run keeps only its last ones,
// measurementRetention).
func runLanes(tl *timeline.Timeline, times []float64, end float64) []*runLane {
	t0, _ := time.Parse(time.RFC3339, tl.Frames[0].Time)
	prefix := ""
	byName := map[string]*runLane{}
	var order []*runLane
	type measured struct {
		at    float64
		phase string
	}
	meas := map[string]map[string]measured{}
	for i := range tl.Frames {
		f := &tl.Frames[i]
		if prefix == "" {
			// rollout/experiment.go GetExperimentFromTemplate: <rollout>-<podHash>-<revision>-<stepIndex>
			prefix = timeline.Str(f.Rollout, "metadata", "name") + "-" + tl.PodTemplateHash + "-" + tl.Revision + "-"
		}
		// the revision's runs (every attempt) and experiments, as analysisruns selects them, in frame order
		rv := analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, tl.PodTemplateHash)
		selected := map[string]bool{}
		for _, e := range rv.Experiments {
			selected[timeline.Str(e, "metadata", "name")] = true
		}
		for _, r := range append(append([]analysisruns.Run{}, rv.Runs...), rv.Superseded...) {
			if r.Type == analysisruns.Experiment || strconv.Itoa(r.Revision) == tl.Revision {
				selected[r.Name] = true
			}
		}
		var objs []map[string]any
		for _, o := range append(append([]map[string]any{}, f.Experiments...), f.AnalysisRuns...) {
			if selected[timeline.Str(o, "metadata", "name")] {
				objs = append(objs, o)
			}
		}
		to := end
		if i+1 < len(times) {
			to = times[i+1]
		}
		for _, o := range objs {
			name := timeline.Str(o, "metadata", "name")
			l := byName[name]
			if l == nil {
				l = &runLane{Label: runLabel(o, prefix), Name: name, End: -1}
				byName[name], meas[name] = l, map[string]measured{}
				order = append(order, l)
				from := times[i]
				if c, ok := seconds(t0, timeline.Str(o, "metadata", "creationTimestamp")); ok && c < from && c >= 0 {
					from = c
				}
				l.Spans = append(l.Spans, span{From: from, To: from})
			}
			phase := timeline.Str(o, "status", "phase")
			if phase == "" {
				phase = "Pending"
			}
			if timeline.Str(o, "spec", "terminate") == "true" && !terminal(phase) {
				phase += ", terminating"
			}
			l.Final = phase
			if msg := timeline.Str(o, "status", "message"); msg != "" {
				l.Final += " (" + msg + ")"
			}
			if l.End < 0 {
				if c, ok := seconds(t0, timeline.Str(o, "status", "completedAt")); ok {
					l.End = c
				} else if terminal(phase) {
					l.End = times[i]
				}
			}
			last := &l.Spans[len(l.Spans)-1]
			switch {
			case last.State == "":
				last.State, last.To = phase, to
			case last.State == phase && !last.Faded:
				last.To = to
			default:
				l.Spans = append(l.Spans, span{From: times[i], To: to, State: phase})
			}
			results, _ := field(o, "status")["metricResults"].([]any)
			for _, r := range results {
				rm, _ := r.(map[string]any)
				ms, _ := rm["measurements"].([]any)
				for _, m := range ms {
					mm, _ := m.(map[string]any)
					at, ok := seconds(t0, timeline.Str(mm, "finishedAt"))
					if !ok {
						at, ok = seconds(t0, timeline.Str(mm, "startedAt"))
					}
					if !ok {
						continue
					}
					key := timeline.Str(rm, "name") + "@" + timeline.Str(mm, "startedAt")
					meas[name][key] = measured{at: at, phase: timeline.Str(mm, "phase")}
				}
			}
		}
	}
	for _, l := range order {
		l.Spans = endSpans(l.Spans, l.End)
		keys := make([]string, 0, len(meas[l.Name]))
		for k := range meas[l.Name] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m := meas[l.Name][k]
			l.Marks = append(l.Marks, mark{At: m.at, Phase: m.phase})
		}
		sort.SliceStable(l.Marks, func(i, j int) bool { return l.Marks[i].At < l.Marks[j].At })
	}
	return order
}

// endSpans splits the spans at the object's end: before it they are the phase the frames show, after
// it the final phase, faded; a phase the frames show only from the end on (the write that completes the
// run) colours the end of the bar from the last frame before.
func endSpans(in []span, end float64) []span {
	if end < 0 {
		return in
	}
	var out []span
	for _, s := range in {
		switch {
		case s.To <= end:
			out = append(out, s)
		case s.From >= end:
			s.Faded = true
			out = append(out, s)
		default:
			a, b := s, s
			a.To, b.From, b.Faded = end, end, true
			out = append(out, a, b)
		}
	}
	return out
}

// runLabel names a run by what the Rollout asked for (timeline.AnalysisRef's words), with the attempt
// for a re-run (utils/analysis CreateWithCollisionCounter names it "<name>.1").
func runLabel(o map[string]any, prefix string) string {
	name := timeline.Str(o, "metadata", "name")
	if timeline.Str(o, "kind") == "Experiment" {
		return "step " + firstField(strings.TrimPrefix(name, prefix)) + " experiment"
	}
	refs, _ := field(o, "metadata")["ownerReferences"].([]any)
	for _, r := range refs {
		rm, _ := r.(map[string]any)
		if owner := timeline.Str(rm, "name"); timeline.Str(rm, "kind") == "Experiment" {
			return "step " + firstField(strings.TrimPrefix(owner, prefix)) + " experiment: " + strings.TrimPrefix(strings.TrimPrefix(name, owner), "-")
		}
	}
	ref := timeline.AnalysisRef{Kind: timeline.Str(o, "metadata", "labels", "rollout-type"), Step: timeline.Str(o, "metadata", "labels", "step-index")}
	label := ref.String()
	if label == "" {
		label = name
	}
	if i := strings.LastIndex(name, "."); i > 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil {
			label += ", run " + strconv.Itoa(n+1)
		}
	}
	return label
}

func firstField(s string) string {
	if i := strings.IndexAny(s, "-."); i >= 0 {
		return s[:i]
	}
	return s
}

// field is the object's map at key, nil when it is absent or not a map.
func field(o map[string]any, key string) map[string]any {
	m, _ := o[key].(map[string]any)
	return m
}
