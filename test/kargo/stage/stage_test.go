package stage

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestForAppHealth(t *testing.T) {
	for app, want := range map[string]Health{
		"Healthy": Healthy, "Progressing": Progressing, "": Progressing, "Suspended": Progressing,
		"Degraded": Unhealthy, "Missing": Unhealthy, "Unknown": Unhealthy, "Something": Unhealthy,
	} {
		if got := ForAppHealth(app); got != want {
			t.Errorf("ForAppHealth(%q) = %s, want %s", app, got, want)
		}
	}
}

func TestStage(t *testing.T) {
	cases := []struct {
		app          []string
		wantVerified int
	}{
		{[]string{"Progressing", "Suspended", "Degraded"}, -1},
		{[]string{"Progressing", "Healthy", "Degraded", "Healthy"}, 1}, // verified once, never revoked
		{[]string{"Healthy"}, 0},
		{nil, -1},
	}
	for _, c := range cases {
		s := New()
		var want []Health
		for _, a := range c.app {
			if h := s.Assess(a); h != ForAppHealth(a) {
				t.Errorf("%q: Assess(%q) = %s", c.app, a, h)
			}
			want = append(want, ForAppHealth(a))
		}
		if s.Verified != c.wantVerified || !reflect.DeepEqual(s.Health, want) {
			t.Errorf("%q: verified %d, health %q; want %d, %q", c.app, s.Verified, s.Health, c.wantVerified, want)
		}
	}
}

var t0 = time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)

// synced is an Application whose Kargo operation for revision "b" finished and was reconciled after.
func synced(health, phase string) Application {
	return Application{Namespace: "argocd", Name: "app", Health: health, SyncRevision: "b", ReconciledAt: t0.Add(time.Second),
		OperationPhase: phase, OperationMessage: "one or more synchronization tasks completed unsuccessfully",
		OperationFinishedAt: t0, SyncResultRevision: "b", OperationInfo: map[string]string{PromotionInfoKey: "p"}}
}

func TestAppHealth(t *testing.T) {
	stale := synced("Healthy", "Succeeded")
	stale.ReconciledAt = t0.Add(-time.Second)
	cond := synced("Healthy", "Succeeded")
	cond.Conditions = []Condition{{Type: "SyncError", Message: "ignored"}, {Type: "ComparisonError", Message: "boom"}}
	syncing := synced("Healthy", "Succeeded")
	syncing.Operation = true
	behind := synced("Healthy", "Succeeded")
	behind.SyncRevision = "a"
	cases := []struct {
		name    string
		app     Application
		desired string
		want    Health
		msg     string
	}{
		{"healthy", synced("Healthy", "Succeeded"), "b", Healthy, ""},
		{"suspended", synced("Suspended", "Succeeded"), "b", Progressing, "is suspended"},
		{"degraded", synced("Degraded", "Failed"), "b", Unhealthy, `health state "Degraded"`},
		{"not reconciled since the operation", stale, "b", Unknown, "not reconciled after its most recent operation"},
		{"error condition", cond, "b", Unhealthy, `"ComparisonError" condition: boom`},
		{"being synced", syncing, "b", Unknown, "is being synced"},
		{"other revision", behind, "b", Unhealthy, "are synced to the desired revisions"},
		{"no desired revision", behind, "", Healthy, ""},
	}
	for _, c := range cases {
		h, msg := AppHealth(c.app, c.desired)
		if h != c.want || !strings.Contains(msg, c.msg) || (c.msg == "" && msg != "") {
			t.Errorf("%s: %s %q, want %s %q", c.name, h, msg, c.want, c.msg)
		}
	}
}

func TestArgoCDUpdate(t *testing.T) {
	pending := synced("Healthy", "Succeeded")
	pending.Operation = true
	running := synced("Progressing", "Running")
	foreign := synced("Healthy", "Succeeded")
	foreign.OperationInfo = nil
	old := synced("Healthy", "Succeeded")
	old.SyncResultRevision = "a"
	cases := []struct {
		name    string
		app     Application
		elapsed time.Duration
		want    string
		msg     string
	}{
		{"succeeded", synced("Healthy", "Succeeded"), time.Minute, PromotionSucceeded, ""},
		{"failed", synced("Degraded", "Failed"), time.Minute, PromotionErrored, "failed with: one or more synchronization tasks"},
		{"error", synced("Degraded", "Error"), time.Minute, PromotionErrored, "met error threshold of 1"},
		{"not taken up", pending, time.Minute, PromotionRunning, ""},
		{"running", running, time.Minute, PromotionRunning, ""},
		{"running past the timeout", running, 6 * time.Minute, PromotionErrored, "timed out after 5m0s"},
		{"another promotion's operation", foreign, time.Minute, PromotionRunning, ""},
		{"synced another revision", old, time.Minute, PromotionRunning, ""},
	}
	for _, c := range cases {
		got, msg := ArgoCDUpdate(c.app, "p", "b", c.elapsed)
		if got != c.want || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %s %q, want %s %q", c.name, got, msg, c.want, c.msg)
		}
	}
}

func TestAssess(t *testing.T) {
	app := synced("Healthy", "Succeeded")
	for phase, want := range map[string]Health{PromotionSucceeded: Healthy, PromotionRunning: Unknown, PromotionErrored: Unknown} {
		if h, _ := Assess(phase, app, "b"); h != want {
			t.Errorf("Promotion %s: %s, want %s", phase, h, want)
		}
	}
}

func TestFreight(t *testing.T) {
	type step struct {
		h     Health
		phase string
	}
	cases := []struct {
		name      string
		steps     []step
		wantStart int // reconcile that starts it, -1 none
		phase     string
		verified  bool
		// healthOnly: a Stage without spec.verification (no run is ever started)
		healthOnly bool
	}{
		{"never healthy", []step{{Progressing, ""}, {Unknown, ""}, {Unhealthy, ""}}, -1, "", false, false},
		{"passes", []step{{Unknown, ""}, {Healthy, ""}, {Healthy, "Running"}, {Healthy, "Successful"}}, 1, "Successful", true, false},
		{"passes while the Stage is unhealthy, verified once Healthy again",
			[]step{{Healthy, ""}, {Unhealthy, "Successful"}, {Healthy, "Successful"}}, 0, "Successful", true, false},
		{"passes, then never Healthy", []step{{Healthy, ""}, {Unhealthy, "Successful"}}, 0, "Successful", false, false},
		{"fails and stays failed", []step{{Healthy, ""}, {Healthy, "Failed"}, {Healthy, "Successful"}}, 0, "Failed", false, false},
		{"verified is never revoked", []step{{Healthy, ""}, {Healthy, "Successful"}, {Unhealthy, "Successful"}}, 0, "Successful", true, false},
		{"health only: verified at the first Healthy assessment", []step{{Unknown, ""}, {Healthy, ""}}, -1, "Successful", true, true},
		{"health only: never Healthy, never verified", []step{{Progressing, ""}, {Unhealthy, ""}}, -1, "", false, true},
	}
	for _, c := range cases {
		f := Freight{HealthOnly: c.healthOnly}
		started := -1
		for i, s := range c.steps {
			if f.Reconcile(s.h, s.phase) {
				if started >= 0 {
					t.Errorf("%s: started twice", c.name)
				}
				started = i
			}
		}
		if started != c.wantStart || f.Phase != c.phase || f.Verified != c.verified {
			t.Errorf("%s: started at %d, %q, verified %v; want %d, %q, %v", c.name, started, f.Phase, f.Verified, c.wantStart, c.phase, c.verified)
		}
	}
}
