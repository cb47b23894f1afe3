package verdict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
)

// CutShort says why a run that its phase calls passed did not pass: it was terminated (spec.terminate)
// before a metric took the measurements its count asks for. The analysis controller ends such a run
// Successful "Run Terminated" (analysis/analysis.go assessRunStatus), whoever terminated it, and the
// rollout controller terminates a step or promotion run when a person bypasses it (promote --full,
// skip-current-step, Argo CD's terminate action) or the revision is rolled back. Empty when the run did
// pass:
//   - it was not terminated, or no metric has a count (a metric with only an interval measures until it is
//     terminated: Metric.EffectiveCount is nil), or every metric reached its count;
//   - it is a background run: the rollout controller terminates it when the revision is fully promoted
//     (rollout/analysis.go cancelAnalysisRuns), which is its normal end;
//   - it is an experiment's run and the experiment was not terminated: the experiment controller
//     terminates its runs when the experiment's duration is over (experiments/experiment.go).
//
// Dry-run metrics do not count: they never decide a run.
func CutShort(r analysisruns.Run, experiment map[string]any) string {
	spec, st := mapOf(r.Object["spec"]), mapOf(r.Object["status"])
	if spec["terminate"] != true {
		return ""
	}
	switch r.Type {
	case analysisruns.Background:
		return ""
	case analysisruns.Experiment:
		if mapOf(experiment["spec"])["terminate"] != true {
			return ""
		}
	}
	dry := map[string]bool{}
	for _, d := range listOf(spec["dryRun"]) {
		dry[str(mapOf(d)["metricName"])] = true
	}
	results := map[string]map[string]any{}
	for _, m := range listOf(st["metricResults"]) {
		results[str(mapOf(m)["name"])] = mapOf(m)
	}
	var short []string
	for _, m := range listOf(spec["metrics"]) {
		metric := mapOf(m)
		name := str(metric["name"])
		if dry[name] || dry["*"] || mapOf(results[name])["dryRun"] == true {
			continue
		}
		want := effectiveCount(metric)
		if want <= 0 {
			continue
		}
		if got := num(results[name]["count"]); got < want {
			short = append(short, fmt.Sprintf("metric %q after %d of %d measurements", name, got, want))
		}
	}
	if len(short) == 0 {
		return ""
	}
	who := "someone promoted or skipped past it (kubectl argo rollouts promote --full, promote --skip-current-step, or Argo CD's terminate action), or the revision was rolled back"
	if r.Type == analysisruns.Experiment {
		who = "its experiment was terminated (promote --full, skip-current-step, Argo CD's terminate action on the Experiment)"
	}
	return "was terminated before it finished (" + strings.Join(short, ", ") + "): " + who + ", so its analysis did not pass"
}

// effectiveCount is Metric.EffectiveCount (pkg/apis/rollouts/v1alpha1/analysis_types.go): count, or 1
// when neither count nor interval is set; 0 for a metric that measures until it is terminated.
func effectiveCount(metric map[string]any) int64 {
	n, _ := strconv.ParseInt(str(metric["count"]), 10, 64)
	if n == 0 {
		if str(metric["interval"]) == "" {
			return 1
		}
		return 0
	}
	return n
}
