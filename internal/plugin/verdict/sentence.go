package verdict

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The measurement's Value is words, because the two pages that show it show it as it is: Kargo's UI
// JSON.parses it (ui/src/features/common/analysis-modal/transforms.ts transformMeasurementValue, v1.11.2,
// no try/catch) and prints an object as "[object Object]", joins an array with commas, charts a number or
// a numeric-looking string, and shows a string as its text; Argo Rollouts' dashboard shows the value's
// text. So Value is one JSON string, a sentence naming the Rollout, the revision, each of its runs and
// experiments with each metric's phase and last measured value, and, unless the runs alone say it passed,
// the verdict and its message. The structured verdict (Summary) goes to the measurement's Metadata under
// MetadataVerdict, where tools read it (Argo Rollouts keeps metadata values as strings).

// MetadataVerdict is the measurement's metadata key holding the structured verdict: a Summary as compact
// JSON (Verdict.Structured), within Options.MaxValueBytes.
const MetadataVerdict = "verdict"

// Metadata is what the plugin puts in the measurement's metadata: the pin (Pin.Metadata) and the
// structured verdict under MetadataVerdict.
func (v Verdict) Metadata() map[string]string {
	m := v.Pin.Metadata()
	if v.Structured == "" {
		return m
	}
	if m == nil {
		m = map[string]string{}
	}
	m[MetadataVerdict] = v.Structured
	return m
}

// SummaryFromMetadata reads the structured verdict back from a measurement's metadata; false if it
// holds none.
func SummaryFromMetadata(m map[string]string) (Summary, bool) {
	var s Summary
	raw, ok := m[MetadataVerdict]
	if !ok || json.Unmarshal([]byte(raw), &s) != nil {
		return Summary{}, false
	}
	return s, true
}

// ErrorValue is the Value and the structured verdict (for MetadataVerdict) of a measurement that ended
// in Error before any judgement (a bad config, an unreachable API server): the sentence "Error: <msg>"
// and {"verdict":"Error","message":<msg>}, the message cut to the bound of a message.
func ErrorValue(msg string) (value, structured string) {
	msg = clip(msg, maxMessage)
	return quote(Error + ": " + msg), marshalAny(struct {
		Verdict string `json:"verdict"`
		Message string `json:"message"`
	}{Error, msg})
}

// sentence renders s as the Value: a JSON string within opts.MaxValueBytes. Texts are redacted and cut
// as in the structured verdict (encode); if it is still too long, metrics of the oldest runs, then the
// oldest runs, then the verdict's message are left out, saying how many.
func sentence(s Summary, opts Options) string {
	render := func(s Summary) string { return quote(words(s)) }
	return within(shortened(s, opts), opts.MaxValueBytes, render, func(s Summary, _ string) string {
		// a head longer than the bound: only a Rollout name beyond Kubernetes' limits could make one
		return quote(clip(words(s), opts.MaxValueBytes/8))
	})
}

// words is the sentence of s, unquoted:
//
//	checkout rev 2 (d75d5bf65): AnalysisRun checkout-d75d5bf65-2-1 Successful — success-rate 0.99 ×5 passed "result[0] >= 0.95"
//
// followed, unless the verdict is Successful and the Rollout ran analysis, by ". <verdict>: <message>".
func words(s Summary) string {
	_, name, _ := strings.Cut(s.Rollout, "/")
	if name == "" {
		name = s.Rollout
	}
	var b strings.Builder
	b.WriteString(name)
	if s.RolloutRevision != "" {
		b.WriteString(" rev " + s.RolloutRevision)
	}
	if s.Revision != "" {
		b.WriteString(" (" + s.Revision + ")")
	}
	b.WriteString(": ")
	var runs []string
	for _, r := range s.Runs {
		runs = append(runs, runWords(r))
	}
	if s.OmittedRuns > 0 {
		runs = append(runs, plural(s.OmittedRuns, "earlier run")+" left out")
	}
	b.WriteString(strings.Join(runs, "; "))
	if s.OmittedMetrics > 0 {
		b.WriteString(" (" + plural(s.OmittedMetrics, "metric") + " left out)")
	}
	if s.Verdict != Successful || len(s.Runs)+s.OmittedRuns == 0 {
		if len(runs) > 0 {
			b.WriteString(". ")
		}
		b.WriteString(s.Verdict)
		if s.Message != "" {
			b.WriteString(": " + s.Message)
		}
	}
	return b.String()
}

// runWords: "AnalysisRun <name> <phase> — <metric>, <metric>", or "Experiment <name> <phase>".
func runWords(r RunValue) string {
	kind := "AnalysisRun"
	if r.Kind != "" {
		kind = r.Kind
	}
	phase := r.Phase
	if phase == "" {
		phase = "Pending"
	}
	out := kind + " " + r.Name + " " + phase
	var metrics []string
	for _, m := range r.Metrics {
		metrics = append(metrics, metricWords(m))
	}
	if len(metrics) > 0 {
		out += " — " + strings.Join(metrics, ", ")
	}
	return out
}

// metricWords: `<name> <last> ×<count> (<n> failed, …) <passed|failed|…> <condition>`: a passed metric's
// successCondition, quoted, or the condition a failed or inconclusive one met or missed.
func metricWords(m MetricValue) string {
	parts := []string{m.Name}
	if m.Last != "" {
		parts = append(parts, m.Last)
	}
	if m.Count > 0 {
		parts = append(parts, "×"+strconv.FormatInt(m.Count, 10))
	}
	var bad []string
	for _, c := range []struct {
		n    int64
		what string
	}{{m.Failed, "failed"}, {m.Inconclusive, "inconclusive"}, {m.Error, "errored"}} {
		if c.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(bad) > 0 {
		parts = append(parts, "("+strings.Join(bad, ", ")+")")
	}
	parts = append(parts, phaseWord(m.Phase))
	// the condition the measurements met or missed, in the words of the AnalysisRun script's message
	// (lua/argoproj.io/AnalysisRun/health.lua): a measurement's phase follows from the spec's conditions
	// (argo-rollouts utils/evaluate EvaluateResult)
	sc, fc := m.SuccessCondition, m.FailureCondition
	switch {
	case m.Phase == Successful && sc != "":
		parts = append(parts, strconv.Quote(sc))
	case m.Phase == Successful && fc != "":
		parts = append(parts, "(failureCondition "+strconv.Quote(fc)+" not met)")
	case m.Phase == Failed && fc != "":
		parts = append(parts, "(met failureCondition "+strconv.Quote(fc)+")")
	case m.Phase == Failed && sc != "":
		parts = append(parts, "(missed successCondition "+strconv.Quote(sc)+")")
	case m.Phase == Inconclusive && sc != "" && fc != "":
		parts = append(parts, "(met neither successCondition "+strconv.Quote(sc)+" nor failureCondition "+strconv.Quote(fc)+")")
	}
	if m.DryRun {
		parts = append(parts, "(dry run)")
	}
	return strings.Join(parts, " ")
}

// phaseWord is a metric's phase as the sentence says it.
func phaseWord(phase string) string {
	switch phase {
	case Successful:
		return "passed"
	case Failed:
		return "failed"
	case Inconclusive:
		return "inconclusive"
	case Error:
		return "errored"
	case "":
		return "pending"
	}
	return strings.ToLower(phase)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// quote renders s as a JSON string, as compact as JSON allows (no HTML escaping).
func quote(s string) string { return marshalAny(s) }

func marshalAny(x any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(x) // strings only
	return strings.TrimSuffix(b.String(), "\n")
}
