// The fault tests of the reliability rig: what a verification does when the world fails under it.

package reliability

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// A Rollout deleted mid-verification: the measurement is Error, naming the Rollout that is gone.
func faultRolloutDeleted(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "Error, naming the Rollout not found; never Successful"}
	s := startVerification(t, r, "fault-deleted", tl, relMid(t, tl), fastPoll)
	if err := r.admin.Dynamic.Resource(rolloutsRes).Namespace(s.ns).Delete(context.Background(), harness.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := waitMeasurement(t, r, s, 30*time.Second, "Error", func(m *v1alpha1.Measurement) bool { return m.Phase == v1alpha1.AnalysisPhaseError })
	want := fmt.Sprintf("Rollout %s/%s not found", s.ns, harness.Name)
	if !strings.Contains(m.Message, want) {
		t.Errorf("message %q does not say %q", m.Message, want)
	}
	res.Written = r.written(s.key, s.at)
	if anySuccessful(res.Written) {
		t.Errorf("Successful after the Rollout was deleted: %+v", res.Written)
	}
	ar, _ := r.run(s.ns, s.run)
	res.Final = string(ar.Status.Phase) + " (the run, at the first Error; the controller retries an Error 4 times, 10 s apart, before it ends the run Error)"
	return res
}

// An API server slower than apiTimeout: Error, naming the timeout; judged again when it answers.
func faultAPISlow(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "Error naming apiTimeout while the API server is slower; Running again after"}
	s := startVerification(t, r, "fault-slow", tl, relMid(t, tl), map[string]any{"pollInterval": "2s", "apiTimeout": "1s"})
	delay := 3 * time.Second
	r.pluginPx.slow(delay)
	from := time.Now()
	m := waitMeasurement(t, r, s, 30*time.Second, "Error", func(m *v1alpha1.Measurement) bool { return m.Phase == v1alpha1.AnalysisPhaseError })
	if !strings.Contains(m.Message, "did not answer within 1s") {
		t.Errorf("message %q does not name the timeout", m.Message)
	}
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == s.key && !w.Written.Before(from) && w.Measurement.Phase == v1alpha1.AnalysisPhaseError {
			res.Observed = append(res.Observed, fmt.Sprintf("the Error measurement took %s (apiTimeout 1s, the server's answer delayed %s)", w.Written.Sub(w.Taken).Round(10*time.Millisecond), delay))
			break
		}
	}
	r.pluginPx.slow(0)
	waitMeasurement(t, r, s, 30*time.Second, "Running again", func(m *v1alpha1.Measurement) bool {
		return m.Phase == v1alpha1.AnalysisPhaseRunning && m.Metadata["revision"] == tl.PodTemplateHash
	})
	res.finish(t, r, s, tl, "on the analysis in flight")
	return res
}

