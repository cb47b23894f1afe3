package recorder

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func playWithVerification(env *Env, sc Scenario, bins pluginBinaries, config map[string]string) (res PluginResult, err error) {
	vs := []*verification{
		{name: verificationAtStart, stage: "at-release", want: sc.Verification, healthy: func(*v1alpha1.Rollout) (bool, error) { return true, nil }},
		{name: verificationBuiltin, stage: "builtin", want: sc.Kargo, healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.health(ro, bins.builtinCM)
			return h == "Healthy", err
		}},
		{name: verificationOurs, stage: "ours", want: sc.Kargo, healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.health(ro, "")
			return h == "Healthy", err
		}},
	}
	for _, v := range vs {
		v.started = -1
	}
	if sc.Verification == "" || sc.Kargo == "" {
		return res, fmt.Errorf("scenario %s declares no verification outcome", sc.Name)
	}
	stable := ""   // the stable revision when the release was applied
	released := "" // the revision released: the first current one that is not that stable one
	opts := sc.Options
	if opts.RolloutsConfig != nil {
		return res, fmt.Errorf("scenario %s has an argo-rollouts-config of its own", sc.Name)
	}
	opts.RolloutsConfig = config
	// The plugin runs on the real clock (its resumeAt is real time + pollInterval): the World's clock
	// starts an hour ahead of it, so the controller resumes the measurement on every tick however slowly
	// the machine runs.
	opts.Epoch = time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	opts.AfterTick = func(w *World) error {
		if !w.recording {
			return nil
		}
		tick := w.reconciles
		ro := w.Rollout()
		if stable == "" {
			stable = ro.Status.StableRS
		}
		if released == "" && ro.Status.CurrentPodHash != stable && ro.Status.CurrentPodHash != "" {
			released = ro.Status.CurrentPodHash
		}
		for _, v := range vs {
			if v.started < 0 {
				ok, err := v.healthy(ro)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				ar, err := bins.verificationRun(w.ns, v.stage, freightImage(ro))
				if err != nil {
					return err
				}
				if err := w.Create(ar); err != nil {
					return err
				}
				v.run, v.started = ar.Name, tick
				if v.name != verificationAtStart {
					v.hash = ro.Status.CurrentPodHash // Kargo starts it on a Healthy Stage: the controller observed the Freight
				}
				continue
			}
			if v.name == verificationAtStart {
				v.hash = released
			}
			ar, err := w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).Get(context.Background(), v.run, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v.note(string(ar.Status.Phase))
			truth, err := groundTruth(w, ro, v.hash)
			if err != nil {
				return err
			}
			// the plugin measured during this tick's reconcile of the run, after the previous tick's state
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && !truth.passed {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: Successful before every analysis of revision %s passed", v.name, tick, v.hash))
			}
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && len(truth.failed) > 0 {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: Successful while %v", v.name, tick, truth.failed))
			}
			if len(v.prevFailed) > 0 && v.started < tick && !ar.Status.Phase.Completed() {
				v.violations = append(v.violations, fmt.Sprintf("%s tick %d: %s a tick after %v", v.name, tick, ar.Status.Phase, v.prevFailed))
			}
			v.prevFailed = truth.failed
			// the revision the plugin pinned, in the measurement's metadata, is the one being verified
			for _, mr := range ar.Status.MetricResults {
				for _, m := range mr.Measurements {
					if pinned := m.Metadata["revision"]; pinned != "" && v.hash != "" && pinned != v.hash {
						v.violations = append(v.violations, fmt.Sprintf("%s tick %d: the plugin pinned revision %s, the verification is of %s", v.name, tick, pinned, v.hash))
					}
				}
			}
		}
		return nil
	}
	sc.Options = opts
	w, err := env.NewWorld(opts)
	if err != nil {
		return res, err
	}
	defer w.Close()
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(scriptError)
			if !ok {
				panic(r)
			}
			err = se.err
		}
	}()
	s := &S{w: w}
	sc.Play(s)
	s.Ticks(3) // the verification's next measurement follows the last change
	if errs := w.SyncErrors(); len(errs) > 0 {
		return res, fmt.Errorf("the controllers failed to reconcile: %v", errs)
	}
	if got := w.Verdict(); got != sc.Verdict {
		return res, fmt.Errorf("analysis verdict %q, the scenario expects %q", got, sc.Verdict)
	}
	res = PluginResult{Scenario: sc.Name, Verdict: sc.Verdict, Verifications: map[string]string{},
		Expected: map[string]string{"at release": sc.Verification, "Kargo": sc.Kargo}}
	var problems []string
	for _, v := range vs {
		res.Verifications[v.name] = v.sequence()
		problems = append(problems, v.violations...)
		if v.started >= 0 && !v1alpha1.AnalysisPhase(v.final()).Completed() {
			problems = append(problems, fmt.Sprintf("%s: still %s at the end", v.name, v.final()))
		}
	}
	for _, v := range vs {
		if got := v.final(); got != v.want {
			problems = append(problems, fmt.Sprintf("%s: ended %s (%s), the scenario declares %s", v.name, got, v.sequence(), v.want))
		}
	}
	if vs[0].started < 0 {
		problems = append(problems, "the verification at release never started")
	}
	counts, countProblems, err := countRequests(env, w)
	if err != nil {
		return res, err
	}
	res.Requests, res.Measurements, res.Duplicates, res.Unreached = counts.requests, counts.measurements, counts.duplicates, counts.unreached
	problems = append(problems, countProblems...)
	if len(problems) > 0 {
		return res, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return res, nil
}

