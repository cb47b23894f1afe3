package recorder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutsconfig "github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	"github.com/argoproj/argo-rollouts/utils/plugin"
	"github.com/argoproj/argo-rollouts/utils/queue"
	"github.com/argoproj/argo-rollouts/utils/record"
	timeutil "github.com/argoproj/argo-rollouts/utils/time"
	"github.com/argoproj/argo-rollouts/utils/tolerantinformer"
	goplugin "github.com/hashicorp/go-plugin"
	log "github.com/sirupsen/logrus"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/analysisruns"
)

// The rig of the reliability tests (reliability_test.go, docs/reliability.md): the API server program with
// RBAC, its audit log and a data directory to restart on; two TCP proxies in front of it, one for the
// analysis controller and one for the plugin, which keep their addresses across a restart of the API
// server and inject the faults of the network (down, slow); Argo Rollouts' own analysis controller on the
// real clock with the controller main's work queue and thread count, loading the built plugin through
// argo-rollouts-config; and ServiceAccount identities, so that neither the controller nor the plugin runs
// as the loopback admin. The Rollout and its own runs are frames of the recorded timelines
// (../testdata/timelines), stored as the controllers stored them; only verification runs are measured.

const (
	relSystemNS = "reliability-system"
	// the identities: the analysis controller (cluster-admin, as the Rollouts chart's ClusterRole is close
	// to), the plugin (only what the generated rbac.yaml grants), and the plugin's identity on the
	// controller's cluster when the Rollout is read through a kubeconfig Secret
	relControllerSA = "analysis-controller"
	relPluginSA     = "plugin"
	relLocalSA      = "plugin-local"
	relScenario     = "canary-step-successful"
	relExperiment   = "canary-experiment-successful"
	// analysisThreads is the controller's default (controller.DefaultAnalysisThreads).
	analysisThreads = 30
)

var (
	rolloutsRes     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	analysisRunsRes = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	experimentsRes  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
)

type rig struct {
	t        testing.TB
	opts     ClusterOptions
	cluster  *Cluster
	admin    *Clients
	ca       []byte
	ctrlPx   *faultProxy
	pluginPx *faultProxy
	bins     pluginBinaries
	ctrl     *analysisRig
	// kubeconfigs of the identities, through the proxies
	ctrlKC, pluginKC, localKC string
	pluginArgsKC              string // the kubeconfig the plugin was last configured with
	mu                        sync.Mutex
	runTemplate               map[string]*v1alpha1.AnalysisRun // by namespace
	logs                      *logTap
}

// newRig starts the cluster and the controller; Close stops both.
func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{t: t, opts: ClusterOptions{RBAC: true, AuditLog: filepath.Join(dir, "audit.log"), DataDir: filepath.Join(dir, "data")},
		runTemplate: map[string]*v1alpha1.AnalysisRun{}}
	if err := os.MkdirAll(r.opts.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	quietLogs()
	r.logs = tapLogs()
	timeutil.SetNowTimeFunc(time.Now)
	// DownloadPlugins writes plugin-bin/ below the working directory.
	t.Chdir(t.TempDir())
	r.bins = preparePlugin(t)
	var err error
	if r.cluster, err = StartClusterWith(r.opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		goplugin.CleanupClients()
		if r.ctrl != nil {
			r.ctrl.stop()
		}
		if r.cluster != nil {
			r.cluster.Close()
		}
	})
	if r.admin, err = newClients(r.cluster.Config); err != nil {
		t.Fatal(err)
	}
	if r.ca, err = os.ReadFile(filepath.Join(r.opts.DataDir, "serving.crt")); err != nil {
		t.Fatal(err)
	}
	up := strings.TrimPrefix(r.cluster.Config.Host, "https://")
	if r.ctrlPx, err = newFaultProxy(up); err != nil {
		t.Fatal(err)
	}
	if r.pluginPx, err = newFaultProxy(up); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.ctrlPx.close(); r.pluginPx.close() })
	ctx := context.Background()
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: relSystemNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sa := range []string{relControllerSA, relPluginSA, relLocalSA} {
		if _, err := r.admin.Kube.CoreV1().ServiceAccounts(relSystemNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, sa := range []string{relControllerSA, relLocalSA} {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: relSystemNS}}}
		if _, err := r.admin.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if r.ctrlKC, err = r.kubeconfig(relSystemNS, relControllerSA, r.ctrlPx, dir); err != nil {
		t.Fatal(err)
	}
	if r.pluginKC, err = r.kubeconfig(relSystemNS, relPluginSA, r.pluginPx, dir); err != nil {
		t.Fatal(err)
	}
	if r.localKC, err = r.kubeconfig(relSystemNS, relLocalSA, r.pluginPx, dir); err != nil {
		t.Fatal(err)
	}
	if err := r.usePlugin(r.pluginKC); err != nil {
		t.Fatal(err)
	}
	if err := r.startController(); err != nil {
		t.Fatal(err)
	}
	return r
}

