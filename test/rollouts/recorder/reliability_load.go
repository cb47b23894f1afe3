package recorder

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// loadSizes are the loads to run: $E2E_RELIABILITY_LOAD, comma-separated Rollout counts (default 200).
func loadSizes(t *testing.T) []int {
	spec := os.Getenv("E2E_RELIABILITY_LOAD")
	if spec == "" {
		spec = "200"
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n%loadPerNamespace != 0 {
			t.Fatalf("E2E_RELIABILITY_LOAD=%q: want Rollout counts, multiples of %d", spec, loadPerNamespace)
		}
		if n > 0 {
			out = append(out, n)
		}
	}
	return out
}

const (
	loadPerNamespace = 10
	// loadRounds is how many poll intervals the load is measured for, once every run was measured.
	loadRounds = 3
	// the generated template's config sets neither: the plugin's defaults (rolloutplugin)
	loadPollInterval = 10 * time.Second
	loadAPITimeout   = 10 * time.Second
	// rssLimit is the bound on the plugin's memory at 200 Rollouts.
	rssLimit = 100 << 20
)

// loadResult is one load's figures.
type loadResult struct {
	Rollouts   int `json:"rollouts"`
	Namespaces int `json:"namespaces"`
	// SetupSeconds is the time to store the Rollouts, their runs and the verifications and to see every
	// verification measured once; WindowSeconds the time measured after that.
	SetupSeconds  int `json:"setupSeconds"`
	WindowSeconds int `json:"windowSeconds"`
	Measurements  int `json:"measurements"`
	Errors        int `json:"errors"`
	// per run in the window: the fewest measurements, and the most expected (window / pollInterval)
	FewestPerRun int `json:"fewestPerRun"`
	ExpectedRun  int `json:"expectedPerRun"`
	// LatencyMS: from a worker taking the run to the controller writing the measurement (the plugin's
	// RPC and its reads); LateMS: from the resumeAt the measurement was due at to a worker taking it.
	LatencyMS   quantiles `json:"latencyMs"`
	LateMS      quantiles `json:"lateMs"`
	OverTimeout int       `json:"overApiTimeout"`
	LateByPoll  int       `json:"lateByMoreThanPollInterval"`
	// Requests per measurement by "verb resource", from the audit log, and lists without a selector.
	Requests       map[string]float64 `json:"requestsPerMeasurement"`
	UnselectedList int                `json:"listsWithoutSelector"`
	PluginPeakRSS  int64              `json:"pluginPeakRssBytes"`
	PluginRSS      int64              `json:"pluginRssBytes"`
	PluginCPU      float64            `json:"pluginCpuCores"` // CPU seconds per second of the window
}

type quantiles struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

