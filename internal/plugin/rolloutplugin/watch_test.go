package rolloutplugin_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
)

// syncLog is a Log the informers' goroutines may write to.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// reads counts the requests of the direct reads (gets, and lists with a label selector); the informers'
// lists carry none, but for the analysisruns informer's, which leaves out Kargo's verification runs.
func reads(c *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range c.Actions() {
		switch a := a.(type) {
		case k8stesting.GetAction:
			n++
		case k8stesting.ListAction:
			if sel := a.GetListRestrictions().Labels.String(); sel != "" && sel != "!"+watchcache.VerificationRuns {
				n++
			}
		}
	}
	return n
}

const watchCfg = `{"name":"checkout","namespace":"shop"}`

// untilCached resumes m until a Resume makes no direct read, and returns its measurement.
func untilCached(t *testing.T, p *rolloutplugin.Plugin, direct *dynamicfake.FakeDynamicClient, m v1alpha1.Measurement) v1alpha1.Measurement {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		before := reads(direct)
		r := p.Resume(analysisRun(), metric(watchCfg), m)
		if reads(direct) == before {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no measurement was answered from the watches within 10s")
	return m
}

// TestWatchedRunning: the first measurement reads directly and pins; once the namespace's watches are
// live a Running measurement makes no request; a change the watch delivers that ends the verification
// (the rollback of TestPinnedRevision) is confirmed by a direct read before it is answered. Versioned, the
// objects carry resourceVersions as the API server's do, so the Running verdicts are memoized (memo.go),
// and the rollback's new version is judged, not the memo.
func TestWatchedRunning(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unversioned", true: "versioned"}[versioned], func(t *testing.T) {
			running := loadFrame(t, "step-running")
			if versioned {
				setVersion(running.Rollout, "1")
				for _, r := range running.AnalysisRuns {
					setVersion(r, "1")
				}
			}
			c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
			log := &syncLog{}
			p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
				Watch: &watchcache.Options{}, Log: log})
			before := reads(c)
			m := p.Run(analysisRun(), metric(watchCfg))
			if m.Phase != v1alpha1.AnalysisPhaseRunning || reads(c) == before {
				t.Fatalf("first measurement: %s %q, %d direct reads", m.Phase, m.Message, reads(c)-before)
			}
			r := untilCached(t, p, c, m)
			if r.Phase != v1alpha1.AnalysisPhaseRunning || r.Metadata["revision"] != m.Metadata["revision"] {
				t.Fatalf("from the watches: %s %q pinned %q", r.Phase, r.Message, r.Metadata["revision"])
			}
			stable := running.Rollout["status"].(map[string]any)["stableRS"].(string)
			rolledBack := deepCopyMap(t, running.Rollout)
			st := rolledBack["status"].(map[string]any)
			st["currentPodHash"], st["stableRS"], st["phase"], st["message"] = stable, stable, "Healthy", ""
			delete(st, "canary")
			delete(st, "pauseConditions")
			if versioned {
				setVersion(rolledBack, "2")
			}
			if _, err := c.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}).Namespace("shop").
				Update(context.Background(), &unstructured.Unstructured{Object: rolledBack}, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				before := reads(c)
				r = p.Resume(analysisRun(), metric(watchCfg), m)
				if r.Phase != v1alpha1.AnalysisPhaseRunning {
					if r.Phase != v1alpha1.AnalysisPhaseFailed || !strings.Contains(r.Message, "replaced by "+stable) {
						t.Fatalf("after the rollback: %s %q", r.Phase, r.Message)
					}
					if reads(c) == before {
						t.Fatal("a Failed verdict was answered without a direct read")
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the rollback was not seen within 10s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if log.String() != "" {
				t.Errorf("logged: %s", log.String())
			}
		})
	}
}

func setVersion(o map[string]any, rv string) { o["metadata"].(map[string]any)["resourceVersion"] = rv }

// TestWatchedStaleTerminal: watches that show the analysis passed while the cluster says it is still
// measuring: the direct read decides, the measurement stays Running.
func TestWatchedStaleTerminal(t *testing.T) {
	running, success := loadFrame(t, "step-running"), loadFrame(t, "step-successful")
	c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	stale := fakeClient(append([]map[string]any{success.Rollout}, success.AnalysisRuns...)...)
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
		LocalWatch: func() (dynamic.Interface, error) { return stale, nil }, Watch: &watchcache.Options{}})
	m := p.Run(analysisRun(), metric(watchCfg))
	if m.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("first measurement: %s %q", m.Phase, m.Message)
	}
	// the watches are live once the stale informer has listed; every Resume after is judged on them
	untilListed(p, stale, m)
	for i := 0; i < 5; i++ {
		before := reads(c)
		r := p.Resume(analysisRun(), metric(watchCfg), m)
		if r.Phase != v1alpha1.AnalysisPhaseRunning {
			t.Fatalf("judged on the stale watches: %s %q", r.Phase, r.Message)
		}
		if reads(c) == before {
			t.Fatal("the watches' Successful was not confirmed by a direct read")
		}
	}
}

