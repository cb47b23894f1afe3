package reliability

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// loadSpec is one load: its Rollouts and the analysis controller's settings it runs with.
type loadSpec struct {
	n    int
	ctrl controllerSettings
	// one: the n Rollouts share one namespace and a verification names the first alone (a platform
	// team's namespace of many Rollouts, one of them promoted by Kargo)
	one bool
}

// Name is the load's subtest name, and prefix that of its namespaces: a load run again with other
// controller settings has namespaces of its own.
func (l loadSpec) name() string {
	one := ""
	if l.one {
		one = "OneVerified"
	}
	if l.ctrl == defaultController {
		return fmt.Sprintf("Load%d%s", l.n, one)
	}
	return fmt.Sprintf("Load%d%sQPS%dThreads%d", l.n, one, l.ctrl.QPS, l.ctrl.Threads)
}

func (l loadSpec) prefix() string {
	one := ""
	if l.one {
		one = "-one"
	}
	if l.ctrl == defaultController {
		return fmt.Sprintf("load%d%s-", l.n, one)
	}
	return fmt.Sprintf("load%d%s-q%d-t%d-", l.n, one, l.ctrl.QPS, l.ctrl.Threads)
}

// namespaces is how many namespaces the load's Rollouts are stored in.
func (l loadSpec) namespaces() int {
	if l.one {
		return 1
	}
	return l.n / loadPerNamespace
}

// loadSpecs are the loads to run: $E2E_RELIABILITY_LOAD, comma-separated, each a Rollout count (default
// 200) with the controller's defaults, or N@QPS or N@QPS/THREADS: the analysis controller run with
// --qps QPS --burst 2×QPS (the defaults' ratio) and --analysis-threads THREADS (default 30), as a
// platform team raises them for a fleet. A count written N:1 stores the N Rollouts in one namespace and
// verifies one of them.
func loadSpecs(t *testing.T) []loadSpec {
	spec := os.Getenv("E2E_RELIABILITY_LOAD")
	if spec == "" {
		spec = "200"
	}
	var out []loadSpec
	for _, f := range strings.Split(spec, ",") {
		l, err := parseLoadSpec(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("E2E_RELIABILITY_LOAD=%q: %v", spec, err)
		}
		if l.n > 0 {
			out = append(out, l)
		}
	}
	return out
}

