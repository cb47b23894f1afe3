package rolloutplugin_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/bench/reliabilitydoc"
	"github.com/analysis-health/analysis-health/internal/plugin/remote"
	"github.com/analysis-health/analysis-health/internal/plugin/remote/hostiletest"
	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
)

var update = flag.Bool("update", false, "rewrite ../remote/testdata/hostile.json (the rows of docs/reliability.md's hostile server) from this run")

// HostileFile holds what TestHostileServer measured, rendered into docs/reliability.md
// (internal/bench/reliabilitydoc).
const hostileFile = "../remote/testdata/hostile.json"

// hostileRow is one row of the record, as docs/reliability.md reads it (one type for writer and reader).
type hostileRow = reliabilitydoc.Hostile

const hostileCluster = "the cluster of the kubeconfig in Secret kargo-shop/workload"

// TestHostileServer: the server a kubeconfig Secret names misbehaves in every way hostiletest knows,
// against a measurement's direct read and against the watches. For each: the process lives on (a panic
// anywhere kills the test binary), the measurement is an Error naming the Secret's cluster within
// apiTimeout and a margin, the plugin reads at most MaxRemoteResponse of an answer and its heap stays
// within a few times that, nothing reaches another host (a redirect's target counts 0), and neither the
// token nor the server's text is in the measurement or the log. Goroutines come back to where they were
// once the watches are idle. Before issue 57's fixes: {}{}{} and the gzip bomb were read until
// apiTimeout (2.6 GB in the review's run), the redirect was followed with the token, the watch held
// then 500 after the sweep panicked the process, and the endless pages were listed for ever.
func TestHostileServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of hostile answers")
	}
	goroutines := runtime.NumGoroutine()
	var rows []hostileRow
	// apiTimeout is 2 s where the server holds the plugin; elsewhere 20 s, so that a loaded machine (or
	// the race detector) reading 32 MiB is not taken for a server that does not answer
	const margin = 8 * time.Second
	for _, tc := range []struct {
		mode    hostiletest.Mode
		want    string // in the message
		timeout time.Duration
	}{
		{hostiletest.SlowBody, "did not answer within 2s", 2 * time.Second},
		{hostiletest.EndlessBody, "larger than 32 MiB", 20 * time.Second},
		{hostiletest.ManyValues, "larger than 32 MiB", 20 * time.Second},
		{hostiletest.GzipBomb, "larger than 32 MiB", 20 * time.Second},
		{hostiletest.InvalidJSON, "not a Kubernetes API response", 20 * time.Second},
		{hostiletest.Redirect, "redirect, which the plugin never follows", 20 * time.Second},
		// and not the names its certificate holds (text the server chose: reachWords)
		{hostiletest.NameMismatch, "cannot reach " + hostileCluster + ": the server's certificate is not valid for the server name in the kubeconfig", 20 * time.Second},
		{hostiletest.TooManyRequests, "did not answer within 2s", 2 * time.Second},
	} {
		t.Run("direct/"+string(tc.mode), func(t *testing.T) {
			s := hostiletest.New(t)
			s.Set(tc.mode)
			log := &syncLog{}
			p := hostilePlugin(s, nil, log)
			var m v1alpha1.Measurement
			var took time.Duration
			peak := peakHeap(func() {
				start := time.Now()
				m = p.Run(analysisRun(), metric(hostileConfig(tc.timeout)))
				took = time.Since(start)
			})
			row := hostileRow{Mode: string(tc.mode), Path: "direct read", Phase: string(m.Phase), Outcome: strings.TrimPrefix(m.Message, "Rollout shop/checkout: "),
				Seconds: round2(took.Seconds()), ServedMiB: mib(s.Written.Load()), PeakHeapMiB: mib(int64(peak)), Elsewhere: s.ElsewhereHits.Load(),
				Lists: s.Lists.Load(), Watches: s.Watches.Load()}
			rows = append(rows, row)
			t.Logf("%+v", row)
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, tc.want) || !strings.Contains(m.Message, hostileCluster) {
				t.Errorf("%s %q, want an Error naming %s and %q", m.Phase, m.Message, hostileCluster, tc.want)
			}
			if took > tc.timeout+margin {
				t.Errorf("the measurement took %s (apiTimeout %s)", took, tc.timeout)
			}
			checkHostile(t, s, texts(m)+log.String(), peak, rolloutplugin.MaxRemoteResponse)
			if tc.mode == hostiletest.NameMismatch && s.Requests.Load() != 0 {
				t.Errorf("%d requests reached a server whose certificate does not hold the name", s.Requests.Load())
			}
		})
	}
	for _, tc := range []struct {
		mode   hostiletest.Mode
		keep   bool   // measure on, so that the space stays in use until it fails
		logged string // in the watches' logged line
		quiet  string // the outcome when nothing is logged
	}{
		{mode: hostiletest.WatchBeforeHeaders, keep: true,
			quiet: "nothing logged: client-go takes a connection closed before the headers for a watch that ended; the reflector watches again, backing off"},
		{mode: hostiletest.WatchAfterHeaders, keep: true, quiet: "nothing logged: a watch that ended at once; the reflector watches again, backing off"},
		{mode: hostiletest.WatchMidEvent, keep: true, quiet: "nothing logged: half an event is an unexpected EOF, a watch that ended; the reflector watches again"},
		{mode: hostiletest.WatchEndlessEvent, keep: true, logged: "a watch event: 8 MiB"},
		{mode: hostiletest.EndlessPages, keep: true, logged: fmt.Sprintf("did not end within %d pages", watchcache.MaxListPages)},
		// held past the idle sweep (Idle 300 ms), then 500: a failure of a space already shut down
		{mode: hostiletest.WatchHeld500, quiet: "nothing logged, no panic: the space was swept as idle before the 500, which then changes nothing"},
	} {
		t.Run("watches/"+string(tc.mode), func(t *testing.T) {
			s := hostiletest.New(t)
			s.Set(tc.mode)
			log := &syncLog{}
			// measured every 100 ms, a space is in use; on a loaded machine a measurement may take a second
			idle := 2 * time.Second
			if !tc.keep {
				idle = 300 * time.Millisecond
			}
			p := hostilePlugin(s, &watchcache.Options{Idle: idle, Retry: time.Hour}, log)
			var first time.Duration
			measured := int64(1)
			start := time.Now()
			peak := peakHeap(func() {
				m := p.Run(analysisRun(), metric(hostileConfig(2*time.Second)))
				if m.Phase == v1alpha1.AnalysisPhaseError {
					t.Errorf("the direct read, which the server answers well: %q", m.Message)
				}
				for deadline := time.Now().Add(90 * time.Second); tc.keep && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					if first == 0 && strings.Contains(log.String(), "failed") {
						first = time.Since(start)
					}
					if first != 0 || tc.logged == "" && time.Since(start) > 2*time.Second {
						break
					}
					p.Resume(analysisRun(), metric(hostileConfig(2*time.Second)), m)
					measured++
				}
				// the watches go idle and are swept; a request in flight ends with its space
				time.Sleep(idle + s.Hold + 500*time.Millisecond)
			})
			outcome := tc.quiet
			if line := log.String(); line != "" {
				outcome = strings.TrimSpace(line[strings.Index(line, "failed: ")+len("failed: "):])
			}
			row := hostileRow{Mode: string(tc.mode), Path: "watches", Outcome: outcome, Seconds: round2(first.Seconds()),
				ServedMiB: mib(s.Written.Load()), PeakHeapMiB: mib(int64(peak)), Elsewhere: s.ElsewhereHits.Load(), Lists: s.Lists.Load(), Watches: s.Watches.Load()}
			rows = append(rows, row)
			t.Logf("%+v", row)
			if tc.logged != "" && (!strings.Contains(log.String(), tc.logged) || !strings.Contains(log.String(), hostileCluster)) {
				t.Errorf("log %q, want a line naming %s and %q", log.String(), hostileCluster, tc.logged)
			}
			if tc.logged == "" && log.String() != "" {
				t.Errorf("logged %q", log.String())
			}
			// the informers' pages, and a measurement's two lists every 100 ms
			if n := s.Lists.Load(); n > watchcache.MaxListPages*3+2*measured+10 {
				t.Errorf("%d list requests (%d measurements)", n, measured)
			}
			// client-go waits a second between the retries of a watch, the reflector backs off between
			// watches: a loop without a wait would make thousands
			if n, window := s.Watches.Load(), time.Since(start); n > 20*int64(window.Seconds()+1) {
				t.Errorf("%d watch requests in %s", n, window.Round(time.Second))
			}
			checkHostile(t, s, log.String(), peak, 3*remote.MaxEvent)
		})
	}
	// the servers are closed, the watches swept: what is left is the plugins' sweepers and idle connections
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines+30 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+30 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
	}
	if *update && !t.Failed() {
		raw, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("../remote/testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hostileFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func hostileConfig(apiTimeout time.Duration) string {
	return `{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"workload","key":"config"},"apiTimeout":"` + apiTimeout.String() + `"}`
}

func hostilePlugin(s *hostiletest.Server, watch *watchcache.Options, log *syncLog) *rolloutplugin.Plugin {
	local := fakeClient(secret("kargo-shop", "workload", map[string]string{"config": s.Kubeconfig(token)}))
	return rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil }, Watch: watch, Log: log})
}

