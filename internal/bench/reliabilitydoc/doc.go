package reliabilitydoc

import (
	"fmt"
	"path/filepath"
	"strings"
)

// maxRequests is the bound on the plugin's API requests a measurement in steady state
// (test/rollouts/reliability maxRequestsPerMeasurement).
const maxRequests = 0.05

// RunFile is the committed report of the Rollouts version the rig runs (test/rollouts/reliability, v1.8.5).
const RunFile = "v1.8.5.json"

// RunFile110 is the report of the same rig in Rollouts v1.10.2's analysis controller, whose loads the page
// shows beside v1.8.5's.
const RunFile110 = "v1.10.2.json"

// loadTables renders the rows of a report's loads and what they held of the goals.
func loadTables(p func(string, ...any), loads []Load) {
	p("| Rollouts | controller | provider | setup | window | measurements (per s) | Error | fewest per run (of) | latency p50 / p99 / max | late p50 / p99 / max | late > pollInterval | API requests per measurement | metrics queries per measurement | plugin peak RSS | plugin / controller RSS | plugin CPU | controller process CPU, RSS | API server CPU, RSS | load average |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range loads {
		var req []string
		for _, k := range sortedKeys(l.Requests) {
			req = append(req, fmt.Sprintf("%s %.2f", k, l.Requests[k]))
		}
		api, plugRSS, plugCPU, queries := "—", "—", "—", "—"
		switch l.Provider {
		case "plugin", "direct":
			api = fmt.Sprintf("%.3f", l.RequestsTotal)
			if len(req) > 0 {
				api += " (" + strings.Join(req, ", ") + ")"
			}
			plugRSS, plugCPU, queries = mb(l.PluginPeakRSS), fmt.Sprintf("%.2f cores", l.PluginCPU), "0"
		case "noop":
			plugRSS, plugCPU = mb(l.PluginPeakRSS), fmt.Sprintf("%.2f cores", l.PluginCPU)
		default:
			queries = fmt.Sprintf("%.2f", l.MetricsRequests)
		}
		// the plugin runs in the controller's container: its memory is the controller's limit too
		ratio := "—"
		if plugRSS != "—" && l.ControllerRSS > 0 {
			ratio = fmt.Sprintf("%.2f×", float64(l.PluginPeakRSS)/float64(l.ControllerRSS))
		}
		apiServer := "—" // not measured before the rows had it
		if l.APIServerRSS > 0 {
			apiServer = fmt.Sprintf("%.2f cores, %s", l.APIServerCPU, mb(l.APIServerRSS))
		}
		rollouts := fmt.Sprint(l.Rollouts)
		if l.Verified > 0 {
			rollouts = fmt.Sprintf("%d in one namespace, %d verified", l.Rollouts, l.Verified)
		}
		p("| %s | %s | %s | %d s | %d s | %d (%.1f) | %d | %d (%d) | %d / %d / %d ms | %d / %d / %d ms | %d | %s | %s | %s | %s | %s | %.2f cores, %s | %s | %s |\n",
			rollouts, l.Controller, l.Provider, l.SetupSeconds, l.WindowSeconds, l.Measurements, l.PerSecond(), l.Errors, l.FewestPerRun, l.ExpectedRun,
			l.LatencyMS.P50, l.LatencyMS.P99, l.LatencyMS.Max, l.LateMS.P50, l.LateMS.P99, l.LateMS.Max,
			l.LateByPoll, api, queries, plugRSS, ratio, plugCPU, l.ControllerCPU, mb(l.ControllerRSS), apiServer, l.LoadAvg)
	}
	p("\n")
	for _, l := range loads {
		if l.Rollouts != 200 || l.Provider != "plugin" {
			continue
		}
		p("At 200 Rollouts (the bounds TestReliability asserts of the plugin): every measurement answered within apiTimeout — %s;\n"+
			"none lost (every run measured at least %d times in %d intervals) — %s; none late by more than one interval — %s;\n"+
			"plugin RSS below 100 MB — %s (%s); at most %.2f API requests a measurement — %s (%.3f).\n\n",
			check(l.OverTimeout == 0 && l.Errors == 0), l.ExpectedRun-1, l.ExpectedRun, check(l.FewestPerRun >= l.ExpectedRun-1),
			check(l.LateByPoll == 0), check(l.PluginPeakRSS < 100<<20), mb(l.PluginPeakRSS), maxRequests, check(l.RequestsTotal <= maxRequests), l.RequestsTotal)
	}
	for _, l := range loads {
		if l.Provider != "plugin" {
			continue
		}
		w, hasWeb := beside(loads, l, "web")
		if hasWeb {
			p("%d Rollouts (%s), plugin against web: %.2f× the measurements a second (goal ≥ 0.95×) — %s; latency p99 %.2f× (goal ≤ 2×) — %s;\n"+
				"late by more than an interval: plugin %d, web %d (goal 0) — %s; Error: plugin %d (goal 0) — %s; every run measured at least %d times in %d intervals: plugin %d, web %d — %s;\n"+
				"API requests a measurement %.3f (goal ≤ %.2f) — %s.\n\n",
				l.Rollouts, l.Controller, l.PerSecond()/max(w.PerSecond(), 0.001), check(l.PerSecond() >= 0.95*w.PerSecond()),
				float64(l.LatencyMS.P99)/float64(max(w.LatencyMS.P99, 1)), check(l.LatencyMS.P99 <= 2*max(w.LatencyMS.P99, 1)),
				l.LateByPoll, w.LateByPoll, check(l.LateByPoll == 0), l.Errors, check(l.Errors == 0),
				l.ExpectedRun-1, l.ExpectedRun, l.FewestPerRun, w.FewestPerRun, check(l.FewestPerRun >= l.ExpectedRun-1),
				l.RequestsTotal, maxRequests, check(l.RequestsTotal <= maxRequests))
		}
		if z, ok := beside(loads, l, "noop"); ok {
			p("%d Rollouts (%s), plugin against noop, the plugin that does nothing: latency p50 %d against %d ms, p99 %d against %d ms (%.2f×)",
				l.Rollouts, l.Controller, l.LatencyMS.P50, z.LatencyMS.P50, l.LatencyMS.P99, z.LatencyMS.P99,
				float64(l.LatencyMS.P99)/float64(max(z.LatencyMS.P99, 1)))
			if hasWeb {
				p("; noop's p99 is %.2f× the web provider's, so the latency goal (≤ 2×) is %s for any plugin in this controller on this machine",
					float64(z.LatencyMS.P99)/float64(max(w.LatencyMS.P99, 1)), map[bool]string{true: "within reach", false: "**out of reach**"}[z.LatencyMS.P99 <= 2*max(w.LatencyMS.P99, 1)])
			}
			p(".\n\n")
		}
	}
	for _, l := range loads {
		if l.StoppedBy != "" {
			p("At %d Rollouts (%s; %s): %s.\n\n", l.Rollouts, l.Controller, l.Provider, l.StoppedBy)
		}
	}
	for _, l := range loads {
		if l.Rollouts > 200 && l.Provider == "plugin" {
			p("The %d-Rollout load (%s; outside CI) took %d s to set up (the Rollouts, their runs and the plugin's verifications) and %d s to measure each row.\n\n", l.Rollouts, l.Controller, l.SetupSeconds, l.WindowSeconds)
		}
	}

}