// The plugin process killed by SIGKILL between two measurements: what the controller does, and the
// Verification resumes or fails, never Successful without a judgement.
func faultPluginKilled(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "the verification resumes (or fails), never Successful without a judgement"}
	s := startVerification(t, r, "fault-killed", tl, relMid(t, tl), fastPoll)
	before := pluginPIDs()
	if len(before) != 1 {
		t.Fatalf("plugin processes %v, want one", before)
	}
	ar, err := r.run(s.ns, s.run)
	if err != nil {
		t.Fatal(err)
	}
	first := lastMeasurement(ar).DeepCopy()
	if err := syscall.Kill(before[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	m := waitWrite(t, r, s.key, killed, 60*time.Second)
	after := pluginPIDs()
	if len(after) != 1 || after[0] == before[0] {
		t.Errorf("plugin processes after the kill %v (before %v): want one new one", after, before)
	}
	res.Observed = append(res.Observed, fmt.Sprintf("first measurement stored after the kill, %s later: %s, pinned %q, started %s (the killed process's measurement started %s)",
		firstWrite(r, s.key, killed).Sub(killed).Round(time.Second), m.Phase, m.Metadata["revision"], m.StartedAt.UTC().Format(time.RFC3339), first.StartedAt.UTC().Format(time.RFC3339)))
	if m.Phase != v1alpha1.AnalysisPhaseRunning || m.Metadata["revision"] != tl.PodTemplateHash {
		t.Errorf("after the kill: %s %q pinned %q, want the verification Running on %s", m.Phase, m.Message, m.Metadata["revision"], tl.PodTemplateHash)
	}
	res.finish(t, r, s, tl, "before a judgement")
	return res
}

// waitWrite waits for the controller to store a measurement of run key after from, and returns it.
func waitWrite(t *testing.T, r *rig, key string, from time.Time, timeout time.Duration) *v1alpha1.Measurement {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, w := range r.ctrl.writes.snapshot() {
			if w.Key == key && w.Written.After(from) {
				m := w.Measurement
				return &m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: no measurement stored within %s", key, timeout)
	return nil
}

// firstWrite is when the controller first stored a measurement for key after from.
func firstWrite(r *rig, key string, from time.Time) time.Time {
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == key && w.Written.After(from) {
			return w.Written
		}
	}
	return from
}

// The analysis controller restarted mid-verification (and the plugin with it, as in a pod restart): the
// measurement in flight keeps its pin and start, and the verdict is the scenario's.
func faultControllerRestarted(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "the measurement resumed with its pinned revision; the verdict the scenario's (" + tl.Verification + ")"}
	s := startVerification(t, r, "fault-controller", tl, relMid(t, tl), fastPoll)
	ar, err := r.run(s.ns, s.run)
	if err != nil {
		t.Fatal(err)
	}
	before := lastMeasurement(ar).DeepCopy()
	if err := r.restartController(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	m := waitWrite(t, r, s.key, restarted, 30*time.Second)
	if m.Metadata["revision"] != before.Metadata["revision"] || !m.StartedAt.Equal(before.StartedAt) {
		t.Errorf("after the restart: pinned %q started %v, before %q started %v", m.Metadata["revision"], m.StartedAt, before.Metadata["revision"], before.StartedAt)
	}
	res.Observed = append(res.Observed, fmt.Sprintf("the new controller resumed the same measurement (started %s, pinned %s)", m.StartedAt.UTC().Format(time.RFC3339), m.Metadata["revision"]))
	res.Final = finish(t, r, s, tl)
	if res.Final != tl.Verification {
		t.Errorf("the verification ended %s, the scenario's is %s", res.Final, tl.Verification)
	}
	ar, _ = r.run(s.ns, s.run)
	if got := lastMeasurement(ar).Metadata["revision"]; got != before.Metadata["revision"] {
		t.Errorf("the final measurement pinned %q, the first %q", got, before.Metadata["revision"])
	}
	res.Written = r.written(s.key, s.at)
	return res
}

// The API server stopped for 30 s mid-verification and started again on the same etcd data: Error while
// it is down, judged again after, never Successful on stale data.
func faultAPIServerRestarted(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "Error while the API server is down; judged again after the restart; never Successful on the data from before"}
	s := startVerification(t, r, "fault-apiserver", tl, relMid(t, tl), fastPoll)
	// before the restart the measurements are answered from the namespace's watches
	cached := waitCached(t, r, s, 20*time.Second)
	res.Observed = append(res.Observed, fmt.Sprintf("before the restart, %d measurements answered from the watches without a request", cached))
	// the proxies drop the connections (and the plugin's watches) before the server is stopped
	dropped := time.Now()
	stopped, ready, err := r.restartCluster(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	res.Observed = append(res.Observed, fmt.Sprintf("the API server was stopped for %s (and took %s to start again)", (30*time.Second).String(), ready.Sub(stopped.Add(30*time.Second)).Round(time.Second)))
	for _, e := range r.logs.of(s.key, stopped, ready) {
		res.Unwritten = append(res.Unwritten, e.Level+": "+e.Message)
	}
	errors, successes := 0, 0
	for _, u := range res.Unwritten {
		switch {
		case strings.Contains(u, "Measurement had error"):
			errors++
		case strings.Contains(u, "Result: Successful"):
			successes++
		}
	}
	if errors == 0 || successes > 0 {
		t.Errorf("while the API server was down the controller logged %d Error and %d Successful measurements: %v", errors, successes, res.Unwritten)
	}
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == s.key && w.Written.After(stopped) && w.Written.Before(ready) {
			t.Errorf("a measurement was written while the API server was down: %+v", w.Measurement)
		}
	}
	res.Unwritten = foldLines(res.Unwritten)
	if lines := r.pluginLog.since(dropped, "namespace "+s.ns+" ", "reading directly"); len(lines) != 1 {
		t.Errorf("the plugin logged %d reasons for the broken watches of %s, want one: %q", len(lines), s.ns, lines)
	} else {
		res.Observed = append(res.Observed, "the plugin logged: "+lines[0])
	}
	m := waitWrite(t, r, s.key, ready, 90*time.Second)
	judged := firstWrite(r, s.key, ready)
	res.Observed = append(res.Observed, fmt.Sprintf("first measurement stored %s after the API server was ready: %s, pinned %s", judged.Sub(ready).Round(time.Second), m.Phase, m.Metadata["revision"]))
	if m.Phase != v1alpha1.AnalysisPhaseRunning || m.Metadata["revision"] != tl.PodTemplateHash {
		t.Errorf("after the restart: %s pinned %q, want Running pinned %s (the analysis is still in flight)", m.Phase, m.Metadata["revision"], tl.PodTemplateHash)
	}
	res.finish(t, r, s, tl, "before the analysis passed")
	return res
}

// foldLines counts repeated lines.
func foldLines(lines []string) []string {
	var out []string
	n := 0
	for i, l := range lines {
		n++
		if i+1 < len(lines) && lines[i+1] == l {
			continue
		}
		if n > 1 {
			l = fmt.Sprintf("%s (×%d)", l, n)
		}
		out = append(out, l)
		n = 0
	}
	return out
}

// waitCached waits until the plugin answers the verification's measurements from its watches: two
// consecutive measurements stored with no request of the plugin in the namespace between them. It
// returns how many it saw so answered.
func waitCached(t *testing.T, r *rig, s started, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	from := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		var at []time.Time
		for _, w := range r.ctrl.writes.snapshot() {
			if w.Key == s.key && w.Written.After(from) {
				at = append(at, w.Written)
			}
		}
		if len(at) < 2 {
			continue
		}
		events, err := r.audit(saUser(relSystemNS, relPluginSA), at[0], at[len(at)-1])
		if err != nil {
			t.Fatal(err)
		}
		direct := 0
		for _, e := range events {
			if e.ObjectRef.Namespace == s.ns && e.Verb != "watch" {
				direct++
			}
		}
		if direct == 0 {
			return len(at) - 1
		}
		from = at[len(at)-1]
	}
	t.Fatalf("%s: the measurements were not answered from the watches within %s", s.key, timeout)
	return 0
}

