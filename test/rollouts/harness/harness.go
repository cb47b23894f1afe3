// Package harness is the framework of the Rollouts proofs: it runs Argo Rollouts' own rollout, analysis
// and experiment controllers (packages rollout, analysis and experiments of
// github.com/argoproj/argo-rollouts, at the version of the module that builds it) against a real
// Kubernetes API server (package cluster), plays a scenario's script (S) and records the Rollout, its
// AnalysisRuns and its Experiments after every reconcile (Record). The jobs that use it are packages of
// their own, none importing another: scenarios (the catalogue and its recorded timelines,
// test/testdata/timelines/<version>, the input of the Argo CD and Kargo evaluation), pluginproof,
// reliability and live; the Rollouts version modules (test/rollouts-v1.8, test/rollouts-v1.10) wire them
// and hand the catalogue to the proofs that play it (Catalogue).
//
// What is real: kube-apiserver v1.34.5 with etcd (validation against the Rollouts CRDs of the module
// built against, status subresources, resourceVersions, generations, owner references), Kubernetes'
// ReplicaSet controller (Pods and ReplicaSet status), and the three Rollouts controllers with real
// clientsets and informers. The analysis is measured by the analysis controller through its `web` and
// `prometheus` providers, against a server on 127.0.0.1 that the scenario scripts.
//
// With NewTwoClusterEnv there are two such API servers, as Kargo users run them: the workload cluster
// (Env.Cluster: the Rollout and its controllers) and Kargo's control plane (Env.ControlPlane: each World's
// Kargo Project namespace, and a Rollouts analysis controller there, stepped on every tick, that measures
// Kargo's verification runs with the plugin).
//
// What is simulated, and why:
//   - the kubelet: there is none, so the API server program marks every Pod Running and Ready (unless
//     the scenario holds the Pods of a ReplicaSet back); Pods are never scheduled;
//   - the clock: every controller reads Rollouts' utils/time Now, which the recorder moves by 10 s per
//     tick, so intervals, initialDelay, pauses, progress deadlines and scale-down delays play out in
//     seconds of test time; the API server stamps creation times with the wall clock, so the recorded
//     creationTimestamps are replaced by the fake time at which the recorder first saw the object;
//   - scheduling: each controller's work queue hands out a key only when the recorder asks, and the
//     recorder lets the cluster (ReplicaSet controller, Pod loop) settle and the informers catch up
//     before every reconcile, so a timeline does not depend on goroutine timing;
//   - SMI TrafficSplits and Istio objects live in fake clients (no such CRDs are installed);
//   - users and Argo CD: applying a new revision and the resource actions (resume, retry, abort,
//     promote-full, skip a step) are writes of the recorder's own clients, which may not write any
//     AnalysisRun or Experiment (guardTransport).
package harness

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutinformers "github.com/argoproj/argo-rollouts/pkg/client/informers/externalversions/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/rollout"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	rolloutsconfig "github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	"github.com/argoproj/argo-rollouts/utils/ingress"
	istioutil "github.com/argoproj/argo-rollouts/utils/istio"
	"github.com/argoproj/argo-rollouts/utils/plugin"
	"github.com/argoproj/argo-rollouts/utils/record"
	timeutil "github.com/argoproj/argo-rollouts/utils/time"
	"github.com/argoproj/argo-rollouts/utils/tolerantinformer"
	smifake "github.com/servicemeshinterface/smi-sdk-go/pkg/gen/client/split/clientset/versioned/fake"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/klog/v2"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

const (
	// Namespace and Name of every recorded Rollout (each scenario runs in a namespace of its own, recorded
	// as Namespace); App is the Argo CD Application (and its tracking label).
	Namespace = "shop"
	Name      = "checkout"
	App       = "checkout"
	// tick is how far the clock moves between two reconciles.
	tick = 10 * time.Second
)

// epoch is the start of every scenario's clock, so recorded timestamps are stable across regenerations.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Env is what scenarios share: one API server program and one metrics server; for the topology Kargo
// users run, a second API server program, Kargo's control plane (NewTwoClusterEnv).
type Env struct {
	// Cluster holds the Rollout and its Rollouts controllers: with a ControlPlane, the workload cluster.
	Cluster *cluster.Cluster
	// ControlPlane, if set, holds the Kargo Project namespace of every World (Kargo's verification runs,
	// and the Rollouts analysis controller with the plugin that measures them); nil: one cluster.
	ControlPlane *cluster.Cluster
	Metrics      *MetricsServer
	n            int
}

// NewEnv starts both servers.
func NewEnv() (*Env, error) {
	QuietLogs()
	c, err := cluster.StartCluster()
	if err != nil {
		return nil, err
	}
	m, err := NewMetricsServer()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Env{Cluster: c, Metrics: m}, nil
}

