package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestReliability is the plugin under faults, with least privilege, on oversized objects and under load,
// in the real analysis controller on the real API server (the rig: reliability_rig_test.go). Every case
// asserts its rule; with -update the figures measured go to ../testdata/reliability/<version>.json, from
// which docs/reliability.md is rendered (make reliability). $E2E_RELIABILITY_LOAD lists the loads in
// Rollouts (default 200; 0 for none), each in namespaces of ten.
func TestReliability(t *testing.T) {
	r := newRig(t)
	tl, err := readTimeline(relScenario)
	if err != nil {
		t.Fatal(err)
	}
	rep := &relReport{Controller: ControllerVersion(), Scenario: relScenario, Machine: thisMachine()}
	t.Run("LeastPrivilege", func(t *testing.T) { rep.LeastPrivilege = leastPrivilege(t, r) })
	t.Run("KubeconfigSecret", func(t *testing.T) { rep.KubeconfigSecret = kubeconfigSecretReads(t, r, tl) })
	t.Run("Oversized", func(t *testing.T) { rep.Oversized = oversized(t, r, tl) })
	for _, f := range []struct {
		name string
		run  func(*testing.T, *rig, *Timeline) faultResult
	}{
		{"RolloutDeleted", faultRolloutDeleted},
		{"APISlow", faultAPISlow},
		{"PluginKilled", faultPluginKilled},
		{"ControllerRestarted", faultControllerRestarted},
		{"APIServerRestarted", faultAPIServerRestarted},
	} {
		t.Run(f.name, func(t *testing.T) {
			res := f.run(t, r, tl)
			res.Fault = f.name
			rep.Faults = append(rep.Faults, res)
		})
	}
	for _, n := range loadSizes(t) {
		t.Run(fmt.Sprintf("Load%d", n), func(t *testing.T) { rep.Loads = append(rep.Loads, load(t, r, tl, n)) })
	}
	if t.Failed() || !*update {
		return
	}
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sourceDir(), "..", "testdata", "reliability", RolloutsVersion()+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// relReport is the run's output (../testdata/reliability/<version>.json).
type relReport struct {
	Machine          machine         `json:"machine"`
	Controller       string          `json:"controller"`
	Scenario         string          `json:"scenario"`
	LeastPrivilege   privilegeResult `json:"leastPrivilege"`
	KubeconfigSecret secretResult    `json:"kubeconfigSecret"`
	Oversized        []oversizedCase `json:"oversized"`
	Faults           []faultResult   `json:"faults"`
	Loads            []loadResult    `json:"loads"`
}

type machine struct {
	CPU     string `json:"cpu"`
	Cores   int    `json:"cores"`
	MemGiB  int    `json:"memGiB"`
	Kernel  string `json:"kernel"`
	Started string `json:"started"`
}

func thisMachine() machine {
	m := machine{Started: time.Now().UTC().Format(time.RFC3339)}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
			}
			if strings.HasPrefix(l, "processor") {
				m.Cores++
			}
		}
	}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(strings.Split(string(raw), "\n")[0], "MemTotal:")), "%d", &kb)
		m.MemGiB = int((kb + 512*1024) / (1024 * 1024))
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	return m
}

// measStep is one measurement the controller wrote, as the doc shows it.
type measStep struct {
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	Pinned  string `json:"pinned,omitempty"`
}

// finish records what the controller stored for the verification, which must hold no Successful
// measurement (when: before what), and lets it end with the scenario's last frame, as the scenario declares.
func (res *faultResult) finish(t *testing.T, r *rig, s started, tl *Timeline, when string) {
	t.Helper()
	res.Written = r.written(s.key, s.at)
	if anySuccessful(res.Written) {
		t.Errorf("Successful %s: %+v", when, res.Written)
	}
	res.Final = finish(t, r, s, tl)
	if res.Final != tl.Verification {
		t.Errorf("the verification ended %s, the scenario's is %s", res.Final, tl.Verification)
	}
}

