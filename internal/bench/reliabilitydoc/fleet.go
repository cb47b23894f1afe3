package reliabilitydoc

import (
	"fmt"
	"strings"
)

// find is the load row of n Rollouts with the controller's client rate limit qps and provider, if the
// report has it.
func find(loads []Load, n, qps int, provider string) (Load, bool) {
	for _, l := range loads {
		if l.Rollouts == n && l.Controller.QPS == qps && l.Provider == provider {
			return l, true
		}
	}
	return Load{}, false
}

// beside is the row of another provider measured on the same load as l.
func beside(loads []Load, l Load, provider string) (Load, bool) {
	for _, o := range loads {
		if o.Rollouts == l.Rollouts && o.Controller == l.Controller && o.Provider == provider {
			return o, true
		}
	}
	return Load{}, false
}

// cpuPerMeasurement is the milliseconds of CPU a measurement of the window cost a process.
func cpuPerMeasurement(cores float64, l Load) float64 {
	if l.Measurements == 0 {
		return 0
	}
	return cores * float64(l.WindowSeconds) / float64(l.Measurements) * 1000
}

// fleetNotes are the findings of the loads, each figure from the reports: what bound the fleet under each
// controller setting, on each Rollouts release, and the plugin's memory.
func fleetNotes(r18, r110 Report) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	v18, v110 := r18.Version(), r110.Version()
	if pl, ok := find(r18.Loads, 2000, 40, "plugin"); ok {
		if web, ok := find(r18.Loads, 2000, 40, "web"); ok {
			p("* **At the controller main's defaults the controller's own client is the bound, for both providers.** Every\n"+
				"  measurement is one status write of the run (analysis/sync.go persistAnalysisRunStatus) through the\n"+
				"  controller's client, whose rate limiter allows 40 requests a second in bursts of 80 (cmd/rollouts-controller\n"+
				"  --qps, --burst: utils/defaults DefaultQPS, DefaultBurst). At 2,000 Rollouts on %s the plugin's row wrote\n"+
				"  %.1f measurements a second and the web provider's %.1f, of the 200 due. A controller that verifies N Stages\n"+
				"  every 10 s needs --qps above N ÷ 10 (the rows marked `--qps 400`), or a longer pollInterval.\n",
				v18, pl.PerSecond(), web.PerSecond())
		}
	}
	pl18, ok18 := find(r18.Loads, 2000, 400, "plugin")
	pl110, ok110 := find(r110.Loads, 2000, 400, "plugin")
	web18, okw18 := find(r18.Loads, 2000, 400, "web")
	if ok18 && ok110 && okw18 {
		p("* **With --qps 400, %s's analysis controller is held by its own logging.** Its process spent %.1f ms of CPU\n"+
			"  a measurement in the plugin's row, %s's %.1f ms, and the rows of %s fell behind (plugin %.1f, web %.1f\n"+
			"  measurements a second of the 200 due) with the machine's two cores in use. In %s every measurement of a\n"+
			"  metric logs through `utils/log` `WithRedactor` (analysis/analysis.go), which sets the shared logger's\n"+
			"  formatter to a RedactorFormatter wrapping the one before: one more layer for every measurement since the\n"+
			"  controller started, so each log line costs more the longer it runs (a CPU profile of the rig's process\n"+
			"  at 2,000 Rollouts, `go test -cpuprofile`, spent about half of its samples in `RedactorFormatter.Format`).\n"+
			"  %s's WithRedactor makes a logger of its own for each call instead (the fix of argo-rollouts#4703, \"create\n"+
			"  isolated logger for redactor\"). A fleet that verifies with the plugin, or with any provider, wants a release with that fix,\n"+
			"  or a controller restarted now and then.\n",
			v18, cpuPerMeasurement(pl18.ControllerCPU, pl18), v110, cpuPerMeasurement(pl110.ControllerCPU, pl110),
			v18, pl18.PerSecond(), web18.PerSecond(), v18, v110)
	}
	if ok110 {
		if web, ok := find(r110.Loads, 2000, 400, "web"); ok {
			p("* **On %s with --qps 400, 2,000 Rollouts:** the plugin wrote %.1f measurements a second (web %.1f), %d\n"+
				"  late by more than an interval (web %d), %d Error, every run measured at least %d times in %d intervals,\n"+
				"  %.3f API requests a measurement, latency p99 %d ms (web %d ms: %.2f×, so the goal of at most 2× is %s).\n"+
				"  The plugin used %.2f cores (%.2f ms a\n"+
				"  measurement), the controller's process %.2f and the API server program %.2f: the API server's status\n"+
				"  writes are most of the machine's work, for both providers.\n",
				v110, pl110.PerSecond(), web.PerSecond(), pl110.LateByPoll, web.LateByPoll, pl110.Errors, pl110.FewestPerRun,
				pl110.ExpectedRun, pl110.RequestsTotal, pl110.LatencyMS.P99, web.LatencyMS.P99,
				float64(pl110.LatencyMS.P99)/float64(max(web.LatencyMS.P99, 1)), check(pl110.LatencyMS.P99 <= 2*max(web.LatencyMS.P99, 1)), pl110.PluginCPU,
				cpuPerMeasurement(pl110.PluginCPU, pl110), pl110.ControllerCPU, pl110.APIServerCPU)
		}
	}
	if ok110 {
		z, okz := find(r110.Loads, 2000, 400, "noop")
		web, okw := find(r110.Loads, 2000, 400, "web")
		if okz && okw {
			head := "The latency above the web provider's is the controller's plugin path, not our plugin."
			if float64(pl110.LatencyMS.P99) > 1.5*float64(z.LatencyMS.P99) {
				head = fmt.Sprintf("Our plugin adds %d ms at p99 to the controller's plugin path.", pl110.LatencyMS.P99-z.LatencyMS.P99)
			}
			p("* **%s** A plugin that\n"+
				"  answers Running at once and reads nothing (noop) had latency p50 %d ms and p99 %d ms at the same load,\n"+
				"  ours %d and %d ms, the web provider %d and %d ms. Every measurement of a plugin metric makes a provider\n"+
				"  anew (analysis/analysis.go → metricproviders NewProvider → metricproviders/plugin NewRpcPlugin), which\n"+
				"  takes one mutex shared by every worker and, holding it, pings the plugin over its RPC connection\n"+
				"  (metricproviders/plugin/client/client.go startPluginSystem: `client.Ping()`), then calls it over the same\n"+
				"  go-plugin net/rpc connection with the whole AnalysisRun gob-encoded: two round trips to another process,\n"+
				"  one of them serialized across the controller's workers, where the web provider's query stays in the\n"+
				"  controller's process. On a machine whose two cores the API server mostly takes, each round trip waits\n"+
				"  for a core.\n", head, z.LatencyMS.P50, z.LatencyMS.P99, pl110.LatencyMS.P50, pl110.LatencyMS.P99, web.LatencyMS.P50, web.LatencyMS.P99)
		}
	}
	for _, l := range r110.Loads {
		if l.Rollouts < 10000 || l.Provider != "plugin" || l.StoppedBy == "" {
			continue
		}
		p("* **10,000 Rollouts on %s (%s) stop at the machine.** The plugin's row: %s. The plugin's own part was\n"+
			"  %.2f cores and %.3f API requests a measurement; the bound is the controller's status writes and the API\n"+
			"  server that stores them, which a provider cannot remove: every measurement is one of them.\n",
			v110, l.Controller, l.StoppedBy, l.PluginCPU, l.RequestsTotal)
	}
	var rss []string
	for _, l := range r110.Loads {
		if l.Verified == 0 && (l.Provider == "plugin" && l.Controller.QPS != 40 || l.Provider == "plugin" && l.Rollouts == 200) {
			ratio := ""
			if l.ControllerRSS > 0 {
				x := float64(l.PluginPeakRSS) / float64(l.ControllerRSS)
				ratio = fmt.Sprintf(", %.2f× the controller's", x)
				if l.Rollouts >= 2000 {
					// issue 48's goal, at 2,000 and 10,000 Rollouts
					ratio += fmt.Sprintf(", at most 0.25× the goal: %s", check(x <= 0.25))
				}
			}
			rss = append(rss, fmt.Sprintf("%s at %d Rollouts (%d namespaces%s)", mb(l.PluginPeakRSS), l.Rollouts, l.Namespaces, ratio))
		}
	}
	if len(rss) > 0 {
		p("* **Three watches a cluster.** The plugin's peak RSS on %s: %s. In the loads the plugin's identity\n"+
			"  reads every namespace, as the Rollouts chart's ClusterRole lets the controller's (clusterInstall, the\n"+
			"  default; the cases above run with the generated Role alone), so its informers are one of each resource\n"+
			"  for the cluster, not three a namespace: a watch costs goroutines and connection buffers whatever it\n"+
			"  holds (watchcache BenchmarkWatches, internal/plugin/watchcache/testdata/memory-bench.txt, measures a\n"+
			"  namespace's three against the cluster's). They keep of every object only what a judgement reads\n"+
			"  (verdict Reads) as JSON deflated with the words it spells, a sixteenth of the heap per Rollout with\n"+
			"  its run (BenchmarkRetainedPerRollout), made 100 objects at a time as they list (watchcache\n"+
			"  listProjected: with the three lists at once, pages of 250 were the peak), with Kargo's verification\n"+
			"  runs left out (watchcache VerificationRuns); a Rollout keeps one memoized verdict; and the plugin\n"+
			"  collects garbage with half Go's default headroom (GOGC 50 unless the controller's environment sets\n"+
			"  GOGC), as nearly all it allocates is a measurement's garbage. Like the controller's informers, they\n"+
			"  hold every Rollout stored, so a row's RSS also holds the loads before it, whose objects stay.\n", v110, strings.Join(rss, ", "))
	}
	for _, r := range []struct {
		version string
		loads   []Load
	}{{v18, r18.Loads}, {v110, r110.Loads}} {
		for _, l := range r.loads {
			if l.Verified == 0 || l.Provider != "plugin" {
				continue
			}
			noop, ok := beside(r.loads, l, "noop")
			if !ok {
				continue
			}
			// the goal is the RSS (issue 48; its fleet goal is the peak): the end of the window, against
			// the do-nothing plugin's, which is flat
			d := float64(l.PluginRSS-noop.PluginRSS) / (1 << 20)
			p("* **A namespace of %d Rollouts, %d of them verified** (%s, %s): the plugin's RSS at the end of the\n"+
				"  window %s, the do-nothing plugin's %s, %.1f MB more (the goal: within 10 MB) — %s. Its peak, %s\n"+
				"  (%.1f MB more), is the first seconds: the three informers' first lists, a page of whole objects\n"+
				"  each, while the first measurements are read directly.\n", l.Rollouts, l.Verified, r.version, l.Controller,
				mb(l.PluginRSS), mb(noop.PluginRSS), d, check(d <= 10), mb(l.PluginPeakRSS), float64(l.PluginPeakRSS-noop.PluginPeakRSS)/(1<<20))
			if direct, ok := beside(r.loads, l, "direct"); ok {
				dd := float64(direct.PluginPeakRSS-noop.PluginPeakRSS) / (1 << 20)
				p("  The same binary without watches (`--watch=false`, every measurement read directly, no informers):\n"+
					"  peak RSS %s, %.1f MB above the do-nothing plugin, and %s at the end — the Kubernetes client, the\n"+
					"  Lua VM and the code a judgement runs, without a cache.\n",
					mb(direct.PluginPeakRSS), dd, mb(direct.PluginRSS))
			}
		}
	}
	return b.String()
}