func parseLoadSpec(f string) (loadSpec, error) {
	l := loadSpec{ctrl: defaultController}
	count, ctrl, hasCtrl := strings.Cut(f, "@")
	if c, ok := strings.CutSuffix(count, ":1"); ok {
		count, l.one = c, true
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 || (n%loadPerNamespace != 0 && !l.one) || (l.one && n == 0) {
		return l, fmt.Errorf("%q: want a Rollout count, a multiple of %d, or N:1", f, loadPerNamespace)
	}
	l.n = n
	if !hasCtrl {
		return l, nil
	}
	qps, threads, hasThreads := strings.Cut(ctrl, "/")
	if l.ctrl.QPS, err = strconv.Atoi(qps); err != nil || l.ctrl.QPS <= 0 {
		return l, fmt.Errorf("%q: want N@QPS or N@QPS/THREADS with positive numbers", f)
	}
	l.ctrl.Burst = 2 * l.ctrl.QPS
	if hasThreads {
		if l.ctrl.Threads, err = strconv.Atoi(threads); err != nil || l.ctrl.Threads <= 0 {
			return l, fmt.Errorf("%q: want N@QPS or N@QPS/THREADS with positive numbers", f)
		}
	}
	return l, nil
}

const (
	loadPerNamespace = 10
	// loadRounds is how many poll intervals the load is measured for, once every run was measured and one
	// more interval has passed.
	loadRounds = 3
	// the generated template's config sets neither: the plugin's defaults (rolloutplugin)
	loadPollInterval = 10 * time.Second
	loadAPITimeout   = 10 * time.Second
	// rssLimit is the bound on the plugin's memory at 200 Rollouts.
	rssLimit = 100 << 20
)

// loadResult is one load's figures, for one provider.
type loadResult struct {
	// Controller is the analysis controller's client rate limit and thread count the load ran with.
	Controller controllerSettings `json:"controller"`
	// Provider is "plugin" (ours), "web" (Argo Rollouts' built-in web provider querying the test's
	// metrics server: the duplicate query a Kargo user writes instead) or "noop" (a plugin that does
	// nothing: the controller's plugin path alone).
	Provider   string `json:"provider"`
	Rollouts   int    `json:"rollouts"`
	Namespaces int    `json:"namespaces"`
	// Verified is how many of the Rollouts a verification names, when not all (a load N:1)
	Verified int `json:"verified,omitempty"`
	// SetupSeconds is the time to store the Rollouts (the first provider's row only), their runs and the
	// verifications and to see every verification measured once; WindowSeconds the time measured after.
	SetupSeconds  int `json:"setupSeconds"`
	WindowSeconds int `json:"windowSeconds"`
	Measurements  int `json:"measurements"`
	Errors        int `json:"errors"`
	// per run in the window: the fewest measurements, and the most expected (window / pollInterval)
	FewestPerRun int `json:"fewestPerRun"`
	ExpectedRun  int `json:"expectedPerRun"`
	// LatencyMS: from a worker taking the run to the controller writing the measurement (the plugin's
	// RPC and its reads, or the web provider's query); LateMS: from the time the measurement was due at
	// (its resumeAt, or the last one's finish plus the metric's interval) to a worker taking it.
	LatencyMS   quantiles `json:"latencyMs"`
	LateMS      quantiles `json:"lateMs"`
	OverTimeout int       `json:"overApiTimeout"`
	LateByPoll  int       `json:"lateByMoreThanPollInterval"`
	// Requests per measurement by "verb resource", from the audit log (the plugin's identity), and lists
	// without a selector that are not an informer's; MetricsRequests the metrics server's requests per
	// measurement (the web provider's duplicate query).
	Requests        map[string]float64 `json:"requestsPerMeasurement"`
	RequestsTotal   float64            `json:"apiRequestsPerMeasurement"`
	UnselectedList  int                `json:"listsWithoutSelector"`
	MetricsRequests float64            `json:"metricsRequestsPerMeasurement,omitempty"`
	// the plugin process (the plugin row), and the test process, which is the analysis controller with
	// the rig around it (both rows: the web provider's queries run there)
	PluginPeakRSS int64   `json:"pluginPeakRssBytes,omitempty"`
	PluginRSS     int64   `json:"pluginRssBytes,omitempty"`
	PluginCPU     float64 `json:"pluginCpuCores,omitempty"` // CPU seconds per second of the window
	ControllerRSS int64   `json:"controllerRssBytes"`
	ControllerCPU float64 `json:"controllerCpuCores"`
	// the API server program (kube-apiserver and its embedded etcd), where a load past the controller's
	// rate limit meets the machine's two cores
	APIServerRSS int64   `json:"apiServerRssBytes,omitempty"`
	APIServerCPU float64 `json:"apiServerCpuCores,omitempty"`
	LoadAvg      string  `json:"loadAvg"` // /proc/loadavg at the window's end: the machine is shared
	// PluginLogged is what the plugin logged in the window (a refused or broken watch), folded
	PluginLogged []string `json:"pluginLogged,omitempty"`
	StoppedBy    string   `json:"stoppedBy,omitempty"`
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

// loadProviders are the rows of every load: $E2E_RELIABILITY_PROVIDERS, comma-separated, of "plugin" and
// "web" (default: plugin; make reliability runs both).
func loadProviders(t *testing.T) []string {
	spec := os.Getenv("E2E_RELIABILITY_PROVIDERS")
	if spec == "" {
		spec = providerPlugin
	}
	var out []string
	for _, f := range strings.Split(spec, ",") {
		switch f = strings.TrimSpace(f); f {
		case providerPlugin, providerDirect, providerWeb, providerNoop:
			out = append(out, f)
		default:
			t.Fatalf("E2E_RELIABILITY_PROVIDERS=%q: want plugin, direct, web and/or noop", spec)
		}
	}
	return out
}

const (
	providerPlugin = "plugin"
	// providerDirect is our plugin with --watch=false: every measurement read directly, no informers; the
	// floor of our plugin's memory, which the watches add to
	providerDirect = "direct"
	providerWeb    = "web"
	// providerNoop is a plugin that answers Running at once and reads nothing (../cmd/noop-metric-plugin):
	// the floor of the controller's plugin path, under any plugin
	providerNoop = "noop"
	// webMetric is the metrics server's script the web verifications query
	webMetric = "rel-web"
)

type loadTarget struct{ ns, name string }

// load stores n copies of the timeline's frame with the analysis in flight (ten Rollouts a namespace,
// renamed; the ten of a namespace share the recorded pod-template hash), then, for each provider in
// turn, starts a verification of each Rollout (the generated template as it is, pollInterval and
// apiTimeout the plugin's defaults; or the web provider's metric with the same interval) and measures
// loadRounds poll intervals once every verification was measured.
func load(t *testing.T, r *rig, tl *harness.Timeline, spec loadSpec) []loadResult {
	n := spec.n
	restart := r.ctrlSettings != spec.ctrl
	if !r.clusterReads {
		if err := r.grantClusterReads(); err != nil {
			t.Fatal(err)
		}
		r.clusterReads, restart = true, true
	}
	if restart {
		r.ctrlSettings = spec.ctrl
		if err := r.restartController(); err != nil {
			t.Fatal(err)
		}
	}
	mid := relMid(t, tl)
	begin := time.Now()
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	image := kargoverify.FreightImage(ro)
	var targets []loadTarget
	perNamespace := n / spec.namespaces()
	for i := 0; i < spec.namespaces(); i++ {
		for j := 0; j < perNamespace; j++ {
			name := fmt.Sprintf("ro-%02d", j)
			if spec.one {
				name = fmt.Sprintf("ro-%04d", j)
			}
			targets = append(targets, loadTarget{fmt.Sprintf("%s%03d", spec.prefix(), i), name})
		}
	}
	if spec.one {
		if _, err := r.newNamespace(targets[0].ns); err != nil {
			t.Fatal(err)
		}
	}
	// in chunks of ten Rollouts of one namespace
	err = parallel(n/loadPerNamespace+min(n%loadPerNamespace, 1), func(i int) error {
		chunk := targets[i*loadPerNamespace : min((i+1)*loadPerNamespace, n)]
		ns := chunk[0].ns
		if !spec.one {
			if _, err := r.newNamespace(ns); err != nil {
				return err
			}
		}
		for _, tg := range chunk {
			if err := r.applyFrame(ns, tg.name, tl.Frames[mid]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored := time.Since(begin)
	if spec.one {
		targets = targets[:1]
	}
	var out []loadResult
	for i, p := range loadProviders(t) {
		if p == providerDirect && !spec.one {
			continue // the floor of a namespace of many with one verified; a fleet read directly is the API server's load, not the plugin's memory
		}
		res := loadRow(t, r, spec, p, image, targets)
		if i == 0 {
			res.SetupSeconds += int(stored.Seconds())
		}
		out = append(out, res)
	}
	return out
}

// grantClusterReads gives the plugin's identity, before the loads, the reads of rollouts, analysisruns and
// experiments in every namespace that the Rollouts chart's ClusterRole grants the controller
// (argo-helm charts/argo-rollouts templates/_helpers.tpl "argo-rollouts.controller.roleRules", bound
// cluster-wide when clusterInstall, the default): the plugin runs with the controller's identity, so a
// fleet is watched as a cluster install watches it. The cases before the loads keep the generated Role
// alone, a namespaced install's.
func (r *rig) grantClusterReads() error {
	ctx := context.Background()
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: relPluginSA + "-cluster-reads"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"argoproj.io"}, Resources: []string{"rollouts", "analysisruns", "experiments"},
			Verbs: []string{"get", "list", "watch"}}}}
	if _, err := r.admin.Kube.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cr.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: relPluginSA, Namespace: relSystemNS}}}
	if _, err := r.admin.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, res := range []string{"rollouts", "analysisruns", "experiments"} {
		if err := r.waitAccess(metav1.NamespaceAll, "watch", res, true); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs f(0..n-1) on eight workers and returns the first error.
func parallel(n int, f func(int) error) error {
	var mu sync.Mutex
	var first error
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}

// loadRow starts one provider's verification of every target and measures it.
func loadRow(t *testing.T, r *rig, spec loadSpec, provider, image string, targets []loadTarget) loadResult {
	n := spec.n
	res := loadResult{Controller: spec.ctrl, Provider: provider, Rollouts: n, Namespaces: spec.namespaces()}
	if len(targets) < n {
		res.Verified = len(targets)
	}
	begin := time.Now()
	var mu sync.Mutex
	keys := map[string]bool{}
	err := parallel(len(targets), func(i int) error {
		tg := targets[i]
		var ar *v1alpha1.AnalysisRun
		var err error
		switch provider {
		case providerWeb:
			ar, err = r.webVerification(tg.ns, tg.name, image)
		case providerNoop:
			ar, err = r.noopVerification(tg.ns, tg.name, image)
		case providerDirect:
			ar, err = r.directVerification(tg.ns, tg.name, image)
		default:
			ar, err = r.verification(tg.ns, tg.name, image, nil)
		}
		if err != nil {
			return fmt.Errorf("%s/%s: %w", tg.ns, tg.name, err)
		}
		mu.Lock()
		keys[tg.ns+"/"+ar.Name] = true
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// every verification measured once; past 200 Rollouts a load that cannot get there is a figure
	wait := 10 * time.Minute
	if d := time.Duration(n/10) * time.Second; d > wait {
		wait = d
	}
	deadline := time.Now().Add(wait)
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
			msg := fmt.Sprintf("%d of %d verifications measured once after %s", len(seen), len(keys), wait)
			if n <= 200 {
				t.Fatal(msg)
			}
			res.StoppedBy = msg
			t.Log(msg)
			break
		}
		time.Sleep(time.Second)
	}
	// One interval more before the window: every verification's first measurement reads directly (it
	// pins the revision) through the plugin's client rate limit, so thousands started at once queue up
	// behind one another; the window measures the steady state after that start.
	time.Sleep(loadPollInterval)
	var pid int
	if provider != providerWeb {
		pids := pluginPIDs()
		switch provider {
		case providerNoop:
			pids = pluginPIDsOf("/noop")
		case providerDirect:
			pids = pluginPIDsOf("/direct")
		}
		if len(pids) != 1 {
			t.Fatalf("%s plugin processes %v, want one", provider, pids)
		}
		pid = pids[0]
	}
	usage := func(pid int) procUsage {
		if pid == 0 {
			return procUsage{}
		}
		u, err := readProcUsage(pid)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	self := os.Getpid()
	api := r.cluster.PID()
	u0, c0, a0 := usage(pid), usage(self), usage(api)
	web0 := r.metrics.Requests()[harness.Endpoint{Metric: webMetric}]
	from := time.Now()
	res.SetupSeconds = int(from.Sub(begin).Seconds())
	window := loadRounds * loadPollInterval
	time.Sleep(window)
	to := time.Now()
	u1, c1, a1 := usage(pid), usage(self), usage(api)
	web1 := r.metrics.Requests()[harness.Endpoint{Metric: webMetric}]
	queued := r.ctrl.queue.Len()
	res.PluginLogged = foldLines(r.pluginLog.since(from, " "+spec.prefix()))
	if len(res.PluginLogged) > 5 {
		res.PluginLogged = append(res.PluginLogged[:5], fmt.Sprintf("… %d more", len(res.PluginLogged)-5))
	}
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.LoadAvg = strings.Join(strings.Fields(string(raw))[:3], " ")
	}
	res.WindowSeconds = int(to.Sub(from).Seconds())
	if pid != 0 {
		res.PluginPeakRSS, res.PluginRSS = u1.PeakRSS, u1.RSS
		res.PluginCPU = round2(float64(u1.CPU-u0.CPU) / float64(to.Sub(from)))
	}
	res.ControllerRSS = c1.RSS
	res.ControllerCPU = round2(float64(c1.CPU-c0.CPU) / float64(to.Sub(from)))
	if api != 0 {
		res.APIServerRSS = a1.RSS
		res.APIServerCPU = round2(float64(a1.CPU-a0.CPU) / float64(to.Sub(from)))
	}
	// the verifications stop here, so the next row measures its own
	for i := 0; i < res.Namespaces; i++ {
		ns := fmt.Sprintf("%s%03d", spec.prefix(), i)
		_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: harness.KargoStageLabel})
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
	if res.Measurements > 0 && provider == providerWeb {
		res.MetricsRequests = round2(float64(web1-web0) / float64(res.Measurements))
	}
	if res.StoppedBy == "" && res.LateByPoll > 0 {
		res.StoppedBy = stoppedBy(res, spec, queued, to.Sub(from))
	}
	time.Sleep(time.Second) // the audit log is written as requests complete
	events, err := r.audit(saUser(relSystemNS, relPluginSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	total := 0
	for _, e := range events {
		// the load's namespaces, and every namespace at once (the informers of a cluster install)
		if e.ObjectRef.Namespace != "" && !strings.HasPrefix(e.ObjectRef.Namespace, spec.prefix()) {
			continue
		}
		counts[e.Verb+" "+e.ObjectRef.Resource]++
		total++
		// an informer's list reads in pages (limit); the direct reads list by label
		if e.Verb == "list" && !strings.Contains(e.RequestURI, "labelSelector=") && !strings.Contains(e.RequestURI, "limit=") {
			res.UnselectedList++
		}
	}
	res.Requests = map[string]float64{}
	for k, c := range counts {
		if res.Measurements > 0 {
			res.Requests[k] = round2(float64(c) / float64(res.Measurements))
		}
	}
	if res.Measurements > 0 {
		res.RequestsTotal = float64(int(float64(total)/float64(res.Measurements)*1000+0.5)) / 1000
	}
	t.Logf("load %d %s: %+v", n, provider, res)
	if res.UnselectedList > 0 {
		t.Errorf("%d lists without a label selector that are not an informer's", res.UnselectedList)
	}
	// the bounds hold at 200 Rollouts; beyond, the figures show how it grows
	if n <= 200 && !spec.one {
		if res.Errors > 0 || res.OverTimeout > 0 {
			t.Errorf("%s: %d Error measurements, %d over apiTimeout", provider, res.Errors, res.OverTimeout)
		}
		if res.LateByPoll > 0 || res.FewestPerRun < res.ExpectedRun-1 {
			t.Errorf("%s: %d measurements late by more than pollInterval; a run measured %d times in %d intervals", provider, res.LateByPoll, res.FewestPerRun, res.ExpectedRun)
		}
		if provider == providerPlugin && res.PluginPeakRSS >= rssLimit {
			t.Errorf("plugin peak RSS %d MB", res.PluginPeakRSS>>20)
		}
		if provider == providerPlugin && res.RequestsTotal > maxRequestsPerMeasurement {
			t.Errorf("the plugin made %.3f API requests a measurement in steady state (%v), want at most %.2f: Running is answered from its watches",
				res.RequestsTotal, res.Requests, maxRequestsPerMeasurement)
		}
	}
	return res
}

// stoppedBy names what held a load that fell behind, from what the window measured. Every measurement is
// one status write of the controller (analysis/sync.go persistAnalysisRunStatus) through its client's
// rate limiter: a rate at that limit is the limit; below it, the CPU the plugin, the controller's process
// and the API server program used is set against the machine's cores.
func stoppedBy(res loadResult, spec loadSpec, queued int, window time.Duration) string {
	due := float64(spec.n) / loadPollInterval.Seconds()
	rate := float64(res.Measurements) / window.Seconds()
	head := fmt.Sprintf("the controller's work queue held %d runs at the window's end; it wrote %.1f measurements a second of the %.0f due",
		queued, rate, due)
	if rate >= 0.9*float64(spec.ctrl.QPS) {
		return fmt.Sprintf("%s, each one status write through its client's rate limit of %d requests a second (--qps %d, --burst %d)",
			head, spec.ctrl.QPS, spec.ctrl.QPS, spec.ctrl.Burst)
	}
	used := res.PluginCPU + res.ControllerCPU + res.APIServerCPU
	perMeasurement := 0.0
	if rate > 0 {
		perMeasurement = used / rate * 1000
	}
	return fmt.Sprintf("%s, below its client's rate limit of %d a second: the machine's CPU, %.2f of its %d cores used (plugin %.2f, controller process %.2f, API server %.2f), %.1f ms of CPU a measurement, so %.0f due a second would need %.2f cores",
		head, spec.ctrl.QPS, used, runtime.NumCPU(), res.PluginCPU, res.ControllerCPU, res.APIServerCPU, perMeasurement, due, perMeasurement*due/1000)
}

// maxRequestsPerMeasurement is the bound on the plugin's API requests per measurement once every
// Verification was measured (steady state).
const maxRequestsPerMeasurement = 0.05

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }
