package verdict

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	redaction "github.com/analysis-health/analysis-health/internal/plugin/redact"
)

// Bounds of the texts in a value: a run's message names its failing metric and what it measured, which
// is all the Verification tab needs; the whole message stays in the AnalysisRun.
const (
	maxMessage = 300
	maxLast    = 120
)

// encode renders the summary as compact JSON (Verdict.Structured) within opts.MaxValueBytes: texts are
// shortened first, then metrics and finally runs are left out (newest runs kept, as they decide), with
// counts of what was omitted. Secret values are redacted before anything is measured.
func encode(s Summary, opts Options) string {
	return within(shortened(s, opts), opts.MaxValueBytes, marshal, func(_ Summary, out string) string {
		return out // the fixed fields alone; they are short
	})
}

// shortened is s with every text redacted, then cut to its bound, on copies of its runs and metrics: the
// Value and the structured verdict are both shortened from one Summary, which neither may change.
func shortened(s Summary, opts Options) Summary {
	s.Message = clip(redact(s.Message, opts.Redact), maxMessage)
	s.Runs = append([]RunValue(nil), s.Runs...)
	for i := range s.Runs {
		r := &s.Runs[i]
		r.Message = clip(redact(r.Message, opts.Redact), maxMessage)
		r.Name = redact(r.Name, opts.Redact)
		r.Metrics = append([]MetricValue(nil), r.Metrics...)
		for j := range r.Metrics {
			m := &r.Metrics[j]
			m.Last = clip(redact(m.Last, opts.Redact), maxLast)
			m.SuccessCondition = clip(redact(m.SuccessCondition, opts.Redact), maxLast)
			m.FailureCondition = clip(redact(m.FailureCondition, opts.Redact), maxLast)
		}
	}
	return s
}

// within is render(s) within max bytes: metrics of the oldest runs, then the oldest runs, then the
// verdict's message are left out until it fits, each counted; what still does not fit is last's.
func within(s Summary, max int, render func(Summary) string, last func(Summary, string) string) string {
	out := render(s)
	for len(out) > max {
		switch {
		case dropMetric(&s):
		case len(s.Runs) > 0:
			s.Runs = s.Runs[1:]
			s.OmittedRuns++
		case s.Message != "":
			s.Message = ""
		default:
			return last(s, out)
		}
		out = render(s)
	}
	return out
}

// dropMetric removes the last metric of the oldest run that still lists metrics.
func dropMetric(s *Summary) bool {
	for i := range s.Runs {
		if n := len(s.Runs[i].Metrics); n > 0 {
			s.Runs[i].Metrics = s.Runs[i].Metrics[:n-1]
			s.OmittedMetrics++
			return true
		}
	}
	return false
}

func marshal(s Summary) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Summary holds only strings, numbers and bools
	return strings.TrimSuffix(b.String(), "\n")
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// redact removes Secret values from a text, in every form they take (package redact), before it is cut or
// encoded; nil redacts nothing.
func redact(s string, r *redaction.Redactor) string { return r.String(s) }