// NewTwoClusterEnv starts the workload cluster (the Env's Cluster) and Kargo's control plane, each an API
// server program of its own with its options, and the metrics server.
func NewTwoClusterEnv(workload, controlPlane cluster.ClusterOptions) (*Env, error) {
	QuietLogs()
	wl, err := cluster.StartClusterWith(workload)
	if err != nil {
		return nil, fmt.Errorf("the workload cluster: %w", err)
	}
	cp, err := cluster.StartClusterWith(controlPlane)
	if err != nil {
		wl.Close()
		return nil, fmt.Errorf("the control plane: %w", err)
	}
	m, err := NewMetricsServer()
	if err != nil {
		wl.Close()
		cp.Close()
		return nil, err
	}
	return &Env{Cluster: wl, ControlPlane: cp, Metrics: m}, nil
}

// Close stops the servers.
func (e *Env) Close() {
	e.Metrics.Close()
	e.Cluster.Close()
	if e.ControlPlane != nil {
		e.ControlPlane.Close()
	}
}

// Options change how a World's controllers are set up.
type Options struct {
	// RolloutsConfig, if set, is the data of the argo-rollouts-config ConfigMap, created (or replaced) in
	// the controllers' namespace (POD_NAMESPACE, default argo-rollouts) before they start; the recorder
	// then loads it as the controller's main does (utils/config InitializeConfig, utils/plugin
	// DownloadPlugins), so metricProviderPlugins are downloaded and served to the analysis controller.
	RolloutsConfig map[string]string
	// AfterTick, if set, runs at the end of every Tick, after the frame is recorded: a proof that acts
	// on the frames as they happen (the plugin verification) hooks in here.
	AfterTick func(w *World) error
	// Delivery, if set, delivers the scenario's revisions instead of the recorder's own clients (the live
	// suite: a git repository synced by Argo CD, GitDelivery). The recorder's clients then also refuse
	// writes of the Rollout's status: only the controllers write it.
	Delivery Delivery
	// Epoch, if set, is where the World's clock starts. A plugin process runs on the real clock and
	// sets resumeAt from it, so the World must start near real time for the controller to resume it.
	Epoch time.Time
}

// World is one namespace of the cluster with one set of real Rollouts controllers.
type World struct {
	opts      Options
	env       *Env
	Namespace string
	ctrl      *cluster.Clients // the controllers' clients
	Recorder  *cluster.Clients // the recorder's clients (guarded)

	refusedMu sync.Mutex
	refused   int

	// the Rollouts informers are the controller main's: unstructured informers of a dynamic factory,
	// wrapped by utils/tolerantinformer (cmd/rollouts-controller/main.go)
	dynInf        dynamicinformer.DynamicSharedInformerFactory
	clusterDynInf dynamicinformer.DynamicSharedInformerFactory
	roInf         rolloutsInformers
	kubeInf       kubeinformers.SharedInformerFactory
	rq            *stepQueue
	aq            *stepQueue
	eq            *stepQueue
	cancel        context.CancelFunc
	workers       sync.WaitGroup
	// stopResolver stops the workloadRef resolver's own informers.
	stopResolver func()

	mu  sync.Mutex
	now time.Time

	Reconciles int
	Recording  bool
	frames     []Frame
	events     []string
	held       map[string]bool
	syncErrors []string
	logErrors  []string
	// firstSeen is the fake time at which the recorder first saw an object (by UID), recorded as its
	// creationTimestamp; fakeUIDs replaces the server's random UIDs.
	firstSeen map[types.UID]time.Time
	// rsReady remembers ReplicaSets' ready counts, for the frame events.
	rsReady map[string]string
	// arPhase remembers AnalysisRuns' phases and measurement counts, for the frame events.
	arState map[string]string

	// cp is the control plane's side (Env.ControlPlane), or nil.
	cp *controlPlane
}

type rolloutsInformers struct {
	rollouts                 rolloutinformers.RolloutInformer
	experiments              rolloutinformers.ExperimentInformer
	analysisRuns             rolloutinformers.AnalysisRunInformer
	analysisTemplates        rolloutinformers.AnalysisTemplateInformer
	clusterAnalysisTemplates rolloutinformers.ClusterAnalysisTemplateInformer
}

var logOnce sync.Once

func QuietLogs() {
	logOnce.Do(func() {
		log.SetLevel(log.ErrorLevel)
		log.SetOutput(io.Discard)
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	})
}

