// Package reliability is the plugin's reliability rig (docs/reliability.md): faults, least privilege, a
// kubeconfig Secret, oversized objects and loads of thousands of Rollouts, each in clusters of its own
// with the version's analysis controller, measured beside the web provider and a do-nothing plugin.
package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// RunReliability is the plugin under faults, with least privilege, on oversized objects and under load,
// in the real analysis controller on the real API server (the rig: reliability_rig.go). Every case
// asserts its rule; with -update the figures measured go to ../testdata/reliability/<version>.json, from
// which docs/reliability.md is rendered (make reliability). $E2E_RELIABILITY_LOAD lists the loads in
// Rollouts (default 200; 0 for none), each in namespaces of ten.
func RunReliability(t *testing.T, update bool) {
	r := newRig(t)
	tl, err := readTimeline(relScenario)
	if err != nil {
		t.Fatal(err)
	}
	rep := &relReport{Controller: harness.ControllerVersion(), Scenario: relScenario, Machine: thisMachine()}
	t.Run("LeastPrivilege", func(t *testing.T) { rep.LeastPrivilege = leastPrivilege(t, r) })
	t.Run("KubeconfigSecret", func(t *testing.T) { rep.KubeconfigSecret = kubeconfigSecretReads(t, r, tl) })
	t.Run("Oversized", func(t *testing.T) { rep.Oversized = oversized(t, r, tl) })
	for _, f := range []struct {
		name string
		run  func(*testing.T, *rig, *harness.Timeline) faultResult
	}{
		{"RolloutDeleted", faultRolloutDeleted},
		{"APISlow", faultAPISlow},
		{"PluginKilled", faultPluginKilled},
		{"ControllerRestarted", faultControllerRestarted},
		// before the restart of the API server, after which the controller's own watches back off
		{"WatchRefused", faultWatchRefused},
		{"APIServerRestarted", faultAPIServerRestarted},
	} {
		t.Run(f.name, func(t *testing.T) {
			res := f.run(t, r, tl)
			res.Fault = f.name
			rep.Faults = append(rep.Faults, res)
		})
	}
	for _, l := range loadSpecs(t) {
		t.Run(l.name(), func(t *testing.T) { rep.Loads = append(rep.Loads, load(t, r, tl, l)...) })
	}
	if t.Failed() || !update {
		return
	}
	path := filepath.Join(cluster.TestdataDir(), "reliability", harness.RolloutsVersion()+".json")
	mergeReport(t, rep, path)
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
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
func (res *faultResult) finish(t *testing.T, r *rig, s started, tl *harness.Timeline, when string) {
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

// Started is a verification of the recorded Rollout in flight: its namespace, run, and pinned revision.
type started struct {
	ns, run, image string
	key            string
	at             time.Time
}

// startVerification stores frame mid of tl in a new namespace ns (with the generated rbac.yaml) and starts
// a verification run there, waiting for its first measurement: Running, with the released revision pinned.
func startVerification(t *testing.T, r *rig, ns string, tl *harness.Timeline, mid int, config map[string]any) started {
	t.Helper()
	return startVerificationWithout(t, r, ns, tl, mid, config)
}

// startVerificationWithout is startVerification with the generated Role of ns stripped of the grants
// without ("verb resource") before the first measurement.
func startVerificationWithout(t *testing.T, r *rig, ns string, tl *harness.Timeline, mid int, config map[string]any, without ...string) started {
	t.Helper()
	role, err := r.newNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(without) > 0 {
		if err := r.setRole(ns, role, without...); err != nil {
			t.Fatal(err)
		}
		for _, g := range without {
			verb, resource, _ := strings.Cut(g, " ")
			if err := r.waitAccess(ns, verb, resource, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.applyFrame(ns, harness.Name, tl.Frames[mid]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	s := started{ns: ns, image: kargoverify.FreightImage(ro), at: time.Now()}
	ar, err := r.verification(ns, harness.Name, s.image, config)
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
func finish(t *testing.T, r *rig, s started, tl *harness.Timeline) string {
	t.Helper()
	if err := r.applyFrame(s.ns, harness.Name, tl.Frames[len(tl.Frames)-1]); err != nil {
		t.Fatal(err)
	}
	ar, err := r.waitRun(s.ns, s.run, 90*time.Second, "completed", func(ar *v1alpha1.AnalysisRun) bool { return ar.Status.Phase.Completed() })
	if err != nil {
		t.Fatal(err)
	}
	return string(ar.Status.Phase)
}

func relMid(t *testing.T, tl *harness.Timeline) int {
	mid, err := midFrame(tl)
	if err != nil {
		t.Fatal(err)
	}
	return mid
}

var fastPoll = map[string]any{"pollInterval": "2s"}

// mergeReport keeps, from the committed report at path, what this run did not measure: with -run
// '^TestReliability$/^Load' (a large load, run apart: 10,000 Rollouts take long to set up) the cases and
// the other loads stay; a load measured again replaces its rows.
func mergeReport(t *testing.T, rep *relReport, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var old relReport
	if err := json.Unmarshal(raw, &old); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if rep.LeastPrivilege.Scenario == "" {
		rep.Machine, rep.LeastPrivilege, rep.KubeconfigSecret, rep.Oversized, rep.Faults =
			old.Machine, old.LeastPrivilege, old.KubeconfigSecret, old.Oversized, old.Faults
	}
	type key struct {
		n, verified int
		ctrl        controllerSettings
	}
	measured := map[key]bool{}
	for _, l := range rep.Loads {
		measured[key{l.Rollouts, l.Verified, l.Controller}] = true
	}
	var loads []loadResult
	for _, l := range old.Loads {
		if !measured[key{l.Rollouts, l.Verified, l.Controller}] {
			loads = append(loads, l)
		}
	}
	rep.Loads = append(loads, rep.Loads...)
	sort.SliceStable(rep.Loads, func(i, j int) bool { return rep.Loads[i].Rollouts < rep.Loads[j].Rollouts })
}