func quantilesOf(xs []time.Duration) quantiles {
	if len(xs) == 0 {
		return quantiles{}
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	at := func(p float64) int64 { return xs[int(p*float64(len(xs)-1))].Milliseconds() }
	return quantiles{P50: at(0.50), P99: at(0.99), Max: xs[len(xs)-1].Milliseconds()}
}

// load stores n copies of the timeline's frame with the analysis in flight (ten Rollouts a namespace,
// renamed; the ten of a namespace share the recorded pod-template hash), starts a verification of each
// with the generated template as it is (pollInterval and apiTimeout the plugin's defaults), and measures
// loadRounds poll intervals once every verification was measured.
func load(t *testing.T, r *rig, tl *Timeline, n int) loadResult {
	mid := relMid(t, tl)
	res := loadResult{Rollouts: n, Namespaces: n / loadPerNamespace}
	begin := time.Now()
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	image := freightImage(ro)
	var mu sync.Mutex
	keys := map[string]bool{}
	var firstErr error
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				ns := fmt.Sprintf("load%d-%03d", n, i)
				err := func() error {
					if _, err := r.newNamespace(ns); err != nil {
						return err
					}
					for j := 0; j < loadPerNamespace; j++ {
						name := fmt.Sprintf("ro-%02d", j)
						if err := r.applyFrame(ns, name, tl.Frames[mid]); err != nil {
							return err
						}
						ar, err := r.verification(ns, name, image, nil)
						if err != nil {
							return err
						}
						mu.Lock()
						keys[ns+"/"+ar.Name] = true
						mu.Unlock()
					}
					return nil
				}()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", ns, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < res.Namespaces; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	// every verification measured once
	deadline := time.Now().Add(10 * time.Minute)
	for {
		seen := map[string]bool{}
		for _, w := range r.ctrl.writes.snapshot() {
			if keys[w.Key] {
				seen[w.Key] = true
			}
		}
		if len(seen) == len(keys) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d verifications measured after 10 minutes", len(seen), len(keys))
		}
		time.Sleep(time.Second)
	}
	pids := pluginPIDs()
	if len(pids) != 1 {
		t.Fatalf("plugin processes %v, want one", pids)
	}
	u0, err := readProcUsage(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	res.SetupSeconds = int(from.Sub(begin).Seconds())
	window := loadRounds * loadPollInterval
	time.Sleep(window)
	to := time.Now()
	u1, err := readProcUsage(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	res.WindowSeconds = int(to.Sub(from).Seconds())
	res.PluginPeakRSS, res.PluginRSS = u1.PeakRSS, u1.RSS
	res.PluginCPU = float64(u1.CPU-u0.CPU) / float64(to.Sub(from))
	// the verifications stop here, so the next case measures its own
	for i := 0; i < res.Namespaces; i++ {
		ns := fmt.Sprintf("load%d-%03d", n, i)
		_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: kargoStageLabel})
	}
	var latency, late []time.Duration
	perRun := map[string]int{}
	for _, w := range r.ctrl.writes.snapshot() {
		if !keys[w.Key] || w.Written.Before(from) || w.Written.After(to) {
			continue
		}
		res.Measurements++
		perRun[w.Key]++
		if w.Measurement.Phase == v1alpha1.AnalysisPhaseError {
			res.Errors++
			if res.Errors <= 3 {
				t.Logf("Error measurement of %s: %s", w.Key, w.Measurement.Message)
			}
		}
		d := w.Written.Sub(w.Taken)
		latency = append(latency, d)
		if d >= loadAPITimeout {
			res.OverTimeout++
		}
		if w.DueAt != nil {
			l := w.Taken.Sub(*w.DueAt)
			if l < 0 {
				l = 0
			}
			late = append(late, l)
			if l > loadPollInterval {
				res.LateByPoll++
			}
		}
	}
	res.LatencyMS, res.LateMS = quantilesOf(latency), quantilesOf(late)
	res.ExpectedRun = int(window / loadPollInterval)
	res.FewestPerRun = -1
	for k := range keys {
		if c := perRun[k]; res.FewestPerRun < 0 || c < res.FewestPerRun {
			res.FewestPerRun = c
		}
	}
	time.Sleep(time.Second) // the audit log is written as requests complete
	events, err := r.audit(saUser(relSystemNS, relPluginSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range events {
		if !strings.HasPrefix(e.ObjectRef.Namespace, fmt.Sprintf("load%d-", n)) {
			continue
		}
		counts[e.Verb+" "+e.ObjectRef.Resource]++
		if e.Verb == "list" && !strings.Contains(e.RequestURI, "labelSelector=") {
			res.UnselectedList++
		}
	}
	res.Requests = map[string]float64{}
	for k, c := range counts {
		if res.Measurements > 0 {
			res.Requests[k] = float64(int(float64(c)/float64(res.Measurements)*100+0.5)) / 100
		}
	}
	t.Logf("load %d: %+v", n, res)
	if res.UnselectedList > 0 {
		t.Errorf("%d lists without a label selector", res.UnselectedList)
	}
	// the bounds hold at 200 Rollouts; beyond, the figures show how it grows
	if n <= 200 {
		if res.Errors > 0 || res.OverTimeout > 0 {
			t.Errorf("%d Error measurements, %d over apiTimeout", res.Errors, res.OverTimeout)
		}
		if res.LateByPoll > 0 || res.FewestPerRun < res.ExpectedRun-1 {
			t.Errorf("%d measurements late by more than pollInterval; a run measured %d times in %d intervals", res.LateByPoll, res.FewestPerRun, res.ExpectedRun)
		}
		if res.PluginPeakRSS >= rssLimit {
			t.Errorf("plugin peak RSS %d MB", res.PluginPeakRSS>>20)
		}
	}
	return res
}