type faultResult struct {
	Fault    string `json:"fault"`
	Expected string `json:"expected"`
	// Written is what the controller stored, measurement by measurement; Unwritten the measurements it
	// took but could not store (from its log), Observed the rest of what happened.
	Written   []measStep `json:"written"`
	Unwritten []string   `json:"unwritten,omitempty"`
	Observed  []string   `json:"observed"`
	Final     string     `json:"final"`
}

// written is the measurements the controller stored for run key since from, consecutive repeats of one
// phase and message folded.
func (r *rig) written(key string, from time.Time) []measStep {
	var out []measStep
	for _, m := range r.ctrl.writes.snapshot() {
		if m.Key != key || m.Written.Before(from) {
			continue
		}
		s := measStep{Phase: string(m.Measurement.Phase), Message: m.Measurement.Message, Pinned: m.Measurement.Metadata["revision"]}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func anySuccessful(steps []measStep) bool {
	for _, s := range steps {
		if s.Phase == string(v1alpha1.AnalysisPhaseSuccessful) {
			return true
		}
	}
	return false
}

// started is a verification of the recorded Rollout in flight: its namespace, run, and pinned revision.
type started struct {
	ns, run, image string
	key            string
	at             time.Time
}

// startVerification stores frame mid of tl in a new namespace ns (with the generated rbac.yaml) and starts
// a verification run there, waiting for its first measurement: Running, with the released revision pinned.
func startVerification(t *testing.T, r *rig, ns string, tl *Timeline, mid int, config map[string]any) started {
	t.Helper()
	if _, err := r.newNamespace(ns); err != nil {
		t.Fatal(err)
	}
	if err := r.applyFrame(ns, Name, tl.Frames[mid]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	s := started{ns: ns, image: freightImage(ro), at: time.Now()}
	ar, err := r.verification(ns, Name, s.image, config)
	if err != nil {
		t.Fatal(err)
	}
	s.run, s.key = ar.Name, ns+"/"+ar.Name
	m := waitMeasurement(t, r, s, 60*time.Second, "Running with the released revision pinned", func(m *v1alpha1.Measurement) bool {
		return m.Phase == v1alpha1.AnalysisPhaseRunning && m.Metadata["revision"] == tl.PodTemplateHash
	})
	_ = m
	return s
}

func waitMeasurement(t *testing.T, r *rig, s started, timeout time.Duration, what string, cond func(*v1alpha1.Measurement) bool) *v1alpha1.Measurement {
	t.Helper()
	ar, err := r.waitRun(s.ns, s.run, timeout, what, func(ar *v1alpha1.AnalysisRun) bool {
		m := lastMeasurement(ar)
		return m != nil && cond(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	return lastMeasurement(ar)
}

// finish stores the timeline's last frame (the revision promoted, its analysis Successful) and waits
// for the run to complete; it returns the run's phase.
func finish(t *testing.T, r *rig, s started, tl *Timeline) string {
	t.Helper()
	if err := r.applyFrame(s.ns, Name, tl.Frames[len(tl.Frames)-1]); err != nil {
		t.Fatal(err)
	}
	ar, err := r.waitRun(s.ns, s.run, 90*time.Second, "completed", func(ar *v1alpha1.AnalysisRun) bool { return ar.Status.Phase.Completed() })
	if err != nil {
		t.Fatal(err)
	}
	return string(ar.Status.Phase)
}

func relMid(t *testing.T, tl *Timeline) int {
	mid, err := midFrame(tl)
	if err != nil {
		t.Fatal(err)
	}
	return mid
}

var fastPoll = map[string]any{"pollInterval": "2s"}

// A Rollout deleted mid-verification: the measurement is Error, naming the Rollout that is gone.
func faultRolloutDeleted(t *testing.T, r *rig, tl *Timeline) faultResult {
	res := faultResult{Expected: "Error, naming the Rollout not found; never Successful"}
	s := startVerification(t, r, "fault-deleted", tl, relMid(t, tl), fastPoll)
	if err := r.admin.Dynamic.Resource(rolloutsRes).Namespace(s.ns).Delete(context.Background(), Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := waitMeasurement(t, r, s, 30*time.Second, "Error", func(m *v1alpha1.Measurement) bool { return m.Phase == v1alpha1.AnalysisPhaseError })
	want := fmt.Sprintf("Rollout %s/%s not found", s.ns, Name)
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
func faultAPISlow(t *testing.T, r *rig, tl *Timeline) faultResult {
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
// verification resumes or fails, never Successful without a judgement.
func faultPluginKilled(t *testing.T, r *rig, tl *Timeline) faultResult {
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
func faultControllerRestarted(t *testing.T, r *rig, tl *Timeline) faultResult {
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
func faultAPIServerRestarted(t *testing.T, r *rig, tl *Timeline) faultResult {
	res := faultResult{Expected: "Error while the API server is down; judged again after the restart; never Successful on the data from before"}
	s := startVerification(t, r, "fault-apiserver", tl, relMid(t, tl), fastPoll)
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

// privilegeResult: the plugin with exactly the generated Role, and with each of its grants removed.
type privilegeResult struct {
	Scenario string `json:"scenario"`
	// Used is what the plugin asked for with the whole Role (verb resource, from the audit log).
	Used    []string       `json:"used"`
	Full    measStep       `json:"full"`
	Removed []removedGrant `json:"removed"`
}

type removedGrant struct {
	Grant string   `json:"grant"` // "verb resource"
	Step  measStep `json:"measurement"`
}

// leastPrivilege runs the plugin as a ServiceAccount bound only by the generated rbac.yaml, on a frame
// whose running experiment names its run (so every read the plugin makes happens), then with each verb of each
// resource of the Role removed in turn: Error naming the verb and the resource, every time. A grant whose
// removal the plugin does not notice is more than it needs.
func leastPrivilege(t *testing.T, r *rig) privilegeResult {
	tl, err := readTimeline(relExperiment)
	if err != nil {
		t.Fatal(err)
	}
	res := privilegeResult{Scenario: relExperiment}
	frame := -1
	for i, f := range tl.Frames {
		for _, e := range f.Experiments {
			runs, _, _ := unstructured.NestedSlice(e, "status", "analysisRuns")
			phase, _, _ := unstructured.NestedString(e, "status", "phase")
			for _, run := range runs {
				if name, _, _ := unstructured.NestedString(run.(map[string]any), "analysisRun"); name != "" && phase == string(v1alpha1.AnalysisPhaseRunning) && frame < 0 {
					frame = i
				}
			}
		}
	}
	if frame < 0 {
		t.Fatalf("%s: no frame with an experiment running its analysis", relExperiment)
	}
	ns := "least-privilege"
	role, err := r.newNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.applyFrame(ns, Name, tl.Frames[frame]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[frame])
	if err != nil {
		t.Fatal(err)
	}
	measure := func() (*v1alpha1.Measurement, time.Time) {
		from := time.Now()
		ar, err := r.verification(ns, Name, freightImage(ro), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := started{ns: ns, run: ar.Name}
		m := waitMeasurement(t, r, s, 60*time.Second, "measured", func(m *v1alpha1.Measurement) bool { return m.Phase != "" && m.Phase != v1alpha1.AnalysisPhasePending })
		// one measurement per run: the next case's is its own
		_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(context.Background(), ar.Name, metav1.DeleteOptions{})
		return m, from
	}
	m, from := measure()
	res.Full = measStep{Phase: string(m.Phase), Message: m.Message, Pinned: m.Metadata["revision"]}
	if m.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("with the generated Role: %s %q, want Running (the experiment's analysis is in flight)", m.Phase, m.Message)
	}
	time.Sleep(time.Second) // the audit log is written as requests complete
	events, err := r.audit(saUser(relSystemNS, relPluginSA), from, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, e := range events {
		used[e.Verb+" "+e.ObjectRef.Resource] = true
		if e.ResponseStatus.Code != 200 || e.ObjectRef.Namespace != ns {
			t.Errorf("the plugin's request %s %s: %d in namespace %q", e.Verb, e.RequestURI, e.ResponseStatus.Code, e.ObjectRef.Namespace)
		}
		if e.Verb == "list" && !strings.Contains(e.RequestURI, "labelSelector=") {
			t.Errorf("the plugin listed without a label selector: %s", e.RequestURI)
		}
	}
	for u := range used {
		res.Used = append(res.Used, u)
	}
	sort.Strings(res.Used)
	granted := grants(role)
	for _, g := range granted {
		verb, resource, _ := strings.Cut(g, " ")
		if err := r.setRole(ns, role, g); err != nil {
			t.Fatal(err)
		}
		if err := r.waitAccess(ns, verb, resource, false); err != nil {
			t.Fatal(err)
		}
		m, _ := measure()
		res.Removed = append(res.Removed, removedGrant{Grant: g, Step: measStep{Phase: string(m.Phase), Message: m.Message}})
		want := fmt.Sprintf("cannot %s resource %q", verb, resource)
		if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, want) {
			t.Errorf("without %s: %s %q, want Error saying %s", g, m.Phase, m.Message, want)
		}
		if !used[g] {
			t.Errorf("the generated Role grants %s, which the plugin did not use", g)
		}
		if err := r.setRole(ns, role, ""); err != nil {
			t.Fatal(err)
		}
		if err := r.waitAccess(ns, verb, resource, true); err != nil {
			t.Fatal(err)
		}
	}
	for u := range used {
		if !contains(granted, u) {
			t.Errorf("the plugin used %s, which the generated Role does not grant", u)
		}
	}
	return res
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// grants lists a Role's "verb resource" pairs.
func grants(role *rbacv1.Role) []string {
	var out []string
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			for _, v := range rule.Verbs {
				out = append(out, v+" "+res)
			}
		}
	}
	sort.Strings(out)
	return out
}

// setRole stores the generated Role without the grant "verb resource" (none: the Role as generated), one
// rule per resource, which grants the same.
func (r *rig) setRole(ns string, generated *rbacv1.Role, without string) error {
	ctx := context.Background()
	cur, err := r.admin.Kube.RbacV1().Roles(ns).Get(ctx, generated.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Rules = nil
	for _, rule := range generated.Rules {
		for _, res := range rule.Resources {
			var verbs []string
			for _, v := range rule.Verbs {
				if v+" "+res != without {
					verbs = append(verbs, v)
				}
			}
			if len(verbs) > 0 {
				cur.Rules = append(cur.Rules, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: []string{res}, Verbs: verbs})
			}
		}
	}
	_, err = r.admin.Kube.RbacV1().Roles(ns).Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// secretResult: with kubeconfigSecret, what the plugin's own identity read, and the remote one's.
type secretResult struct {
	Measurements int      `json:"measurements"`
	Local        []string `json:"local"`  // requests of the plugin's identity on the controller's cluster
	Remote       []string `json:"remote"` // of the identity of the kubeconfig in the Secret
}

// kubeconfigSecretReads: the plugin's own identity may read everything (cluster-admin), and reads only the
// one Secret; the Rollout is read with the identity of the generated multi-cluster rbac.yaml.
func kubeconfigSecretReads(t *testing.T, r *rig, tl *Timeline) secretResult {
	ns := "kubeconfig-secret"
	ctx := context.Background()
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	docs, err := r.generated(ns, "rbac.yaml", "--kubeconfig-secret", "workload", "--kubeconfig-key", "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	remoteSA := ""
	for _, raw := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ServiceAccount":
			var sa corev1.ServiceAccount
			if err := yaml.UnmarshalStrict(raw, &sa); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			remoteSA = sa.Name
		case "Secret":
			// the ServiceAccount's token Secret: no token controller runs here, so the kubeconfig below
			// carries a TokenRequest token of the same ServiceAccount instead
		case "Role":
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict(raw, &role); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.RbacV1().Roles(ns).Create(ctx, &role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict(raw, &rb); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("rbac.yaml holds a %s", meta.Kind)
		}
	}
	if remoteSA == "" {
		t.Fatal("the multi-cluster rbac.yaml holds no ServiceAccount")
	}
	dir := t.TempDir()
	kc, err := r.kubeconfig(ns, remoteSA, r.pluginPx, dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.admin.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "workload"},
		Data: map[string][]byte{"kubeconfig": raw}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.usePlugin(r.localKC); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.usePlugin(r.pluginKC); err != nil {
			t.Fatal(err)
		}
	}()
	mid := relMid(t, tl)
	if err := r.applyFrame(ns, Name, tl.Frames[mid]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	ar, err := r.verification(ns, Name, freightImage(ro), map[string]any{"pollInterval": "2s",
		"kubeconfigSecret": map[string]any{"name": "workload", "key": "kubeconfig"}})
	if err != nil {
		t.Fatal(err)
	}
	s := started{ns: ns, run: ar.Name, key: ns + "/" + ar.Name}
	waitMeasurement(t, r, s, 60*time.Second, "Running", func(m *v1alpha1.Measurement) bool { return m.Phase == v1alpha1.AnalysisPhaseRunning })
	time.Sleep(5 * time.Second) // two more resumes
	_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(ctx, ar.Name, metav1.DeleteOptions{})
	time.Sleep(time.Second)
	to := time.Now()
	var res secretResult
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == s.key {
			res.Measurements++
			if w.Measurement.Phase != v1alpha1.AnalysisPhaseRunning {
				t.Errorf("measurement %s %q", w.Measurement.Phase, w.Measurement.Message)
			}
		}
	}
	local, err := r.audit(saUser(relSystemNS, relLocalSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range local {
		res.Local = append(res.Local, fmt.Sprintf("%s %s %s/%s", e.Verb, e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name))
		if e.Verb != "get" || e.ObjectRef.Resource != "secrets" || e.ObjectRef.Namespace != ns || e.ObjectRef.Name != "workload" {
			t.Errorf("the plugin's own identity did %s %s", e.Verb, e.RequestURI)
		}
	}
	if len(local) < res.Measurements || res.Measurements < 2 {
		t.Errorf("%d reads of the Secret for %d measurements", len(local), res.Measurements)
	}
	remote, err := r.audit(saUser(ns, remoteSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range remote {
		res.Remote = append(res.Remote, e.Verb+" "+e.ObjectRef.Resource)
		if e.ObjectRef.Resource == "secrets" || e.ResponseStatus.Code != 200 {
			t.Errorf("the remote identity: %s %s %d", e.Verb, e.RequestURI, e.ResponseStatus.Code)
		}
	}
	res.Local, res.Remote = countLines(res.Local), countLines(res.Remote)
	return res
}

// countLines is each distinct line once, with its count.
func countLines(lines []string) []string {
	n := map[string]int{}
	for _, l := range lines {
		n[l]++
	}
	var out []string
	for l, c := range n {
		out = append(out, fmt.Sprintf("%s ×%d", l, c))
	}
	sort.Strings(out)
	return out
}

// oversizedCase is one oversized input: the measurement's time and value.
type oversizedCase struct {
	Case       string `json:"case"`
	Bytes      int    `json:"bytes"`
	Phase      string `json:"phase"`
	LatencyMS  int64  `json:"latencyMs"`
	ValueBytes int    `json:"valueBytes"`
}

// oversized: a Rollout of about 1 MB (its pod template padded with environment variables) and a run of
// the Rollout with 1,000 measurements (the recorded frame's, repeated): the measurement is answered
// within apiTimeout and its value is at most 4 KiB.
func oversized(t *testing.T, r *rig, tl *Timeline) []oversizedCase {
	mid := relMid(t, tl)
	var out []oversizedCase
	for _, c := range []struct {
		name string
		grow func(f *Frame) (int, error)
	}{
		{"a Rollout of 1 MB", func(f *Frame) (int, error) {
			containers, _, _ := unstructured.NestedSlice(f.Rollout, "spec", "template", "spec", "containers")
			c0 := containers[0].(map[string]any)
			var env []any
			for i := 0; i < 1000; i++ {
				env = append(env, map[string]any{"name": fmt.Sprintf("PADDING_%04d", i), "value": strings.Repeat("x", 1000)})
			}
			c0["env"] = env
			if err := unstructured.SetNestedSlice(f.Rollout, containers, "spec", "template", "spec", "containers"); err != nil {
				return 0, err
			}
			raw, err := json.Marshal(f.Rollout)
			return len(raw), err
		}},
		{"a run of 1,000 measurements", func(f *Frame) (int, error) {
			for i, ar := range f.AnalysisRuns {
				results, _, _ := unstructured.NestedSlice(ar, "status", "metricResults")
				if len(results) == 0 {
					continue
				}
				mr := results[0].(map[string]any)
				ms, _ := mr["measurements"].([]any)
				if len(ms) == 0 {
					continue
				}
				var grown []any
				for len(grown) < 1000 {
					grown = append(grown, ms[len(grown)%len(ms)])
				}
				mr["measurements"] = grown
				if err := unstructured.SetNestedSlice(f.AnalysisRuns[i], results, "status", "metricResults"); err != nil {
					return 0, err
				}
				raw, err := json.Marshal(f.AnalysisRuns[i])
				return len(raw), err
			}
			return 0, fmt.Errorf("the frame's runs have no measurement")
		}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			var f Frame
			raw, _ := json.Marshal(tl.Frames[mid])
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			size, err := c.grow(&f)
			if err != nil {
				t.Fatal(err)
			}
			ns := fmt.Sprintf("oversized-%d", len(out))
			if _, err := r.newNamespace(ns); err != nil {
				t.Fatal(err)
			}
			if err := r.applyFrame(ns, Name, f); err != nil {
				t.Fatal(err)
			}
			ro, err := frameRollout(f)
			if err != nil {
				t.Fatal(err)
			}
			ar, err := r.verification(ns, Name, freightImage(ro), fastPoll)
			if err != nil {
				t.Fatal(err)
			}
			s := started{ns: ns, run: ar.Name, key: ns + "/" + ar.Name}
			m := waitMeasurement(t, r, s, 60*time.Second, "measured", func(m *v1alpha1.Measurement) bool { return m.Phase != "" && m.Phase != v1alpha1.AnalysisPhasePending })
			oc := oversizedCase{Case: c.name, Bytes: size, Phase: string(m.Phase), ValueBytes: len(m.Value)}
			for _, w := range r.ctrl.writes.snapshot() {
				if w.Key == s.key {
					oc.LatencyMS = w.Written.Sub(w.Taken).Milliseconds()
					break
				}
			}
			if m.Phase != v1alpha1.AnalysisPhaseRunning {
				t.Errorf("%s: %s %q, want Running (the analysis is in flight)", c.name, m.Phase, m.Message)
			}
			if len(m.Value) > 4096 {
				t.Errorf("%s: a value of %d bytes", c.name, len(m.Value))
			}
			if oc.LatencyMS <= 0 || time.Duration(oc.LatencyMS)*time.Millisecond >= 10*time.Second {
				t.Errorf("%s: answered in %d ms, apiTimeout is 10s", c.name, oc.LatencyMS)
			}
			_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(context.Background(), ar.Name, metav1.DeleteOptions{})
			out = append(out, oc)
		})
	}
	return out
}