// checkHostile: nothing reached another host, the plugin stopped reading at the bound, its heap stayed
// within a few times it, and neither the token nor the server's text is in out.
// bound is what the plugin may read at once: an answer, or an event of each of a space's three watches.
func checkHostile(t *testing.T, s *hostiletest.Server, out string, peak uint64, bound int64) {
	t.Helper()
	if n := s.ElsewhereHits.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect's target, %d with a token", n, s.ElsewhereTokens.Load())
	}
	if w := s.Written.Load(); w > 2*bound {
		t.Errorf("the server wrote %d MiB before the plugin stopped reading (bound %d MiB)", w>>20, bound>>20)
	}
	if peak > 6*rolloutplugin.MaxRemoteResponse {
		t.Errorf("the heap grew by %d MiB (bound %d MiB)", peak>>20, rolloutplugin.MaxRemoteResponse>>20)
	}
	// example.com: a name the server's test certificate holds, which a TLS failure would list
	for _, x := range []string{token, hostiletest.Planted, "example.com"} {
		if strings.Contains(out, x) {
			t.Errorf("%q is in the measurement or the log: %s", x, out)
		}
	}
}

func texts(m v1alpha1.Measurement) string {
	var b strings.Builder
	b.WriteString(m.Message + "\n" + m.Value + "\n")
	for k, v := range m.Metadata {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	return b.String()
}

func mib(b int64) float64 { return math.Round(float64(b)/(1<<20)*10) / 10 }

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// peakHeap runs f and returns the most the heap's objects grew over their size before it.
func peakHeap(f func()) uint64 {
	runtime.GC()
	base := heapObjects()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
				peak = max(peak, heapObjects())
			}
		}
	}()
	f()
	close(stop)
	peak := max(<-done, heapObjects())
	return peak - base
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