func saUser(ns, name string) string { return "system:serviceaccount:" + ns + ":" + name }

// kubeconfig writes a kubeconfig for a ServiceAccount's token (TokenRequest: no token controller runs)
// that reaches the API server through px, trusting the serving certificate of the data directory.
func (r *rig) kubeconfig(ns, sa string, px *faultProxy, dir string) (string, error) {
	exp := int64(4 * 3600)
	tr, err := r.admin.Kube.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of %s/%s: %w", ns, sa, err)
	}
	raw, err := kubeconfigBytes("https://"+px.addr(), r.ca, tr.Status.Token)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, sa+".kubeconfig")
	return path, os.WriteFile(path, raw, 0o600)
}

func kubeconfigBytes(server string, ca []byte, token string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	return clientcmd.Write(*kc)
}

// usePlugin configures the plugin as argo-rollouts-config metricProviderPlugins, with -kubeconfig path
// (its args), as the controller's main loads it; a plugin already running with other args is stopped, so
// the next measurement starts the new one (metricproviders/plugin/client startPluginSystem restarts an
// exited plugin).
func (r *rig) usePlugin(kubeconfig string) error {
	if r.pluginArgsKC == kubeconfig {
		return nil
	}
	goplugin.CleanupClients()
	ctx := context.Background()
	ns := defaults.Namespace()
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	item := fmt.Sprintf("- name: %s\n  location: file://%s\n  args: [\"-kubeconfig\", %q]\n", pluginName, r.bins.plugin, kubeconfig)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: ns},
		Data: map[string]string{"metricProviderPlugins": item}}
	_ = r.admin.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
	if _, err := r.admin.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := rolloutsconfig.InitializeConfig(r.admin.Kube, defaults.DefaultRolloutsConfigMapName); err != nil {
		return fmt.Errorf("argo-rollouts-config: %w", err)
	}
	if err := plugin.DownloadPlugins(plugin.FileDownloaderImpl{}, r.admin.Kube); err != nil {
		return fmt.Errorf("argo-rollouts-config plugins: %w", err)
	}
	r.pluginArgsKC = kubeconfig
	return nil
}

// pluginPIDs are the plugin processes this test process started (the controller's go-plugin clients).
func pluginPIDs() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	me := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(me) {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if strings.HasSuffix(exe, "/rollout-analysis") {
			out = append(out, pid)
		}
	}
	return out
}

// procUsage is a process's peak and current resident memory and its CPU time so far.
type procUsage struct {
	PeakRSS, RSS int64 // bytes
	CPU          time.Duration
}

func readProcUsage(pid int) (procUsage, error) {
	var u procUsage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			u.PeakRSS = kb * 1024
		case "VmRSS":
			u.RSS = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	// utime and stime, fields 14 and 15 of stat (11 and 12 after the name), in clock ticks of 1/100 s
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.CPU = time.Duration(ut+st) * 10 * time.Millisecond
	return u, nil
}

// analysisRig is one run of the analysis controller, as controller/controller.go NewManager makes it
// (its work queue and rate limiter, the default thread count), watching the verification runs of every
// namespace, through the controller's proxy as the controller's ServiceAccount.
type analysisRig struct {
	cancel  context.CancelFunc
	queue   *timedQueue
	done    chan struct{}
	writes  *writeLog
	stopped bool
}

