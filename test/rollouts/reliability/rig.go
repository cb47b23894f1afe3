package reliability

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/workqueue"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
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
)

// controllerSettings are the analysis controller's client rate limit (cmd/rollouts-controller --qps,
// --burst) and its --analysis-threads.
type controllerSettings struct {
	QPS     int `json:"qps"`
	Burst   int `json:"burst"`
	Threads int `json:"analysisThreads"`
}

// defaultController is what the controller main runs with unless told otherwise: --qps and --burst
// default to defaults.DefaultQPS and DefaultBurst (40, 80; cmd/rollouts-controller/main.go), and
// --analysis-threads to controller.DefaultAnalysisThreads (30; controller/controller.go, a package whose
// imports this module does not carry).
var defaultController = controllerSettings{QPS: int(defaults.DefaultQPS), Burst: defaults.DefaultBurst, Threads: 30}

var (
	rolloutsRes     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	analysisRunsRes = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
	experimentsRes  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "experiments"}
)

type rig struct {
	t        testing.TB
	opts     cluster.ClusterOptions
	cluster  *cluster.Cluster
	admin    *cluster.Clients
	ca       []byte
	ctrlPx   *faultProxy
	pluginPx *faultProxy
	bins     kargoverify.PluginBinaries
	ctrl     *analysisRig
	// kubeconfigs of the identities, through the proxies
	ctrlKC, pluginKC, localKC string
	pluginArgsKC              string // the kubeconfig the plugin was last configured with
	mu                        sync.Mutex
	runTemplate               map[string]*v1alpha1.AnalysisRun // by namespace
	logs                      *logTap
	pluginLog                 *lineLog               // the plugin's own lines, from its stderr as the controller logs it
	metrics                   *harness.MetricsServer // what the web verifications query
	ctrlSettings              controllerSettings
	clusterReads              bool // the plugin's identity reads every namespace (clusterInstall)
}

// newRig starts the cluster and the controller; Close stops both.
func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{t: t, opts: cluster.ClusterOptions{RBAC: true, AuditLog: filepath.Join(dir, "audit.log"), DataDir: filepath.Join(dir, "data")},
		runTemplate: map[string]*v1alpha1.AnalysisRun{}, ctrlSettings: defaultController}
	if err := os.MkdirAll(r.opts.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.QuietLogs()
	r.logs = tapLogs()
	// the controller's go-plugin client logs the plugin's stderr through an hclog logger of
	// hclog.DefaultOutput (github.com/hashicorp/go-plugin client.go NewClient; the controller sets none)
	r.pluginLog = &lineLog{}
	hclog.DefaultOutput = r.pluginLog
	var err error
	if r.metrics, err = harness.NewMetricsServer(); err != nil {
		t.Fatal(err)
	}
	r.metrics.Script(webMetric, harness.OK(0.99))
	t.Cleanup(r.metrics.Close)
	timeutil.SetNowTimeFunc(time.Now)
	// DownloadPlugins writes plugin-bin/ below the working directory.
	t.Chdir(t.TempDir())
	r.bins = kargoverify.PreparePlugin(t)
	for _, l := range loadSpecs(t) {
		if l.n > 0 && slices.Contains(loadProviders(t), providerNoop) && r.bins.Noop == "" {
			r.bins.Noop = buildNoop(t)
		}
	}
	if r.cluster, err = cluster.StartClusterWith(r.opts); err != nil {
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
	if r.admin, err = cluster.NewClients(r.cluster.Config); err != nil {
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
	item := fmt.Sprintf("- name: %s\n  location: file://%s\n  args: [\"-kubeconfig\", %q]\n", kargoverify.PluginName, r.bins.Plugin, kubeconfig)
	item += fmt.Sprintf("- name: %s\n  location: file://%s\n  args: [\"-kubeconfig\", %q, \"-watch=false\"]\n", directPluginName, r.bins.Plugin, kubeconfig)
	if r.bins.Noop != "" {
		item += fmt.Sprintf("- name: %s\n  location: file://%s\n", noopPluginName, r.bins.Noop)
	}
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

// directPluginName is our plugin with --watch=false in argo-rollouts-config (providerDirect); its file is
// named after the part after the slash (pluginPIDsOf).
const directPluginName = "analysis-health/direct"

// noopPluginName is the do-nothing plugin's name in argo-rollouts-config (../cmd/noop-metric-plugin).
const noopPluginName = "analysis-health/noop"

// buildNoop builds the do-nothing plugin of this module (the test/rollouts module: it needs Rollouts'
// rpc package), with the toolchain of the test's own module.
func buildNoop(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "noop")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/noop-metric-plugin")
	cmd.Dir = filepath.Join(cluster.RepoRoot(), "test", "rollouts")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the noop plugin: %v\n%s", err, out)
	}
	return bin
}

// pluginPIDs are our plugin's processes this test process started (the controller's go-plugin clients).
func pluginPIDs() []int { return pluginPIDsOf("/rollout-analysis") }

// pluginPIDsOf are the processes this test process started whose executable's path ends in suffix
// (DownloadPlugins names a plugin's file after the part of its name after the slash).
func pluginPIDsOf(suffix string) []int {
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
		if strings.HasSuffix(exe, suffix) {
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
	cfg.QPS, cfg.Burst = float32(r.ctrlSettings.QPS), r.ctrlSettings.Burst
	ar := &analysisRig{done: make(chan struct{}), writes: &writeLog{last: map[string]string{}}}
	ar.queue = &timedQueue{RateLimitingInterface: workqueue.NewNamedRateLimitingQueue(queue.DefaultArgoRolloutsRateLimiter(), "AnalysisRuns"),
		started: map[string]time.Time{}}
	ar.writes.queue = ar.queue
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return writeTimer{rt: rt, log: ar.writes} })
	c, err := cluster.NewClients(cfg)
	if err != nil {
		return err
	}
	dynInf := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = harness.KargoStageLabel })
	runs := tolerantinformer.NewTolerantAnalysisRunInformer(dynInf)
	kubeInf := kubeinformers.NewSharedInformerFactory(c.Kube, 0)
	ms := metrics.NewMetricsServer(metrics.ServerConfig{Addr: "127.0.0.1:0", K8SRequestProvider: &metrics.K8sRequestsCountProvider{}})
	ac := analysis.NewController(harness.AnalysisConfig(kubeInf, analysis.ControllerConfig{
		KubeClientSet:        c.Kube,
		ArgoProjClientset:    c.Argo,
		AnalysisRunInformer:  runs,
		JobInformer:          kubeInf.Batch().V1().Jobs(),
		ResyncPeriod:         0,
		AnalysisRunWorkQueue: ar.queue,
		MetricsServer:        ms,
		Recorder:             record.NewFakeEventRecorder(),
	}))
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
		_ = ac.Run(ctx, r.ctrlSettings.Threads)
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