// NewWorld makes a namespace and starts the rollout, analysis and experiment controllers on it, as
// controller/controller.go NewManager wires them, with the recorder's step queues.
func (e *Env) NewWorld(opts Options) (*World, error) {
	e.n++
	w := &World{opts: opts, env: e, Namespace: fmt.Sprintf("s%02d", e.n), now: epoch, held: map[string]bool{},
		firstSeen: map[types.UID]time.Time{}, rsReady: map[string]string{}, arState: map[string]string{}}
	if !opts.Epoch.IsZero() {
		w.now = opts.Epoch
	}
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.AddHook(errorHook{w})
	timeutil.SetNowTimeFunc(w.Clock)
	e.Metrics.Reset()
	if err := e.Metrics.Up(); err != nil {
		return nil, err
	}

	var err error
	if w.ctrl, err = cluster.NewClients(e.Cluster.Config); err != nil {
		return nil, err
	}
	if w.Recorder, err = cluster.NewClients(cluster.GuardedConfig(e.Cluster.Config, &w.refused, &w.refusedMu, opts.Delivery != nil)); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := w.Recorder.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if e.ControlPlane != nil {
		if w.cp, err = newControlPlane(e.ControlPlane, "kargo-"+w.Namespace, &w.refused, &w.refusedMu, opts.Delivery != nil); err != nil {
			return nil, err
		}
	}
	if opts.RolloutsConfig != nil {
		// the Rollouts controller that loads the plugins is the one measuring Kargo's runs: the control
		// plane's when there is one (the configuration is the process's, so the workload's controllers
		// have it too: they run no plugin metric)
		clients := w.Recorder
		ctrl := w.ctrl
		if w.cp != nil {
			clients, ctrl = w.cp.Recorder, w.cp.ctrl
		}
		if err := loadRolloutsConfig(clients, ctrl, opts.RolloutsConfig); err != nil {
			return nil, err
		}
	}

	w.dynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.ctrl.Dynamic, 0, w.Namespace, nil)
	w.clusterDynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.ctrl.Dynamic, 0, metav1.NamespaceAll, nil)
	w.roInf = rolloutsInformers{
		rollouts:                 tolerantinformer.NewTolerantRolloutInformer(w.dynInf),
		experiments:              tolerantinformer.NewTolerantExperimentInformer(w.dynInf),
		analysisRuns:             tolerantinformer.NewTolerantAnalysisRunInformer(w.dynInf),
		analysisTemplates:        tolerantinformer.NewTolerantAnalysisTemplateInformer(w.dynInf),
		clusterAnalysisTemplates: tolerantinformer.NewTolerantClusterAnalysisTemplateInformer(w.clusterDynInf),
	}
	w.kubeInf = kubeinformers.NewSharedInformerFactoryWithOptions(w.ctrl.Kube, 0, kubeinformers.WithNamespace(w.Namespace))

	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	vsvcGVR := istioutil.GetIstioVirtualServiceGVR()
	destGVR := istioutil.GetIstioDestinationRuleGVR()
	istioClient := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		vsvcGVR: vsvcGVR.Resource + "List",
		destGVR: destGVR.Resource + "List",
	})
	istioInf := dynamicinformer.NewDynamicSharedInformerFactory(istioClient, 0)
	ingressWrapper, err := ingress.NewIngressWrapper(ingress.IngressModeNetworking, w.ctrl.Kube, w.kubeInf)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(e.Cluster.Config)
	if err != nil {
		return nil, err
	}
	metricsServer := metrics.NewMetricsServer(metrics.ServerConfig{
		Addr:               "127.0.0.1:0",
		K8SRequestProvider: &metrics.K8sRequestsCountProvider{},
	})
	recorder := record.NewFakeEventRecorder()
	w.rq, w.aq, w.eq = newStepQueue(), newStepQueue(), newStepQueue()
	rolloutsInformer := w.roInf.rollouts
	refResolver := rollout.NewInformerBasedWorkloadRefResolver(w.Namespace, w.ctrl.Dynamic, disco, w.ctrl.Argo, rolloutsInformer.Informer())
	rc := rollout.NewController(rolloutConfig(rollout.ControllerConfig{
		Namespace:                       w.Namespace,
		KubeClientSet:                   w.ctrl.Kube,
		ArgoProjClientset:               w.ctrl.Argo,
		DynamicClientSet:                w.ctrl.Dynamic,
		ExperimentInformer:              w.roInf.experiments,
		AnalysisRunInformer:             w.roInf.analysisRuns,
		AnalysisTemplateInformer:        w.roInf.analysisTemplates,
		ClusterAnalysisTemplateInformer: w.roInf.clusterAnalysisTemplates,
		ReplicaSetInformer:              w.kubeInf.Apps().V1().ReplicaSets(),
		ServicesInformer:                w.kubeInf.Core().V1().Services(),
		IngressWrapper:                  ingressWrapper,
		RolloutsInformer:                rolloutsInformer,
		SmiClientSet:                    smifake.NewSimpleClientset(),
		IstioPrimaryDynamicClient:       istioClient,
		IstioVirtualServiceInformer:     istioInf.ForResource(vsvcGVR).Informer(),
		IstioDestinationRuleInformer:    istioInf.ForResource(destGVR).Informer(),
		ResyncPeriod:                    0,
		RolloutWorkQueue:                w.rq,
		ServiceWorkQueue:                newStepQueue(),
		IngressWorkQueue:                newStepQueue(),
		MetricsServer:                   metricsServer,
		Recorder:                        recorder,
		RefResolver:                     refResolver,
	}))
	ac := newAnalysisController(w.kubeInf, w.ctrl, w.roInf.analysisRuns, w.aq, metricsServer, recorder)
	ec := newExperimentController(w, metricsServer, recorder)

	runCtx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.dynInf.Start(runCtx.Done())
	w.clusterDynInf.Start(runCtx.Done())
	w.kubeInf.Start(runCtx.Done())
	istioInf.Start(runCtx.Done())
	for _, f := range []dynamicinformer.DynamicSharedInformerFactory{w.dynInf, w.clusterDynInf} {
		for typ, ok := range f.WaitForCacheSync(runCtx.Done()) {
			if !ok {
				return nil, fmt.Errorf("informer %v did not sync", typ)
			}
		}
	}
	for typ, ok := range w.kubeInf.WaitForCacheSync(runCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer %v did not sync", typ)
		}
	}
	istioInf.WaitForCacheSync(runCtx.Done())
	w.stopResolver = refResolver.Stop
	runs := []func(context.Context, int) error{rc.Run, ac.Run, ec.Run}
	if w.cp != nil {
		cpRun, err := w.cp.start(runCtx, metricsServer, recorder)
		if err != nil {
			return nil, err
		}
		runs = append(runs, cpRun)
	}
	for _, run := range runs {
		run := run
		w.workers.Add(1)
		go func() {
			defer w.workers.Done()
			_ = run(runCtx, 1)
		}()
	}
	return w, nil
}