func (r *rig) startController() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", r.ctrlKC)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 40, 80 // the controller main's defaults (--qps, --burst)
	ar := &analysisRig{done: make(chan struct{}), writes: &writeLog{last: map[string]string{}}}
	ar.queue = &timedQueue{RateLimitingInterface: workqueue.NewNamedRateLimitingQueue(queue.DefaultArgoRolloutsRateLimiter(), "AnalysisRuns"),
		started: map[string]time.Time{}}
	ar.writes.queue = ar.queue
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return writeTimer{rt: rt, log: ar.writes} })
	c, err := newClients(cfg)
	if err != nil {
		return err
	}
	dynInf := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = kargoStageLabel })
	runs := tolerantinformer.NewTolerantAnalysisRunInformer(dynInf)
	kubeInf := kubeinformers.NewSharedInformerFactory(c.Kube, 0)
	ms := metrics.NewMetricsServer(metrics.ServerConfig{Addr: "127.0.0.1:0", K8SRequestProvider: &metrics.K8sRequestsCountProvider{}})
	ac := analysis.NewController(analysis.ControllerConfig{
		KubeClientSet:        c.Kube,
		ArgoProjClientset:    c.Argo,
		AnalysisRunInformer:  runs,
		JobInformer:          kubeInf.Batch().V1().Jobs(),
		ResyncPeriod:         0,
		AnalysisRunWorkQueue: ar.queue,
		MetricsServer:        ms,
		Recorder:             record.NewFakeEventRecorder(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	ar.cancel = cancel
	dynInf.Start(ctx.Done())
	kubeInf.Start(ctx.Done())
	for typ, ok := range dynInf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return fmt.Errorf("informer %v did not sync", typ)
		}
	}
	kubeInf.WaitForCacheSync(ctx.Done())
	go func() {
		defer close(ar.done)
		_ = ac.Run(ctx, analysisThreads)
	}()
	r.ctrl = ar
	return nil
}

func (a *analysisRig) stop() {
	if a.stopped {
		return
	}
	a.stopped = true
	a.cancel()
	a.queue.ShutDown()
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
	}
}

// restartController stops the controller and the plugin with it (they share the controller's pod), and
// starts a new one.
func (r *rig) restartController() error {
	r.ctrl.stop()
	goplugin.CleanupClients()
	return r.startController()
}

// timedQueue is the controller's work queue, noting when a worker took each key.
type timedQueue struct {
	workqueue.RateLimitingInterface
	mu      sync.Mutex
	started map[string]time.Time
}

func (q *timedQueue) Get() (any, bool) {
	item, shutdown := q.RateLimitingInterface.Get()
	if !shutdown {
		if k, ok := item.(string); ok {
			q.mu.Lock()
			q.started[k] = time.Now()
			q.mu.Unlock()
		}
	}
	return item, shutdown
}

func (q *timedQueue) startedAt(key string) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.started[key]
}

// measured is one measurement the controller took and wrote: when the worker took the run (Taken), when
// it began writing the result (Written), the measurement written, and the resumeAt it was due at.
type measured struct {
	Key         string
	Taken       time.Time
	Written     time.Time
	DueAt       *time.Time
	Measurement v1alpha1.Measurement
	Count       int
}

// writeLog collects the measurements of the controller's writes of AnalysisRuns.
type writeLog struct {
	queue *timedQueue
	mu    sync.Mutex
	last  map[string]string // key -> the last measurement written, as JSON
	due   map[string]*time.Time
	all   []measured
}

func (l *writeLog) snapshot() []measured {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]measured(nil), l.all...)
}

var runPath = regexp.MustCompile(`^/apis/argoproj\.io/v1alpha1/namespaces/([^/]+)/analysisruns/([^/]+)$`)

// writeTimer notes every successful write of an AnalysisRun whose last measurement changed: a
// measurement taken.
type writeTimer struct {
	rt  http.RoundTripper
	log *writeLog
}

func (w writeTimer) RoundTrip(req *http.Request) (*http.Response, error) {
	// the controller writes a run's status as a merge patch of the status (analysis/sync.go
	// persistAnalysisRunStatus), which holds metricResults whole whenever a measurement changed
	m := runPath.FindStringSubmatch(req.URL.Path)
	if req.Method != http.MethodPatch || m == nil {
		return w.rt.RoundTrip(req)
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := w.rt.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		w.log.note(m[1]+"/"+m[2], body, start)
	}
	return resp, err
}

