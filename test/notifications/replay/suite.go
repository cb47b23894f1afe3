// Package replay is the notifications suite every Argo CD release with a notifications controller runs:
// generate --format notifications in the release's own controller, against the Applications the live
// suite recorded (test/testdata/live/v1.10.2-applications.yaml): per scenario, when our trigger and the
// catalog's on-health-degraded fire, and what they say (docs/notifications.md). Each release's module
// (test/argocd-v2.14/notifications, test/argocd-v3.6/notifications) implements Release against its
// release and calls the checks from its tests, as test/suite is for the conformance suite. The package
// imports no Argo CD code, so that one copy serves modules that pin different Argo CD releases.
package replay

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/notifications"
)

// Release is one Argo CD release's notifications controller as the suite reaches it.
type Release struct {
	// Module is the release's Go module ("github.com/argoproj/argo-cd/v3"): its
	// notifications_catalog/install.yaml is the catalog our data is installed over.
	Module string
	// Owner names the release's table in docs/notifications.md (internal/docblock).
	Owner string
	// Unpersisted says what a recording made without --persist-resource-health lacks in this release.
	Unpersisted string
	// Install is generate --format notifications installed over the catalog as a user does, giving the
	// argocd-notifications-cm data: test/formats' Notifications, which the release's module hands over
	// (test/formats is a module of its own that requires this one).
	Install func(t *testing.T, opts generator.NotificationsOptions, catalog string) map[string]string
	// NewController is the release's notification_controller/controller NewController as
	// cmd/argocd-notification runs it, in namespace, with the release's stand-in for
	// util/notification/argocd's service (there is no repo-server in the replay).
	NewController func(kube kubernetes.Interface, dyn dynamic.Interface, namespace, secretName, cmName string) Controller
}

// Controller is the release's notifications controller.
type Controller interface {
	Init(ctx context.Context) error
	Run(ctx context.Context, processors int)
}

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

// runs holds each release's run, made once per test binary by the first check that needs it.
var (
	runsMu sync.Mutex
	runs   = map[string]*once{}
)

type once struct {
	sync.Once
	run *run
}

// replays runs every option set over every scenario in rel once per test binary.
func replays(t *testing.T, rel Release) *run {
	t.Helper()
	runsMu.Lock()
	o := runs[rel.Owner]
	if o == nil {
		o = &once{}
		runs[rel.Owner] = o
	}
	runsMu.Unlock()
	o.Do(func() {
		root, err := upstream.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		testdata := filepath.Join(root, "test", "testdata")
		rec, err := notifications.Load(notifications.File(testdata, "v1.10.2"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range rec.Scenarios {
			if s.NoAnalysis == "" {
				names = append(names, s.Name)
			}
		}
		truths, err := notifications.Truths(filepath.Join(testdata, "timelines"), rec.Rollouts, names)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rec.Scenarios {
			if s.NoAnalysis != "" {
				truths[s.Name] = notifications.Truth{Scenario: s.Name}
			}
		}
		catalog := filepath.Join(upstream.ModuleDir(t, rel.Module), "notifications_catalog", "install.yaml")
		r := &run{rec: rec, truths: truths, replays: map[string][]notifications.Replay{}, data: map[string]map[string]string{}}
		for _, set := range optionSets {
			data := rel.Install(t, set.opts, catalog)
			r.data[set.name] = data
			for i := range rec.Scenarios {
				r.replays[set.name] = append(r.replays[set.name], replay(t, rel, data, &rec.Scenarios[i]))
			}
		}
		o.run = r
	})
	if o.run == nil {
		t.Fatal("the replays failed (see the first test that ran them)")
	}
	return o.run
}

// Notifications: our trigger, in the release's notifications controller, on every recorded frame: once
// per release with a failed run (with --inconclusive degraded, also an inconclusive one), naming the
// Rollout, the run and its metric; never otherwise. The catalog's on-health-degraded never names a run.
func Notifications(t *testing.T, rel Release) {
	r := replays(t, rel)
	if !r.rec.PersistResourceHealth {
		t.Errorf("the recording was made without --persist-resource-health: %s", rel.Unpersisted)
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

// OncePerRevision: a failed analysis's revision that is retried and fails again notifies once, as
// oncePer promises; the same trigger without oncePer notifies twice on the same frames, so the sequence
// can tell them apart (on the recorded scenarios it cannot: the engine notifies a condition when it
// turns true, and none turns false and true again within a revision).
func OncePerRevision(t *testing.T, rel Release) {
	r := replays(t, rel)
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
	if got := replay(t, rel, data, refailed).By(generator.NotificationsTrigger); len(got) != 1 {
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
	if got := replay(t, rel, without, refailed).By(generator.NotificationsTrigger); len(got) != 2 {
		t.Errorf("without oncePer, our trigger fired %d times on the refailed frames, want twice: the sequence does not test oncePer", len(got))
	}
}

// Doc renders the release's table of docs/notifications.md from the default replays.
func Doc(t *testing.T, rel Release) {
	r := replays(t, rel)
	var rows []notifications.Row
	for i, rp := range r.replays["default"] {
		sc := &r.rec.Scenarios[i]
		rows = append(rows, notifications.NewRow(r.truths[sc.Name], sc, rp, r.replays["inconclusive-degraded"][i], generator.NotificationsTrigger))
	}
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, filepath.Join(root, "docs", "notifications.md"), rel.Owner, []byte(notifications.Table(rows)))
}