// RBAC without watch (the generated Role with its watch grants removed): every measurement is read
// directly and exact, the refused watch is logged once with its reason, and the verdict is the scenario's.
func faultWatchRefused(t *testing.T, r *rig, tl *harness.Timeline) faultResult {
	res := faultResult{Expected: "Running, read directly, while the watches are refused; the reason logged once; the verdict the scenario's (" + tl.Verification + ")"}
	from := time.Now()
	s := startVerificationWithout(t, r, "fault-watch-refused", tl, relMid(t, tl), fastPoll,
		"watch rollouts", "watch analysisruns", "watch experiments")
	lines := r.pluginLog.wait(from, 20*time.Second, "namespace "+s.ns+" ", "reading directly")
	if len(lines) == 0 {
		t.Fatal("the plugin logged no reason for the refused watch")
	}
	if !strings.Contains(lines[0], "cannot watch resource") {
		t.Errorf("the logged reason does not name the refused verb: %s", lines[0])
	}
	res.Observed = append(res.Observed, "the plugin logged: "+lines[0])
	t1 := time.Now()
	time.Sleep(7 * time.Second)
	t2 := time.Now()
	measured := 0
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == s.key && w.Written.After(t1) && w.Written.Before(t2) {
			measured++
			if w.Measurement.Phase != v1alpha1.AnalysisPhaseRunning {
				t.Errorf("without watch: %s %q", w.Measurement.Phase, w.Measurement.Message)
			}
		}
	}
	time.Sleep(time.Second)
	events, err := r.audit(saUser(relSystemNS, relPluginSA), t1, t2)
	if err != nil {
		t.Fatal(err)
	}
	gets := 0
	for _, e := range events {
		if e.ObjectRef.Namespace == s.ns && e.Verb == "get" && e.ObjectRef.Resource == "rollouts" {
			gets++
		}
	}
	if measured == 0 || gets < measured {
		t.Errorf("%d measurements and %d direct reads of the Rollout in %s: each should be read directly", measured, gets, t2.Sub(t1).Round(time.Second))
	}
	res.Observed = append(res.Observed, fmt.Sprintf("%d measurements in %s, each read directly (%d gets of the Rollout)", measured, t2.Sub(t1).Round(time.Second), gets))
	if n := len(r.pluginLog.since(from, "namespace "+s.ns+" ")); n != 1 {
		t.Errorf("the plugin logged %d lines about %s, want one (a retry a minute)", n, s.ns)
	}
	res.finish(t, r, s, tl, "before the analysis passed")
	return res
}