// Document renders the page from the report in runDir, the fuzz output in fuzzFile and the hostile
// server's rows in hostileFile, below its title, which is the doc's own (docs/reliability.md), above the
// block.
func Document(runDir, fuzzFile, hostileFile string) (string, error) {
	r110, err := ReadReport(filepath.Join(runDir, RunFile110))
	if err != nil {
		return "", err
	}
	r, err := ReadReport(filepath.Join(runDir, RunFile))
	if err != nil {
		return "", err
	}
	fz, err := ReadFuzz(fuzzFile)
	if err != nil {
		return "", err
	}
	hostile, err := ReadHostile(hostileFile)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p(`
The metric plugin (cmd/rollouts-plugin-metric-analysis-health) runs inside the Argo Rollouts controller for
every Kargo verification. This page is what it did under load, under faults, with least privilege and on
bad input, measured by `+"`make reliability`"+` on %s:

* machine: %s, %d cores, %d GiB, Linux %s (shared: other builds ran on it);
* controller: %s — the analysis controller (package analysis) with the controller main's work queue,
  rate limiter, its client rate limit and thread count as each load's row says (the controller main's
  defaults, `+"`--qps 40 --burst 80`"+` and 30 `+"`--analysis-threads`"+`, unless a row raises them), on the real clock, loading the built plugin through argo-rollouts-config
  (a file:// location with `+"`args: [-kubeconfig, …]`"+`), as `+"`cmd/rollouts-controller`"+` does;
* the API server program of test/kube-apiserver-v1.34 (kube-apiserver v1.34.5, embedded etcd) with `+"`-rbac`"+`,
  `+"`-audit-log`"+` and `+"`-data-dir`"+`; the controller and the plugin reach it through TCP proxies of the
  test (test/rollouts/reliability proxy.go faultProxy), which keep their address across a restart of the
  server and inject the network faults;
* identities: the controller runs as a ServiceAccount bound to cluster-admin, the plugin as a ServiceAccount
  bound by nothing but the generated `+"`rbac.yaml`"+` of each namespace (never the loopback admin);
* objects: the Rollout and its own AnalysisRuns are frames of the recorded timeline %s
  (test/testdata/timelines), stored as the controllers stored them; only the verification runs, built by
  Kargo's rules from the generated template (test/rollouts/kargoverify PluginBinaries.VerificationRun), are measured.

The fault and least-privilege cases and the plugin's 200-Rollout load run in CI (`+"`make test`"+` → `+"`make e2e`"+`,
test/rollouts/reliability TestReliability), each asserting its rule; the web provider's rows and the larger
loads run only in `+"`make reliability`"+` (their time is in the table below). Figures from a shared 2-core
machine are upper bounds; the load average at each window's end is in the table.

`, r.Machine.Started, r.Machine.CPU, r.Machine.Cores, r.Machine.MemGiB, r.Machine.Kernel, r.Controller, r.Scenario)

	p("## Load\n\n")
	p("Ten Rollouts a namespace, each a renamed copy of the frame whose step analysis is in flight (the ten of a\n" +
		"namespace share the recorded pod-template hash, so each list returns the runs of all ten: heavier than\n" +
		"distinct revisions), each with one verification run in flight, measured every `pollInterval` (the\n" +
		"generated template's default, 10 s; `apiTimeout` 10 s). Each load has two rows, one after the other on the\n" +
		"same Rollouts, the same controller, threads and interval: **plugin**, our generated verification; **web**,\n" +
		"what a Kargo user writes instead, Argo Rollouts' built-in `web` provider querying the test's metrics\n" +
		"server every 10 s (the duplicate query); and where a row says **noop**, a metric plugin that answers\n" +
		"Running at once and reads nothing (test/rollouts/cmd/noop-metric-plugin), whose latency is what the\n" +
		"controller's plugin path costs whatever the plugin does. Measured over three intervals once every verification was\n" +
		"measured and one interval more had passed (each verification's first measurement reads directly, to pin\n" +
		"its revision, so a fleet's verifications started at once queue behind the plugin's client rate limit at\n" +
		"first). Latency: from a controller worker taking the run to the controller writing the measurement\n" +
		"(the plugin's RPC and its judgement, or the web query); late: from the time the measurement was due\n" +
		"(its `resumeAt`, or the last one's end plus the interval) to a worker taking it. API requests: the\n" +
		"plugin's, from the audit log (its informers' watches opened before the window are not in it); queries:\n" +
		"the metrics server's. CPU and RSS: the plugin process, and the test process, which is the analysis\n" +
		"controller (where the web provider's queries run) with the rig around it; the API server program's\n" +
		"(kube-apiserver with its embedded etcd). Each row names the analysis controller's client rate limit and\n" +
		"threads: the controller main's defaults, or raised as a platform team raises them for a fleet\n" +
		"(`E2E_RELIABILITY_LOAD` `N@QPS[/THREADS]`, Makefile `reliability`).\n\n")
	loadTables(p, r.Loads)
	p("### Load on Rollouts %s\n\n", r110.Version())
	p("The same loads in Argo Rollouts %s's analysis controller (test/rollouts-v1.10 TestReliability, %s), whose\n"+
		"log formatter no longer grows with every reconcile (see the notes below).\n\n", r110.Version(), r110.Machine.Started)
	loadTables(p, r110.Loads)
	p("## Faults\n\n")
	p("Each fault in a namespace of its own, on a verification in flight (`pollInterval` 2 s), then the frame\n" +
		"that ends the timeline (the revision promoted, its analysis Successful) to see the verification end.\n" +
		"*Written* is what the controller stored, measurement by measurement (repeats folded); *not written*\n" +
		"what its log shows it measured but could not store.\n\n")
	for _, f := range r.Faults {
		p("### %s\n\nExpected: %s.\n\n", f.Fault, f.Expected)
		for _, s := range f.Written {
			line := "* written: " + s.Phase
			if s.Message != "" {
				line += " — " + s.Message
			}
			if s.Pinned != "" {
				line += " (pinned " + s.Pinned + ")"
			}
			p("%s\n", line)
		}
		for _, u := range foldUnwritten(f.Unwritten) {
			p("* not written: %s\n", u)
		}
		for _, o := range f.Observed {
			p("* %s\n", o)
		}
		p("* the verification ended: %s\n\n", f.Final)
	}
	hostileSection(p, hostile)

	p("## Least privilege\n\n")
	lp := r.LeastPrivilege
	p("The plugin as a ServiceAccount bound only by the generated `rbac.yaml`, on the frame of %s whose\n"+
		"experiment runs its analysis (so every read the plugin makes happens): %s (pinned %s). What it asked\n"+
		"for (audit log): %s. Then each grant of the Role removed in turn (RBAC's answer awaited with a\n"+
		"SubjectAccessReview), a new verification in a new plugin process each time (its watches start afresh):\n"+
		"without a grant of its direct reads the measurement is Error naming it; without one only its informers use\n"+
		"(list rollouts, the watches) it is what the whole Role gives, read directly, and the plugin logs why.\n"+
		"Each new plugin process first asks to list every namespace (the Rollouts chart's ClusterRole grants it),\n"+
		"which the Role refuses (403, one a watched resource at most, the test's bound; not counted above), and\n"+
		"then watches the namespace:\n\n", lp.Scenario, lp.Full.Phase, lp.Full.Pinned, strings.Join(lp.Used, ", "))
	p("| removed | measurement | the plugin logged |\n|---|---|---|\n")
	for _, g := range lp.Removed {
		logged := "—"
		if g.Logged != "" {
			logged = cell(g.Logged)
		}
		p("| %s | %s: %s | %s |\n", g.Grant, g.Step.Phase, cell(g.Step.Message), logged)
	}
	ks := r.KubeconfigSecret
	p("\nWith `kubeconfigSecret` (the generated multi-cluster `rbac.yaml`; a TokenRequest token of its\n"+
		"ServiceAccount in an https kubeconfig with the CA data, as rbac.yaml says), the plugin's own identity bound to\n"+
		"cluster-admin, over %d measurements, asked for: %s; the identity of the kubeconfig: %s.\n\n",
		ks.Measurements, strings.Join(ks.Local, ", "), strings.Join(ks.Remote, ", "))

	p("## Bad input\n\n")
	p("| input | size | measurement | answered in | value |\n|---|---|---|---|---|\n")
	for _, o := range r.Oversized {
		p("| %s | %d bytes | %s | %d ms | %d bytes |\n", o.Case, o.Bytes, o.Phase, o.LatencyMS, o.ValueBytes)
	}
	p("\nFuzz targets (Go native fuzzing; `go test` runs their seed corpus, `make reliability` runs each for a while):\n\n")
	p("| target | asserts | time | executions | corpus | result |\n|---|---|---|---|---|---|\n")
	asserts := map[string]string{
		"FuzzParseConfig":    "no panic; an error names the provider and, for a JSON object, the field",
		"FuzzMetric":         "any metric JSON through the plugin's Run: no panic, a controller phase, a JSON string value and the metadata's structured verdict of the phase, each of at most 4 KiB, an Error with a message",
		"FuzzRemoteResponse": "any status, content type and body (repeated up to 1023 times and 40 MiB) of the server a kubeconfig Secret names, through a measurement: no panic, at most 32 MiB read, an Error over it, and a read's Error quotes no 16 bytes of the body (run on a machine at load 35: few executions)",
		"FuzzMutatedObjects": "mutated Rollout and runs (package mutate): no panic, and never Successful where our Rollout health script does not say Healthy",
	}
	for _, z := range fz {
		res := "**failed**"
		if z.Passed {
			res = "passed"
		}
		p("| %s %s | %s | %s | %s | %s | %s |\n", z.Package, z.Target, asserts[z.Target], z.Time, z.Execs, z.Interesting, res)
	}
	p("\n")
	b.WriteString(strings.Replace(notes, fleetMarker, fleetNotes(r, r110), 1))
	return b.String(), nil
}

// foldUnwritten is the controller's log of measurements it could not store, each Error once (its
// "Measurement Completed. Result: Error" line repeats what the warning after it says) with its count.
func foldUnwritten(lines []string) []string {
	var out []string
	var last string
	n := 0
	flush := func() {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", last, n))
		} else if n == 1 {
			out = append(out, last)
		}
	}
	for _, l := range lines {
		if strings.HasSuffix(l, "Measurement Completed. Result: Error") {
			continue
		}
		if l == last {
			n++
			continue
		}
		flush()
		last, n = l, 1
	}
	flush()
	return out
}