// requestCounts compare the metric server's requests with the Rollout's own measurements (PluginResult).
type requestCounts struct{ requests, measurements, duplicates, unreached int }

// countRequests counts the requests to the metric server against the Rollout's own measurements, per
// metric and run: a request that no measurement of the run its URL or query names explains is a
// duplicate query. The run is read back from the run itself: its metrics resolved with its args by the
// controller's own function, as the analysis controller does before it measures. The attempts of one
// analysis (a retry: …-1, …-1.1) carry the same args, so they share a key and are counted together.
// Measurements that failed to connect (the server down) reached no endpoint; they are counted apart. A
// verification run (Kargo's stage label) measures only the plugin's metric.
func countRequests(env *Env, w *World) (requestCounts, []string, error) {
	var c requestCounts
	var problems []string
	measured := map[Endpoint]int{}
	for _, ar := range w.AnalysisRuns() {
		if ar.Labels[kargoStageLabel] != "" {
			for _, mr := range ar.Status.MetricResults {
				if mr.Name != "rollout-analysis" {
					problems = append(problems, "the verification run measured "+mr.Name)
				}
			}
			continue
		}
		for _, m := range ar.Spec.Metrics {
			for _, mr := range ar.Status.MetricResults {
				if mr.Name != m.Name {
					continue
				}
				e, err := endpointOf(m, ar.Spec.Args)
				if err != nil {
					return c, nil, fmt.Errorf("AnalysisRun %s metric %s: %w", ar.Name, m.Name, err)
				}
				measured[e] += int(mr.Count + mr.Error)
				c.measurements += int(mr.Count + mr.Error)
			}
		}
	}
	requests := env.Metrics.Requests()
	for e := range measured {
		if _, ok := requests[e]; !ok {
			requests[e] = 0
		}
	}
	for e, n := range requests {
		c.requests += n
		switch {
		case n > measured[e]:
			c.duplicates += n - measured[e]
			problems = append(problems, fmt.Sprintf("%d requests to %q of run %q beyond the Rollout's own %d measurements of it", n-measured[e], e.Metric, e.Run, measured[e]))
		case n < measured[e]:
			c.unreached += measured[e] - n
		}
	}
	return c, problems, nil
}
