package pluginproof

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

func playWithVerification(env *harness.Env, sc harness.Scenario, bins kargoverify.PluginBinaries, config map[string]string) (res PluginResult, err error) {
	vs := []*kargoverify.Verification{
		{Name: kargoverify.VerificationAtStart, Stage: "at-release", Want: sc.Verification, Healthy: func(*v1alpha1.Rollout) (bool, error) { return true, nil }},
		{Name: kargoverify.VerificationBuiltin, Stage: "builtin", Want: sc.Kargo, Healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.Health(ro, bins.BuiltinCM)
			return h == "Healthy", err
		}},
		{Name: kargoverify.VerificationOurs, Stage: "ours", Want: sc.Kargo, Healthy: func(ro *v1alpha1.Rollout) (bool, error) {
			h, err := bins.Health(ro, "")
			return h == "Healthy", err
		}},
	}
	for _, v := range vs {
		v.Started = -1
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
	opts.AfterTick = func(w *harness.World) error {
		if !w.Recording {
			return nil
		}
		tick := w.Reconciles
		ro := w.Rollout()
		if stable == "" {
			stable = ro.Status.StableRS
		}
		if released == "" && ro.Status.CurrentPodHash != stable && ro.Status.CurrentPodHash != "" {
			released = ro.Status.CurrentPodHash
		}
		for _, v := range vs {
			if v.Started < 0 {
				ok, err := v.Healthy(ro)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				ar, err := bins.VerificationRun(w.Namespace, v.Stage, kargoverify.FreightImage(ro))
				if err != nil {
					return err
				}
				if err := w.Create(ar); err != nil {
					return err
				}
				v.Run, v.Started = ar.Name, tick
				if v.Name != kargoverify.VerificationAtStart {
					v.Hash = ro.Status.CurrentPodHash // Kargo starts it on a Healthy Stage: the controller observed the Freight
				}
				continue
			}
			if v.Name == kargoverify.VerificationAtStart {
				v.Hash = released
			}
			ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), v.Run, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v.Note(string(ar.Status.Phase))
			truth, err := kargoverify.GroundTruth(w, ro, v.Hash)
			if err != nil {
				return err
			}
			// the plugin measured during this tick's reconcile of the run, after the previous tick's state
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && !truth.Passed {
				v.Violations = append(v.Violations, fmt.Sprintf("%s tick %d: Successful before every analysis of revision %s passed", v.Name, tick, v.Hash))
			}
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && len(truth.Failed) > 0 {
				v.Violations = append(v.Violations, fmt.Sprintf("%s tick %d: Successful while %v", v.Name, tick, truth.Failed))
			}
			if len(v.PrevFailed) > 0 && v.Started < tick && !ar.Status.Phase.Completed() {
				v.Violations = append(v.Violations, fmt.Sprintf("%s tick %d: %s a tick after %v", v.Name, tick, ar.Status.Phase, v.PrevFailed))
			}
			v.PrevFailed = truth.Failed
			// the revision the plugin pinned, in the measurement's metadata, is the one being verified
			for _, mr := range ar.Status.MetricResults {
				for _, m := range mr.Measurements {
					if pinned := m.Metadata["revision"]; pinned != "" && v.Hash != "" && pinned != v.Hash {
						v.Violations = append(v.Violations, fmt.Sprintf("%s tick %d: the plugin pinned revision %s, the verification is of %s", v.Name, tick, pinned, v.Hash))
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
			se, ok := r.(harness.ScriptError)
			if !ok {
				panic(r)
			}
			err = se.Err
		}
	}()
	s := &harness.S{World: w}
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
		res.Verifications[v.Name] = v.Sequence()
		problems = append(problems, v.Violations...)
		if v.Started >= 0 && !v1alpha1.AnalysisPhase(v.Final()).Completed() {
			problems = append(problems, fmt.Sprintf("%s: still %s at the end", v.Name, v.Final()))
		}
	}
	for _, v := range vs {
		if got := v.Final(); got != v.Want {
			problems = append(problems, fmt.Sprintf("%s: ended %s (%s), the scenario declares %s", v.Name, got, v.Sequence(), v.Want))
		}
	}
	if vs[0].Started < 0 {
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
// Verification run (Kargo's stage label) measures only the plugin's metric.
func countRequests(env *harness.Env, w *harness.World) (requestCounts, []string, error) {
	var c requestCounts
	var problems []string
	measured := map[harness.Endpoint]int{}
	for _, ar := range w.AnalysisRuns() {
		if ar.Labels[harness.KargoStageLabel] != "" {
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
				e, err := harness.EndpointOf(m, ar.Spec.Args)
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