func (l *writeLog) note(key string, body []byte, now time.Time) {
	var ar v1alpha1.AnalysisRun
	if json.Unmarshal(body, &ar) != nil || len(ar.Status.MetricResults) == 0 {
		return
	}
	mr := ar.Status.MetricResults[0]
	if len(mr.Measurements) == 0 {
		return
	}
	m := mr.Measurements[len(mr.Measurements)-1]
	raw, _ := json.Marshal(struct {
		M v1alpha1.Measurement
		N int
	}{m, len(mr.Measurements)})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.due == nil {
		l.due = map[string]*time.Time{}
	}
	if l.last[key] == string(raw) {
		return
	}
	l.last[key] = string(raw)
	l.all = append(l.all, measured{Key: key, Taken: l.queue.startedAt(key), Written: now, DueAt: l.due[key], Measurement: m, Count: len(mr.Measurements)})
	if m.ResumeAt != nil {
		t := m.ResumeAt.Time
		l.due[key] = &t
	} else {
		// an Error or a completed measurement: the next one is due after the controller's own interval
		l.due[key] = nil
	}
}

// logTap keeps what the analysis controller logs about measurements (logrus, its logger), by run.
type logTap struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	Time    time.Time
	Run     string // namespace/name
	Level   string
	Message string
}

func tapLogs() *logTap {
	tap := &logTap{}
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.SetLevel(log.InfoLevel)
	log.AddHook(tap)
	return tap
}

func (*logTap) Levels() []log.Level { return log.AllLevels }

func (l *logTap) Fire(e *log.Entry) error {
	if !strings.HasPrefix(e.Message, "Measurement") {
		return nil
	}
	ns, _ := e.Data["namespace"].(string)
	name, _ := e.Data["analysisrun"].(string)
	l.mu.Lock()
	l.entries = append(l.entries, logEntry{Time: e.Time, Run: ns + "/" + name, Level: e.Level.String(), Message: e.Message})
	l.mu.Unlock()
	return nil
}

func (l *logTap) of(run string, from, to time.Time) []logEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logEntry
	for _, e := range l.entries {
		if e.Run == run && !e.Time.Before(from) && !e.Time.After(to) {
			out = append(out, e)
		}
	}
	return out
}

// faultProxy forwards TCP connections to the API server. down closes its listener (a client gets
// "connection refused", as from a stopped server) and every connection; slow delays every chunk the
// server sends by d.
type faultProxy struct {
	mu       sync.Mutex
	ln       net.Listener
	address  string
	upstream string
	delay    time.Duration
	conns    map[net.Conn]bool
}

