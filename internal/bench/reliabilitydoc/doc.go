package reliabilitydoc

import (
	"fmt"
	"path/filepath"
	"strings"
)

// RunFile is the committed report of the Rollouts version the rig runs (test/rollouts/recorder, v1.8.5).
const RunFile = "v1.8.5.json"

// Document renders the page from the report in runDir and the fuzz output in fuzzFile, below its title,
// which is the doc's own (docs/reliability.md), above the block.
func Document(runDir, fuzzFile string) (string, error) {
	r, err := ReadReport(filepath.Join(runDir, RunFile))
	if err != nil {
		return "", err
	}
	fz, err := ReadFuzz(fuzzFile)
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
  rate limiter and %s threads, on the real clock, loading the built plugin through argo-rollouts-config
  (a file:// location with `+"`args: [-kubeconfig, …]`"+`), as `+"`cmd/rollouts-controller`"+` does;
* the API server program of test/kube-apiserver-v1.34 (kube-apiserver v1.34.5, embedded etcd) with `+"`-rbac`"+`,
  `+"`-audit-log`"+` and `+"`-data-dir`"+`; the controller and the plugin reach it through TCP proxies of the
  test (test/rollouts/recorder reliability_rig_test.go faultProxy), which keep their address across a restart of the
  server and inject the network faults;
* identities: the controller runs as a ServiceAccount bound to cluster-admin, the plugin as a ServiceAccount
  bound by nothing but the generated `+"`rbac.yaml`"+` of each namespace (never the loopback admin);
* objects: the Rollout and its own AnalysisRuns are frames of the recorded timeline %s
  (test/testdata/timelines), stored as the controllers stored them; only the verification runs, built by
  Kargo's rules from the generated template (test/rollouts/recorder verificationRun), are measured.

The fault and least-privilege cases and the 200-Rollout load run in CI (`+"`make test`"+` → `+"`make e2e`"+`,
test/rollouts/recorder TestReliability), each asserting its rule; the 2,000-Rollout load runs only in
`+"`make reliability`"+` (its time is in the table below). Figures from a shared 2-core machine are upper bounds.

`, r.Machine.Started, r.Machine.CPU, r.Machine.Cores, r.Machine.MemGiB, r.Machine.Kernel, r.Controller, "30", r.Scenario)

	p("## Load\n\n")
	p("Ten Rollouts a namespace, each a renamed copy of the frame whose step analysis is in flight (the ten of a\n" +
		"namespace share the recorded pod-template hash, so each list returns the runs of all ten: heavier than\n" +
		"distinct revisions), each with one verification run in flight, resumed every `pollInterval` (the\n" +
		"generated template's default, 10 s; `apiTimeout` 10 s). Measured over three poll intervals once every\n" +
		"verification was measured. Latency: from a controller worker taking the run to the controller writing\n" +
		"the measurement (the plugin's RPC, its reads and its judgement); late: from the `resumeAt` the\n" +
		"measurement was due at to a worker taking it. Requests: the plugin's, from the audit log.\n\n")
	p("| Rollouts | namespaces | setup | window | measurements (per s) | Error | fewest per run (of) | latency p50 / p99 / max | late p50 / p99 / max | over apiTimeout | late > pollInterval | requests per measurement | lists without selector | plugin peak RSS | plugin CPU |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, l := range r.Loads {
		var req []string
		for _, k := range sortedKeys(l.Requests) {
			req = append(req, fmt.Sprintf("%s %.2f", k, l.Requests[k]))
		}
		p("| %d | %d | %d s | %d s | %d (%.1f) | %d | %d (%d) | %d / %d / %d ms | %d / %d / %d ms | %d | %d | %s | %d | %s | %.2f cores |\n",
			l.Rollouts, l.Namespaces, l.SetupSeconds, l.WindowSeconds, l.Measurements, float64(l.Measurements)/float64(max(l.WindowSeconds, 1)), l.Errors, l.FewestPerRun, l.ExpectedRun,
			l.LatencyMS.P50, l.LatencyMS.P99, l.LatencyMS.Max, l.LateMS.P50, l.LateMS.P99, l.LateMS.Max,
			l.OverTimeout, l.LateByPoll, strings.Join(req, ", "), l.UnselectedList, mb(l.PluginPeakRSS), l.PluginCPU)
	}
	p("\n")
	for _, l := range r.Loads {
		if l.Rollouts != 200 {
			continue
		}
		p("At 200 Rollouts (the bounds TestReliability asserts): every measurement answered within apiTimeout — %s;\n"+
			"none lost (every run measured at least %d times in %d intervals) — %s; none late by more than one interval — %s;\n"+
			"plugin RSS below 100 MB — %s (%s).\n\n",
			check(l.OverTimeout == 0 && l.Errors == 0), l.ExpectedRun-1, l.ExpectedRun, check(l.FewestPerRun >= l.ExpectedRun-1),
			check(l.LateByPoll == 0), check(l.PluginPeakRSS < 100<<20), mb(l.PluginPeakRSS))
	}
	for _, l := range r.Loads {
		if l.Rollouts > 200 {
			p("The %d-Rollout load (outside CI) took %d s to set up and %d s to measure.\n\n", l.Rollouts, l.SetupSeconds, l.WindowSeconds)
		}
	}

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

	p("## Least privilege\n\n")
	lp := r.LeastPrivilege
	p("The plugin as a ServiceAccount bound only by the generated `rbac.yaml`, on the frame of %s whose\n"+
		"experiment runs its analysis (so every read the plugin makes happens): %s (pinned %s). What it asked\n"+
		"for (audit log): %s. Then each grant of the Role removed in turn (RBAC's answer awaited with a\n"+
		"SubjectAccessReview), a new verification each time:\n\n", lp.Scenario, lp.Full.Phase, lp.Full.Pinned, strings.Join(lp.Used, ", "))
	p("| removed | measurement |\n|---|---|\n")
	for _, g := range lp.Removed {
		p("| %s | %s: %s |\n", g.Grant, g.Step.Phase, cell(g.Step.Message))
	}
	ks := r.KubeconfigSecret
	p("\nWith `kubeconfigSecret` (the generated multi-cluster `rbac.yaml`; a TokenRequest token of its\n"+
		"ServiceAccount in the kubeconfig, as no token controller runs here), the plugin's own identity bound to\n"+
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
		"FuzzMetric":         "any metric JSON through the plugin's Run: no panic, a controller phase, a JSON value of at most 4 KiB, an Error with a message",
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
	b.WriteString(notes)
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
