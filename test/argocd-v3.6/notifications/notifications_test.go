// Package notifications_test is the proof of generate --format notifications in Argo CD v3.6.1's own
// notifications controller (and the notifications-engine version it pins), against the Applications the
// live suite recorded (test/testdata/live/v1.10.2-applications.yaml): per scenario, when our trigger and
// the catalog's on-health-degraded fire, and what they say (docs/notifications.md).
package notifications_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/notifications"
)

const (
	argocdModule = "github.com/argoproj/argo-cd/v3"
	owner        = "test/argocd-v3.6/notifications TestNotificationsDoc"
)

var testdata = filepath.Join("..", "..", "testdata")

// optionSets: the default (a Failed or Error analysis) and --inconclusive degraded (an inconclusive one
// too), each replayed over every recorded scenario.
var optionSets = []struct {
	name string
	opts generator.NotificationsOptions
}{
	{"default", generator.NotificationsOptions{}},
	{"inconclusive-degraded", generator.NotificationsOptions{Inconclusive: generator.InconclusiveDegraded}},
}

type run struct {
	rec     *notifications.Recording
	truths  map[string]notifications.Truth
	replays map[string][]notifications.Replay // by option set, in the recording's order
	data    map[string]map[string]string      // argocd-notifications-cm's data, by option set
}

var (
	once   sync.Once
	cached *run
)

// replays runs every option set over every scenario once per test binary.
func replays(t *testing.T) *run {
	t.Helper()
	once.Do(func() {
		rec, err := notifications.Load(notifications.File(testdata, "v1.10.2"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range rec.Scenarios {
			names = append(names, s.Name)
		}
		truths, err := notifications.Truths(filepath.Join(testdata, "timelines"), rec.Rollouts, names)
		if err != nil {
			t.Fatal(err)
		}
		catalog := filepath.Join(upstream.ModuleDir(t, argocdModule), "notifications_catalog", "install.yaml")
		r := &run{rec: rec, truths: truths, replays: map[string][]notifications.Replay{}, data: map[string]map[string]string{}}
		for _, set := range optionSets {
			data := formats.Notifications(t, set.opts, catalog)
			r.data[set.name] = data
			for i := range rec.Scenarios {
				r.replays[set.name] = append(r.replays[set.name], replay(t, data, &rec.Scenarios[i]))
			}
		}
		cached = r
	})
	if cached == nil {
		t.Fatal("the replays failed (see the first test that ran them)")
	}
	return cached
}

// Our trigger, in Argo CD v3.6.1's notifications controller, on every recorded frame: once per release
// with a failed run (with --inconclusive degraded, also an inconclusive one), naming the Rollout, the run
// and its metric; never otherwise. The catalog's on-health-degraded never names a run.
func TestNotifications(t *testing.T) {
	r := replays(t)
	if !r.rec.PersistResourceHealth {
		t.Errorf("the recording was made without --persist-resource-health: Argo CD v3 then keeps no resource health in the Application")
	}
	notified := map[string]int{}
	for _, set := range optionSets {
		inconclusive := set.opts.Inconclusive == generator.InconclusiveDegraded
		for i, rp := range r.replays[set.name] {
			sc := &r.rec.Scenarios[i]
			truth := r.truths[sc.Name]
			t.Run(set.name+"/"+sc.Name, func(t *testing.T) {
				for _, p := range notifications.Problems(generator.NotificationsTrigger, truth, sc, rp, inconclusive) {
					t.Error(p)
				}
				for _, p := range notifications.CatalogProblems(truth, rp) {
					t.Error(p)
				}
				notified[set.name] += len(rp.By(generator.NotificationsTrigger))
				t.Logf("%s: ours %v; catalog %v; skipped %v", truth.Summary(), rp.By(generator.NotificationsTrigger), rp.By(notifications.CatalogTrigger), rp.Skipped)
			})
		}
	}
	// the checks must be able to fail: the recording has scenarios with a failed run, an inconclusive one
	// and none, so each option set notifies some and not all
	if notified["default"] == 0 || notified["inconclusive-degraded"] <= notified["default"] || notified["inconclusive-degraded"] >= len(r.rec.Scenarios) {
		t.Errorf("notified %v of %d scenarios: the recording lacks a failed, an inconclusive or a passed scenario", notified, len(r.rec.Scenarios))
	}
}

// A failed analysis's revision that is retried and fails again notifies once, as oncePer promises; the
// same trigger without oncePer notifies twice on the same frames, so the sequence can tell them apart
// (on the recorded scenarios it cannot: the engine notifies a condition when it turns true, and none turns
// false and true again within a revision).
func TestOncePerRevision(t *testing.T) {
	r := replays(t)
	var refailed *notifications.Scenario
	for i, sc := range r.rec.Scenarios {
		if sc.Name != "canary-step-failed" {
			continue
		}
		fired := r.replays["default"][i].By(generator.NotificationsTrigger)
		if len(fired) != 1 {
			t.Fatalf("%s: our trigger fired %d times", sc.Name, len(fired))
		}
		var err error
		if refailed, err = sc.Refailed(fired[0].Frame); err != nil {
			t.Fatal(err)
		}
	}
	if refailed == nil {
		t.Fatal("no scenario canary-step-failed in the recording")
	}
	data := r.data["default"]
	if got := replay(t, data, refailed).By(generator.NotificationsTrigger); len(got) != 1 {
		t.Errorf("a revision that fails twice: our trigger fired %d times, want once: %v", len(got), got)
	}
	without := map[string]string{}
	for k, v := range data {
		without[k] = v
	}
	key := "trigger." + generator.NotificationsTrigger
	without[key] = strings.Replace(data[key], "\n  oncePer: "+generator.NotificationsOncePer, "", 1)
	if without[key] == data[key] {
		t.Fatalf("no oncePer line to remove in:\n%s", data[key])
	}
	if got := replay(t, without, refailed).By(generator.NotificationsTrigger); len(got) != 2 {
		t.Errorf("without oncePer, our trigger fired %d times on the refailed frames, want twice: the sequence does not test oncePer", len(got))
	}
}

// TestNotificationsDoc renders docs/notifications.md's table for Argo CD v3.6.1 from the default replays.
func TestNotificationsDoc(t *testing.T) {
	r := replays(t)
	var rows []notifications.Row
	for i, rp := range r.replays["default"] {
		sc := &r.rec.Scenarios[i]
		rows = append(rows, notifications.NewRow(r.truths[sc.Name], sc, rp, r.replays["inconclusive-degraded"][i], generator.NotificationsTrigger))
	}
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, filepath.Join(root, "docs", "notifications.md"), owner, []byte(notifications.Table(rows)))
}