// untilListed resumes m until the informers have listed and watched the three resources through w (six
// requests), and a little longer for them to sync.
func untilListed(p *rolloutplugin.Plugin, w *dynamicfake.FakeDynamicClient, m v1alpha1.Measurement) {
	deadline := time.Now().Add(10 * time.Second)
	for len(w.Actions()) < 6 && time.Now().Before(deadline) {
		p.Resume(analysisRun(), metric(watchCfg), m)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
}

// TestWatchedRunMissing: watches that hold the Rollout but not the run its status names (not delivered
// yet): every measurement reads directly, even one that would be Running.
func TestWatchedRunMissing(t *testing.T) {
	running := loadFrame(t, "step-running")
	c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	// the Rollout as the cluster has it, none of its runs
	w := fakeClient(running.Rollout)
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
		LocalWatch: func() (dynamic.Interface, error) { return w, nil }, Watch: &watchcache.Options{}})
	m := p.Run(analysisRun(), metric(watchCfg))
	untilListed(p, w, m)
	for i := 0; i < 5; i++ {
		before := reads(c)
		r := p.Resume(analysisRun(), metric(watchCfg), m)
		if reads(c) == before {
			t.Fatalf("measurement %d answered from watches that lack the Rollout's run: %s %q", i, r.Phase, r.Message)
		}
		if r.Phase != v1alpha1.AnalysisPhaseRunning || !strings.Contains(r.Message, "1/3 measurements") {
			t.Fatalf("measurement %d: %s %q, want the direct read's Running", i, r.Phase, r.Message)
		}
	}
}

// TestWatchRefused: RBAC without watch: every measurement reads directly and is exact, and the reason is
// logged once for every namespace and once for the namespace, naming the verb.
func TestWatchRefused(t *testing.T) {
	running := loadFrame(t, "step-running")
	c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	w := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	w.PrependWatchReactor("rollouts", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "",
			errForbiddenWatch)
	})
	log := &syncLog{}
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
		LocalWatch: func() (dynamic.Interface, error) { return w, nil }, Watch: &watchcache.Options{Retry: time.Hour}, Log: log})
	m := p.Run(analysisRun(), metric(watchCfg))
	for i := 0; i < 20; i++ {
		before := reads(c)
		r := p.Resume(analysisRun(), metric(watchCfg), m)
		if r.Phase != v1alpha1.AnalysisPhaseRunning || reads(c) == before {
			t.Fatalf("measurement %d: %s %q, %d direct reads", i, r.Phase, r.Message, reads(c)-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// refused in every namespace, then in the namespace: a line each
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "watch rollouts in every namespace") || !strings.Contains(lines[0], "watching each namespace") ||
		!strings.Contains(lines[1], "watch rollouts in namespace shop") || !strings.Contains(lines[1], "reading directly") {
		t.Errorf("log: %q, want a line naming the refused watch of every namespace, then one of the namespace", lines)
	}
}

var errForbiddenWatch = &forbiddenWatch{}

type forbiddenWatch struct{}

func (*forbiddenWatch) Error() string {
	return `User "system:serviceaccount:argo-rollouts:argo-rollouts" cannot watch resource "rollouts"`
}

// TestWatchBroken: a watch that delivers an Error event (410 Gone: its resourceVersion is too old) stops
// the namespace's watches; measurements read directly, and after Retry the watches start again.
func TestWatchBroken(t *testing.T) {
	running := loadFrame(t, "step-running")
	c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	w := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	var mu sync.Mutex
	var watchers []*watch.FakeWatcher
	w.PrependWatchReactor("analysisruns", func(k8stesting.Action) (bool, watch.Interface, error) {
		fw := watch.NewFakeWithChanSize(10, false)
		mu.Lock()
		watchers = append(watchers, fw)
		mu.Unlock()
		return true, fw, nil
	})
	log := &syncLog{}
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
		LocalWatch: func() (dynamic.Interface, error) { return w, nil }, Watch: &watchcache.Options{Retry: 300 * time.Millisecond}, Log: log})
	m := p.Run(analysisRun(), metric(watchCfg))
	untilCached(t, p, c, m)
	mu.Lock()
	watchers[len(watchers)-1].Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version: 1 (5)"})
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), "410 too old resource version") {
		if time.Now().After(deadline) {
			t.Fatalf("log: %q", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := reads(c)
	if r := p.Resume(analysisRun(), metric(watchCfg), m); r.Phase != v1alpha1.AnalysisPhaseRunning || reads(c) == before {
		t.Fatalf("after the broken watch: %s %q, %d direct reads", r.Phase, r.Message, reads(c)-before)
	}
	time.Sleep(400 * time.Millisecond)
	untilCached(t, p, c, m)
	if n := strings.Count(log.String(), "\n"); n != 1 {
		t.Errorf("%d lines logged: %s", n, log.String())
	}
}

var _ runtime.Object = (*metav1.Status)(nil)

// BenchmarkResumeWatched is a measurement answered from live watches (the steady state of a fleet's
// verifications: docs/reliability.md "Load"): the plugin's own CPU a measurement, without the RPC.
func BenchmarkResumeWatched(b *testing.B) {
	running := loadFrame(b, "step-running")
	setVersion(running.Rollout, "1")
	for _, r := range running.AnalysisRuns {
		setVersion(r, "1")
	}
	c := fakeClient(append([]map[string]any{running.Rollout}, running.AnalysisRuns...)...)
	p := rolloutplugin.New(rolloutplugin.Options{AllowNamespacePairs: kargoShop, Local: func() (dynamic.Interface, error) { return c, nil },
		Watch: &watchcache.Options{}})
	m := p.Run(analysisRun(), metric(watchCfg))
	deadline := time.Now().Add(10 * time.Second)
	for {
		before := reads(c)
		p.Resume(analysisRun(), metric(watchCfg), m)
		if reads(c) == before {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no measurement was answered from the watches within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ar, mt := analysisRun(), metric(watchCfg)
	before := reads(c)
	b.ReportAllocs()
	for b.Loop() {
		if r := p.Resume(ar, mt, m); r.Phase != v1alpha1.AnalysisPhaseRunning {
			b.Fatalf("%s %q", r.Phase, r.Message)
		}
	}
	if n := reads(c) - before; n > 0 {
		b.Fatalf("%d direct reads while the watches were live", n)
	}
}
