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
	s.Message = clip(redact(s.Message, opts.Redact), maxMessage)
	for i := range s.Runs {
		r := &s.Runs[i]
		r.Message = clip(redact(r.Message, opts.Redact), maxMessage)
		r.Name = redact(r.Name, opts.Redact)
		for j := range r.Metrics {
			r.Metrics[j].Last = clip(redact(r.Metrics[j].Last, opts.Redact), maxLast)
			r.Metrics[j].SuccessCondition = clip(redact(r.Metrics[j].SuccessCondition, opts.Redact), maxLast)
			r.Metrics[j].FailureCondition = clip(redact(r.Metrics[j].FailureCondition, opts.Redact), maxLast)
		}
	}
	out := marshal(s)
	for len(out) > opts.MaxValueBytes {
		switch {
		case dropMetric(&s):
		case len(s.Runs) > 0:
			s.Runs = s.Runs[1:]
			s.OmittedRuns++
		case s.Message != "":
			s.Message = ""
		default:
			return out // the fixed fields alone; they are short
		}
		out = marshal(s)
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