func newFaultProxy(upstream string) (*faultProxy, error) {
	p := &faultProxy{upstream: upstream, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.address = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

func (p *faultProxy) addr() string { return p.address }

func (p *faultProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *faultProxy) forward(c net.Conn) {
	p.mu.Lock()
	up, delay := p.upstream, p.delay
	p.conns[c] = true
	p.mu.Unlock()
	u, err := net.Dial("tcp", up)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	p.conns[u] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); p.drop(u) }()
	buf := make([]byte, 32*1024)
	for {
		n, err := u.Read(buf)
		if n > 0 {
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.drop(c)
	p.drop(u)
}

func (p *faultProxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *faultProxy) down() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
}

// up listens again on the same address, forwarding to upstream.
func (p *faultProxy) up(upstream string) error {
	p.mu.Lock()
	p.upstream = upstream
	p.mu.Unlock()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.address); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// slow delays what the server sends on connections opened from now on; existing ones are closed, so the
// client's next request opens a slow one.
func (p *faultProxy) slow(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

func (p *faultProxy) close() { p.down() }

// restartCluster stops the API server program, keeps it stopped for down, and starts it again on the same
// data directory; the proxies refuse connections meanwhile and then forward to the new server.
func (r *rig) restartCluster(down time.Duration) (stopped, ready time.Time, err error) {
	r.ctrlPx.down()
	r.pluginPx.down()
	r.cluster.Close()
	r.cluster = nil
	stopped = time.Now()
	time.Sleep(down)
	if r.cluster, err = StartClusterWith(r.opts); err != nil {
		return stopped, ready, err
	}
	ready = time.Now()
	if r.admin, err = newClients(r.cluster.Config); err != nil {
		return stopped, ready, err
	}
	up := strings.TrimPrefix(r.cluster.Config.Host, "https://")
	if err := r.ctrlPx.up(up); err != nil {
		return stopped, ready, err
	}
	return stopped, ready, r.pluginPx.up(up)
}

// timeline reads a recorded timeline of this build's Rollouts version.
func readTimeline(name string) (*Timeline, error) {
	raw, err := os.ReadFile(filepath.Join(TimelineDir(), name+".yaml"))
	if err != nil {
		return nil, err
	}
	var tl Timeline
	if err := yaml.Unmarshal(raw, &tl); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &tl, nil
}

// midFrame is the first frame whose analysis of the released revision is in flight (the verification's
// verdict is Running), and the frame after which the last one is all that follows.
func midFrame(tl *Timeline) (int, error) {
	for i, f := range tl.Frames {
		if i == 0 {
			continue
		}
		for _, r := range analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, tl.PodTemplateHash).Runs {
			if phase, _, _ := unstructured.NestedString(r.Object, "status", "phase"); phase == string(v1alpha1.AnalysisPhaseRunning) {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no frame with the analysis of %s in flight", tl.Name, tl.PodTemplateHash)
}

// applyFrame stores frame f of a timeline in namespace ns as the controllers stored it, the Rollout named
// name: the Rollout (and its status), its Experiments and AnalysisRuns, created or replaced. Recorded
// uids are replaced by the server's; a name other than the recorded one replaces it everywhere it occurs
// as the start of a string (the Rollout's name, its runs', their owners').
func (r *rig) applyFrame(ns, name string, f Frame) error {
	ctx := context.Background()
	uids := map[string]string{}
	conv := func(o map[string]any) (*unstructured.Unstructured, error) {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if name != Name {
			raw = bytes.ReplaceAll(raw, []byte(`"`+Name), []byte(`"`+name))
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		u.SetNamespace(ns)
		u.SetResourceVersion("")
		u.SetCreationTimestamp(metav1.Time{})
		u.SetManagedFields(nil)
		refs := u.GetOwnerReferences()
		for i := range refs {
			if real, ok := uids[string(refs[i].UID)]; ok {
				refs[i].UID = types.UID(real)
			}
		}
		u.SetOwnerReferences(refs)
		return u, nil
	}
	store := func(res schema.GroupVersionResource, o map[string]any, status bool) error {
		u, err := conv(o)
		if err != nil {
			return err
		}
		recorded := string(u.GetUID())
		u.SetUID("")
		c := r.admin.Dynamic.Resource(res).Namespace(ns)
		cur, err := c.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if cur, err = c.Create(ctx, u, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		case err != nil:
			return err
		default:
			u.SetResourceVersion(cur.GetResourceVersion())
			u.SetUID(cur.GetUID())
			if cur, err = c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		}
		uids[recorded] = string(cur.GetUID())
		if status {
			u.SetResourceVersion(cur.GetResourceVersion())
			u.SetUID(cur.GetUID())
			if _, err := c.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("status of %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		}
		return nil
	}
	// the Rollout CRD has a status subresource; AnalysisRuns and Experiments store their status with the
	// object (manifests/crds)
	if err := store(rolloutsRes, f.Rollout, true); err != nil {
		return err
	}
	for _, e := range f.Experiments {
		if err := store(experimentsRes, e, false); err != nil {
			return err
		}
	}
	for _, ar := range f.AnalysisRuns {
		if err := store(analysisRunsRes, ar, false); err != nil {
			return err
		}
	}
	return nil
}

// grantPlugin applies the generated rbac.yaml for namespace ns (analysis-health generate --format kargo,
// the plugin's identity as the Rollouts service account), and returns its Role.
func (r *rig) grantPlugin(ns string) (*rbacv1.Role, error) {
	objs, err := r.generated(ns, "rbac.yaml", "--rollouts-service-account", relSystemNS+"/"+relPluginSA)
	if err != nil {
		return nil, err
	}
	var role *rbacv1.Role
	ctx := context.Background()
	for _, raw := range objs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
		switch meta.Kind {
		case "Role":
			role = &rbacv1.Role{}
			if err := yaml.UnmarshalStrict(raw, role); err != nil {
				return nil, err
			}
			if _, err := r.admin.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict(raw, &rb); err != nil {
				return nil, err
			}
			if _, err := r.admin.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("rbac.yaml holds a %s", meta.Kind)
		}
	}
	if role == nil {
		return nil, fmt.Errorf("rbac.yaml holds no Role")
	}
	return role, nil
}

// generated runs analysis-health generate --format kargo for the Rollout of namespace ns and returns the
// documents of one of its files.
func (r *rig) generated(ns, file string, extra ...string) ([][]byte, error) {
	dir, err := os.MkdirTemp("", "kargo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kargo")
	args := append([]string{"generate", "--format", "kargo", "--project", ns, "--rollout", Name, "--namespace", ns,
		"--plugin-location", "file://" + r.bins.plugin, "--image-repo", ImageRepo, "--out", out}, extra...)
	if out, err := exec.Command(r.bins.cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("analysis-health %s: %v: %s", strings.Join(args, " "), err, out)
	}
	raw, err := os.ReadFile(filepath.Join(out, file))
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs, nil
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// verification creates a Kargo verification run (verificationRun: our generated template and Stage
// snippet, as Kargo builds the run) for Rollout name in ns, with config overrides of the plugin's
// (pollInterval, apiTimeout, kubeconfigSecret).
func (r *rig) verification(ns, name, image string, config map[string]any) (*v1alpha1.AnalysisRun, error) {
	r.mu.Lock()
	tmpl := r.runTemplate[ns]
	r.mu.Unlock()
	if tmpl == nil {
		var err error
		if tmpl, err = r.bins.verificationRun(ns, "rel", image); err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.runTemplate[ns] = tmpl
		r.mu.Unlock()
	}
	ar := tmpl.DeepCopy()
	ar.Name = fmt.Sprintf("%s-%s-%d", name, ar.Name[:3], time.Now().UnixNano()%1e9)
	for i, a := range ar.Spec.Args {
		if a.Name == "rollout-name" {
			ar.Spec.Args[i].Value = ptr(name)
		}
	}
	for i, m := range ar.Spec.Metrics {
		var c map[string]any
		if err := json.Unmarshal(m.Provider.Plugin[pluginName], &c); err != nil {
			return nil, err
		}
		for k, v := range config {
			c[k] = v
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		ar.Spec.Metrics[i].Provider.Plugin = map[string]json.RawMessage{pluginName: raw}
	}
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Create(context.Background(), ar, metav1.CreateOptions{})
}

// newNamespace makes a namespace whose Rollout the plugin may read, by the generated rbac.yaml.
func (r *rig) newNamespace(ns string) (*rbacv1.Role, error) {
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return r.grantPlugin(ns)
}

// run reads a run back.
func (r *rig) run(ns, name string) (*v1alpha1.AnalysisRun, error) {
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// lastMeasurement is the run's last measurement of its one metric, nil before the first.
func lastMeasurement(ar *v1alpha1.AnalysisRun) *v1alpha1.Measurement {
	if len(ar.Status.MetricResults) == 0 || len(ar.Status.MetricResults[0].Measurements) == 0 {
		return nil
	}
	ms := ar.Status.MetricResults[0].Measurements
	return &ms[len(ms)-1]
}

// waitRun polls the run until cond holds, or fails after timeout.
func (r *rig) waitRun(ns, name string, timeout time.Duration, what string, cond func(*v1alpha1.AnalysisRun) bool) (*v1alpha1.AnalysisRun, error) {
	deadline := time.Now().Add(timeout)
	var last *v1alpha1.AnalysisRun
	for time.Now().Before(deadline) {
		ar, err := r.run(ns, name)
		if err == nil {
			last = ar
			if cond(ar) {
				return ar, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	desc := "not found"
	if last != nil {
		raw, _ := json.Marshal(last.Status)
		desc = string(raw)
	}
	return last, fmt.Errorf("run %s/%s: not %s within %s (status %s)", ns, name, what, timeout, desc)
}

// denied waits until the API server's authorizer says the plugin may not verb resource in ns (RBAC's
// caches follow a Role's change within moments).
func (r *rig) waitAccess(ns, verb, resource string, allowed bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               saUser(relSystemNS, relPluginSA),
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + relSystemNS, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: "argoproj.io", Resource: resource}}}
		got, err := r.admin.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed == allowed {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s %s in %s: not allowed=%v after 30s", verb, resource, ns, allowed)
}

// auditEvent is what the tests read of an audit log line.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// audit reads the audit log's requests by user, received in [from, to].
func (r *rig) audit(user string, from, to time.Time) ([]auditEvent, error) {
	f, err := os.Open(r.opts.AuditLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"`+user+`"`)) {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, err
		}
		if e.User.Username != user || e.Received.Time.Before(from) || e.Received.Time.After(to) {
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// rollout converts a frame's Rollout.
func frameRollout(f Frame) (*v1alpha1.Rollout, error) {
	var ro v1alpha1.Rollout
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(f.Rollout, &ro); err != nil {
		return nil, err
	}
	return &ro, nil
}