func loadRolloutsConfig(recorder, ctrl *cluster.Clients, data map[string]string) error {
	ctx := context.Background()
	ns := defaults.Namespace()
	_, err := recorder.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: ns}, Data: data}
	_ = recorder.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
	if _, err := recorder.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := rolloutsconfig.InitializeConfig(ctrl.Kube, defaults.DefaultRolloutsConfigMapName); err != nil {
		return fmt.Errorf("argo-rollouts-config: %w", err)
	}
	if err := plugin.DownloadPlugins(plugin.FileDownloaderImpl{}, ctrl.Kube); err != nil {
		return fmt.Errorf("argo-rollouts-config plugins: %w", err)
	}
	return nil
}

// Close stops the controllers and tells the cluster to hold no Pods of this namespace.
func (w *World) Close() {
	w.cancel()
	if w.stopResolver != nil {
		w.stopResolver()
	}
	queues := []*stepQueue{w.rq, w.aq, w.eq}
	if w.cp != nil {
		queues = append(queues, w.cp.queue)
	}
	for _, q := range queues {
		q.ShutDown()
	}
	done := make(chan struct{})
	go func() { w.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	for h := range w.held {
		_ = w.env.Cluster.Command("release " + w.Namespace + "/" + h)
	}
	// the next World's controllers start from a running cluster
	_ = w.env.Cluster.Command("resume")
}

func (w *World) Clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

type errorHook struct{ w *World }

func (errorHook) Levels() []log.Level {
	return []log.Level{log.ErrorLevel, log.FatalLevel, log.PanicLevel}
}

func (h errorHook) Fire(e *log.Entry) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	msg := e.Message
	if err, ok := e.Data[log.ErrorKey].(error); ok {
		msg += ": " + err.Error()
	}
	h.w.logErrors = append(h.w.logErrors, msg)
	return nil
}

// RevisionOf reads the rollout.argoproj.io/revision annotation.
func RevisionOf(ro *v1alpha1.Rollout) string { return ro.Annotations[annotations.RevisionAnnotation] }

// RolloutsVersion is the version of github.com/argoproj/argo-rollouts in this build, from the module
// directory (test binaries carry no dependency list in their build info).
func RolloutsVersion() string {
	dir := filepath.Base(cluster.RolloutsModuleDir())
	if i := strings.LastIndex(dir, "@"); i >= 0 {
		return dir[i+1:]
	}
	return "unknown"
}
