package inspect

import (
	"fmt"
	"time"
)

// analysisTime is how long an AnalysisRun takes at least when every measurement passes.
type analysisTime struct {
	d time.Duration
	// untilTerminated: a metric without count measures until the run is terminated (background
	// analysis: at full promotion).
	untilTerminated bool
	// unknown: a count or delay that only resolves at run time, or templates not in the input.
	unknown    bool
	notCounted []string
}

func (t analysisTime) String() string {
	switch {
	case t.unknown:
		return "unknown"
	case t.untilTerminated:
		return "until terminated"
	}
	return fmtDuration(t.d)
}

// metricsTime is the least time a run of these metrics takes. Metrics run side by side and the run
// completes when the last one does, dry-run metrics included (analysis/analysis.go assessRunStatus waits
// for every metric). A metric takes its first measurement after initialDelay and the next ones every
// interval (generateMetricTasks), and completes after count measurements, or earlier once
// consecutiveSuccessLimit successes in a row are reached (assessMetricStatus): initialDelay +
// (n−1) × interval. A measurement's own run time (a Job metric's Job) is not known here.
func metricsTime(path string, metrics []metric) analysisTime {
	var t analysisTime
	for _, m := range metrics {
		interval, err1 := parseDuration("interval", m.Interval)
		delay, err2 := parseDuration("initialDelay", m.InitialDelay)
		count, countSet, ok1 := intOrString(m.Count)
		csl, cslSet, ok2 := intOrString(m.ConsecutiveSuccessLimit)
		if err1 != nil || err2 != nil || !ok1 || !ok2 {
			t.unknown = true
			t.notCounted = append(t.notCounted, fmt.Sprintf("%s: metric %q (count or durations resolved at run time)", path, m.Name))
			continue
		}
		// Metric.EffectiveCount (analysis_types.go): no count and no interval is one measurement; no
		// count with an interval measures until terminated.
		if !countSet || count == 0 {
			if interval != 0 {
				t.untilTerminated = true
				continue
			}
			count = 1
		}
		n := count
		if cslSet && csl > 0 && csl < n {
			n = csl
		}
		d := delay + time.Duration(n-1)*interval
		if d > t.d {
			t.d = d
		}
		if _, isJob := m.Provider["job"]; isJob {
			t.notCounted = append(t.notCounted, fmt.Sprintf("%s: run time of the Job of metric %q", path, m.Name))
		}
	}
	return t
}

// pause is one place the rollout waits for a person; gate: a pause the human-gate option applies to (a
// canary pause without duration, a blue-green pause without auto-promotion) with an analysis before it.
type pause struct {
	path, what string
	gate       bool
}

// estimator adds up a rollout's time line.
type estimator struct {
	total      time.Duration
	parts      []Part
	pauses     []pause
	notCounted []string
}

func (e *estimator) add(path, what string, d time.Duration) {
	e.total += d
	e.parts = append(e.parts, Part{Path: path, What: what, Duration: fmtDuration(d)})
}

func (e *estimator) indefinite(path, what string) { e.wait(pause{path: path, what: what}) }

func (e *estimator) wait(p pause) {
	e.pauses = append(e.pauses, p)
	path, what := p.path, p.what
	e.parts = append(e.parts, Part{Path: path, What: what, Duration: "indefinite"})
}

func (e *estimator) analysis(path, what string, t analysisTime) {
	e.notCounted = append(e.notCounted, t.notCounted...)
	switch {
	case t.unknown:
		e.parts = append(e.parts, Part{Path: path, What: what, Duration: "unknown"})
	case t.untilTerminated:
		// Validation rejects this for step, pre- and post-promotion analysis (reported as a problem);
		// count what is known.
		e.parts = append(e.parts, Part{Path: path, What: what, Duration: "until terminated"})
	default:
		e.add(path, what, t.d)
	}
}

func (e *estimator) result() Estimate {
	est := Estimate{
		Minimum:        fmtDuration(e.total),
		MinimumSeconds: int64(e.total / time.Second),
		Indefinite:     len(e.pauses) > 0,
		Parts:          e.parts,
		NotCounted:     e.notCounted,
	}
	if est.Parts == nil {
		est.Parts = []Part{}
	}
	if est.NotCounted == nil {
		est.NotCounted = []string{}
	}
	if !est.Indefinite {
		est.KargoRetryTimeout = fmtDuration(KargoRetryTimeout(e.total))
	}
	return est
}

// KargoRetryTimeout is the argocd-update retry.timeout a rollout needs behind a PostSync barrier when
// its least time to promotion is min: half as much again for pods to start, measurements to run and
// controllers to reconcile (Kargo only checks its timeout when it next reconciles), rounded up to a
// minute and never below Kargo's default.
func KargoRetryTimeout(min time.Duration) time.Duration {
	d := (min*3/2 + time.Minute - 1).Truncate(time.Minute)
	if d < DefaultKargoTimeout {
		return DefaultKargoTimeout
	}
	return d
}

// fmtDuration prints whole seconds as time.Duration does ("15m0s"), without sub-second noise.
func fmtDuration(d time.Duration) string {
	return d.Truncate(time.Second).String()
}
