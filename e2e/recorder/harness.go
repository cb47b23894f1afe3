// Package recorder runs Argo Rollouts' own rollout, analysis and experiment controllers (packages
// rollout, analysis and experiments of github.com/argoproj/argo-rollouts, at the version of the module
// that builds it) against a real Kubernetes API server, and records the Rollout, its AnalysisRuns and
// its Experiments after every reconcile. The timelines it writes (../testdata/timelines/<version>) are
// the input of the Argo CD and Kargo evaluation in package e2e of the main module.
//
// What is real: kube-apiserver v1.34.5 with etcd (validation against the Rollouts CRDs of the module
// built against, status subresources, resourceVersions, generations, owner references), Kubernetes'
// ReplicaSet controller (Pods and ReplicaSet status), and the three Rollouts controllers with real
// clientsets and informers. The analysis is measured by the analysis controller through its `web` and
// `prometheus` providers, against a server on 127.0.0.1 that the scenario scripts.
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
package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
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

// Env is what scenarios share: one API server program and one metrics server.
type Env struct {
	Cluster *Cluster
	Metrics *MetricsServer
	n       int
}

// NewEnv starts both servers.
func NewEnv() (*Env, error) {
	quietLogs()
	c, err := StartCluster()
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

// Close stops both servers.
func (e *Env) Close() {
	e.Metrics.Close()
	e.Cluster.Close()
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
	// Epoch, if set, is where the World's clock starts. A plugin process runs on the real clock and
	// sets resumeAt from it, so the World must start near real time for the controller to resume it.
	Epoch time.Time
}

// World is one namespace of the cluster with one set of real Rollouts controllers.
type World struct {
	opts Options
	env  *Env
	ns   string
	ctrl *Clients // the controllers' clients
	c    *Clients // the recorder's clients (guarded)

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

	reconciles int
	recording  bool
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
}

type rolloutsInformers struct {
	rollouts                 rolloutinformers.RolloutInformer
	experiments              rolloutinformers.ExperimentInformer
	analysisRuns             rolloutinformers.AnalysisRunInformer
	analysisTemplates        rolloutinformers.AnalysisTemplateInformer
	clusterAnalysisTemplates rolloutinformers.ClusterAnalysisTemplateInformer
}

// Frame is the state after one reconcile that changed something (or the first state after Argo CD
// applied the new revision, before the controller saw it).
type Frame struct {
	Frame     int      `json:"frame"`
	Time      string   `json:"time"`
	Reconcile int      `json:"reconcile"`
	Events    []string `json:"events"`
	// Rollout, AnalysisRuns and Experiments are the objects as stored in the API server (normalised, see
	// normalise).
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns,omitempty"`
	Experiments  []map[string]any `json:"experiments,omitempty"`
}

var logOnce sync.Once

func quietLogs() {
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
	w := &World{opts: opts, env: e, ns: fmt.Sprintf("s%02d", e.n), now: epoch, held: map[string]bool{},
		firstSeen: map[types.UID]time.Time{}, rsReady: map[string]string{}, arState: map[string]string{}}
	if !opts.Epoch.IsZero() {
		w.now = opts.Epoch
	}
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.AddHook(errorHook{w})
	timeutil.SetNowTimeFunc(w.clock)
	e.Metrics.Reset()
	if err := e.Metrics.Up(); err != nil {
		return nil, err
	}

	var err error
	if w.ctrl, err = newClients(e.Cluster.Config); err != nil {
		return nil, err
	}
	if w.c, err = newClients(guardedConfig(e.Cluster.Config, &w.refused, &w.refusedMu)); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := w.c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if opts.RolloutsConfig != nil {
		if err := w.loadRolloutsConfig(opts.RolloutsConfig); err != nil {
			return nil, err
		}
	}

	w.dynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.ctrl.Dynamic, 0, w.ns, nil)
	w.clusterDynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.ctrl.Dynamic, 0, metav1.NamespaceAll, nil)
	w.roInf = rolloutsInformers{
		rollouts:                 tolerantinformer.NewTolerantRolloutInformer(w.dynInf),
		experiments:              tolerantinformer.NewTolerantExperimentInformer(w.dynInf),
		analysisRuns:             tolerantinformer.NewTolerantAnalysisRunInformer(w.dynInf),
		analysisTemplates:        tolerantinformer.NewTolerantAnalysisTemplateInformer(w.dynInf),
		clusterAnalysisTemplates: tolerantinformer.NewTolerantClusterAnalysisTemplateInformer(w.clusterDynInf),
	}
	w.kubeInf = kubeinformers.NewSharedInformerFactoryWithOptions(w.ctrl.Kube, 0, kubeinformers.WithNamespace(w.ns))

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
	refResolver := rollout.NewInformerBasedWorkloadRefResolver(w.ns, w.ctrl.Dynamic, disco, w.ctrl.Argo, rolloutsInformer.Informer())
	rc := rollout.NewController(rolloutConfig(rollout.ControllerConfig{
		Namespace:                       w.ns,
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
	ac := newAnalysisController(w, metricsServer, recorder)
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
	for _, run := range []func(context.Context, int) error{rc.Run, ac.Run, ec.Run} {
		run := run
		w.workers.Add(1)
		go func() {
			defer w.workers.Done()
			_ = run(runCtx, 1)
		}()
	}
	return w, nil
}

func (w *World) loadRolloutsConfig(data map[string]string) error {
	ctx := context.Background()
	ns := defaults.Namespace()
	_, err := w.c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: ns}, Data: data}
	_ = w.c.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
	if _, err := w.c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := rolloutsconfig.InitializeConfig(w.ctrl.Kube, defaults.DefaultRolloutsConfigMapName); err != nil {
		return fmt.Errorf("argo-rollouts-config: %w", err)
	}
	if err := plugin.DownloadPlugins(plugin.FileDownloaderImpl{}, w.ctrl.Kube); err != nil {
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
	for _, q := range []*stepQueue{w.rq, w.aq, w.eq} {
		q.ShutDown()
	}
	done := make(chan struct{})
	go func() { w.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	for h := range w.held {
		_ = w.env.Cluster.command("release " + w.ns + "/" + h)
	}
	// the next World's controllers start from a running cluster
	_ = w.env.Cluster.command("resume")
}

func (w *World) clock() time.Time {
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

// Create stores objects as a user or Argo CD would apply them.
func (w *World) Create(objs ...runtime.Object) error {
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1alpha1.Rollout:
			o.Namespace = w.ns
			if o.Spec.WorkloadRef == nil {
				_, err = w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Create(ctx, o, metav1.CreateOptions{})
				break
			}
			// the typed spec.template is a struct, always serialised, and the CRD requires containers in
			// it when present: a workloadRef Rollout is applied without it, as its manifest would be
			var u map[string]any
			if u, err = runtime.DefaultUnstructuredConverter.ToUnstructured(o); err != nil {
				break
			}
			unstructured.RemoveNestedField(u, "spec", "template")
			unstructured.RemoveNestedField(u, "status")
			u["apiVersion"], u["kind"] = v1alpha1.SchemeGroupVersion.String(), "Rollout"
			_, err = w.c.Dynamic.Resource(v1alpha1.RolloutGVR).Namespace(w.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
		case *v1alpha1.AnalysisTemplate:
			o.Namespace = w.ns
			_, err = w.c.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.ns).Create(ctx, o, metav1.CreateOptions{})
		case *v1alpha1.AnalysisRun:
			o.Namespace = w.ns
			_, err = w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			o.Namespace = w.ns
			_, err = w.c.Kube.CoreV1().Services(w.ns).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			o.Namespace = w.ns
			_, err = w.c.Kube.AppsV1().Deployments(w.ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("cannot create %T", o)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Clients the recorder acts with (guarded: no AnalysisRun or Experiment writes), and the namespace.
func (w *World) Clients() *Clients { return w.c }
func (w *World) Namespace() string { return w.ns }

// Metrics is the scripted metrics server.
func (w *World) Metrics() *MetricsServer { return w.env.Metrics }

// Rollout is the Rollout as stored.
func (w *World) Rollout() *v1alpha1.Rollout {
	ro, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Get(context.Background(), Name, metav1.GetOptions{})
	if err != nil {
		panic(scriptError{err})
	}
	return ro
}

// AnalysisRuns are the runs in the namespace, sorted by name (creation times of the server have a
// resolution of a second).
func (w *World) AnalysisRuns() []v1alpha1.AnalysisRun {
	list, err := w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(scriptError{err})
	}
	runs := list.Items
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	return runs
}

// Experiments in the namespace, sorted by name.
func (w *World) Experiments() []v1alpha1.Experiment {
	list, err := w.c.Argo.ArgoprojV1alpha1().Experiments(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(scriptError{err})
	}
	exps := list.Items
	sort.Slice(exps, func(i, j int) bool { return exps[i].Name < exps[j].Name })
	return exps
}

// ReplicaSets in the namespace, sorted by name.
func (w *World) ReplicaSets() []appsv1.ReplicaSet {
	list, err := w.c.Kube.AppsV1().ReplicaSets(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(scriptError{err})
	}
	rss := list.Items
	sort.Slice(rss, func(i, j int) bool { return rss[i].Name < rss[j].Name })
	return rss
}

// Event notes something the world did before the next reconcile; it lands in the next recorded frame.
func (w *World) Event(format string, args ...any) {
	w.events = append(w.events, fmt.Sprintf(format, args...))
}

// UpdateSpec applies a change to the Rollout spec as Argo CD's apply would; the API server bumps
// metadata.generation.
func (w *World) UpdateSpec(event string, mutate func(*v1alpha1.Rollout)) error {
	for attempt := 0; ; attempt++ {
		ro := w.Rollout()
		mutate(ro)
		_, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Update(context.Background(), ro, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return err
		}
		w.Event("%s", event)
		return nil
	}
}

// PatchStatus applies a JSON merge patch to the Rollout's status subresource (an Argo CD resource action
// or a kubectl argo rollouts command).
func (w *World) PatchStatus(event, patch string) error {
	_, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Patch(context.Background(), Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// Patch applies a JSON merge patch to the Rollout itself.
func (w *World) Patch(event, patch string) error {
	_, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Patch(context.Background(), Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// HoldPods stops (or lets again) the not-yet-ready Pods with the given pod-template hash, or running the
// given image, from becoming Ready; Pods already Ready stay Ready.
func (w *World) HoldPods(podHash string, hold bool) error {
	cmd := "release"
	if hold {
		cmd = "hold"
		w.held[podHash] = true
	} else {
		delete(w.held, podHash)
	}
	return w.env.Cluster.command(cmd + " " + w.ns + "/" + podHash)
}

// settle lets the cluster act until it is quiescent (every ReplicaSet's status describes its Pods, and
// every Pod that is not held is Ready), pauses it, and waits until the controllers' informers hold
// exactly what the API server holds.
func (w *World) settle() error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := w.env.Cluster.command("resume"); err != nil {
			return err
		}
		if err := w.waitQuiescent(deadline); err != nil {
			return err
		}
		if err := w.env.Cluster.command("pause"); err != nil {
			return err
		}
		// a write sent just before the pause may still have landed
		ok, _, err := w.quiescent()
		if err != nil {
			return err
		}
		if ok {
			break
		}
	}
	return w.waitCaches(deadline)
}

func (w *World) waitQuiescent(deadline time.Time) error {
	for {
		ok, why, err := w.quiescent()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster did not settle: %s", why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *World) quiescent() (bool, string, error) {
	ctx := context.Background()
	rss, err := w.c.Kube.AppsV1().ReplicaSets(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err
	}
	pods, err := w.c.Kube.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err
	}
	owned := map[types.UID][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			return false, "pod " + p.Name + " terminating", nil
		}
		if !podReady(p) && !w.podHeld(p) {
			return false, "pod " + p.Name + " not ready", nil
		}
		if ref := metav1.GetControllerOf(p); ref != nil {
			owned[ref.UID] = append(owned[ref.UID], p)
		}
	}
	for _, rs := range rss.Items {
		want := int32(0)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		ps := owned[rs.UID]
		ready := int32(0)
		for _, p := range ps {
			if podReady(p) {
				ready++
			}
		}
		st := rs.Status
		if int32(len(ps)) != want || st.Replicas != want || st.ReadyReplicas != ready || st.AvailableReplicas != ready ||
			st.ObservedGeneration != rs.Generation {
			return false, fmt.Sprintf("replicaset %s: %d pods, status %d/%d ready, want %d", rs.Name, len(ps), st.ReadyReplicas, st.Replicas, want), nil
		}
	}
	return true, "", nil
}

// podHeld mirrors the API server program's rule: held by pod-template hash or by image.
func (w *World) podHeld(p *corev1.Pod) bool {
	if w.held[p.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]] {
		return true
	}
	return len(p.Spec.Containers) > 0 && w.held[p.Spec.Containers[0].Image]
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitCaches waits until every informer the controllers read holds the server's objects at the server's
// resourceVersions.
func (w *World) waitCaches(deadline time.Time) error {
	ctx := context.Background()
	type source struct {
		name string
		inf  cache.SharedIndexInformer
		list func() ([]metav1.Object, error)
	}
	v1 := w.roInf
	sources := []source{
		{"rollouts", v1.rollouts.Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"analysisruns", v1.analysisRuns.Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"analysistemplates", v1.analysisTemplates.Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"experiments", v1.experiments.Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Argo.ArgoprojV1alpha1().Experiments(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"replicasets", w.kubeInf.Apps().V1().ReplicaSets().Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Kube.AppsV1().ReplicaSets(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"services", w.kubeInf.Core().V1().Services().Informer(), func() ([]metav1.Object, error) {
			l, err := w.c.Kube.CoreV1().Services(w.ns).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
	}
	for _, s := range sources {
		for {
			items, err := s.list()
			if err != nil {
				return err
			}
			want := map[string]string{}
			for _, o := range items {
				want[o.GetName()] = o.GetResourceVersion()
			}
			got := map[string]string{}
			for _, o := range s.inf.GetStore().List() {
				if m, ok := o.(metav1.Object); ok {
					got[m.GetName()] = m.GetResourceVersion()
				}
			}
			if reflect.DeepEqual(want, got) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the %s informer did not catch up: has %v, server %v", s.name, got, want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// objects lists the items of a typed list.
func objects(list runtime.Object, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	var out []metav1.Object
	for i := 0; i < items.Len(); i++ {
		out = append(out, items.Index(i).Addr().Interface().(metav1.Object))
	}
	return out, nil
}

// Tick advances the clock, runs the action, and then one reconcile of each controller in turn on a
// settled cluster: every AnalysisRun (analysis controller), every Experiment (experiment controller),
// the Rollout (rollout controller). It records a frame if anything changed.
func (w *World) Tick(action func() error) error {
	w.mu.Lock()
	w.now = w.now.Add(tick)
	w.mu.Unlock()
	if action != nil {
		if err := action(); err != nil {
			return err
		}
	}
	if err := w.settle(); err != nil {
		return err
	}
	w.noteReplicaSets()
	w.reconciles++
	for _, ar := range w.AnalysisRuns() {
		if err := w.aq.reconcile(w.ns + "/" + ar.Name); err != nil {
			return err
		}
	}
	if err := w.settle(); err != nil {
		return err
	}
	w.noteAnalysisRuns()
	exps := w.Experiments()
	for _, ex := range exps {
		if err := w.eq.reconcile(w.ns + "/" + ex.Name); err != nil {
			return err
		}
	}
	if len(exps) > 0 {
		if err := w.settle(); err != nil {
			return err
		}
	}
	if err := w.rq.reconcile(w.ns + "/" + Name); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	w.mu.Lock()
	var conflicts, other []string
	for _, e := range w.logErrors {
		if strings.Contains(e, "the object has been modified") {
			conflicts = append(conflicts, e)
		} else {
			other = append(other, e)
		}
	}
	if len(conflicts) > 0 {
		// syncHandler logs this too when newRolloutContext failed on the conflict
		var rest []string
		for _, e := range other {
			if e != "newRolloutContext returned nil" {
				rest = append(rest, e)
			}
		}
		other = rest
	}
	w.logErrors = nil
	w.mu.Unlock()
	if len(other) > 0 {
		w.syncErrors = append(w.syncErrors, fmt.Sprintf("reconcile %d: %s", w.reconciles, strings.Join(other, "; ")))
	}
	if len(conflicts) > 0 && w.recording {
		w.Event("a controller's write failed on a conflict (%s)", conflicts[0])
	}
	if err := w.record(); err != nil {
		return err
	}
	if w.opts.AfterTick != nil {
		return w.opts.AfterTick(w)
	}
	return nil
}

// noteReplicaSets turns changes of ReplicaSets' ready Pods into frame events.
func (w *World) noteReplicaSets() {
	for _, rs := range w.ReplicaSets() {
		want := int32(0)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		s := fmt.Sprintf("%d/%d", rs.Status.ReadyReplicas, want)
		if w.rsReady[rs.Name] != s && w.recording {
			w.Event("ReplicaSet %s: %s pods ready", rs.Name, s)
		}
		w.rsReady[rs.Name] = s
	}
}

// noteAnalysisRuns turns what the analysis controller did into frame events.
func (w *World) noteAnalysisRuns() {
	for _, ar := range w.AnalysisRuns() {
		var ms []string
		results := append([]v1alpha1.MetricResult(nil), ar.Status.MetricResults...)
		sort.SliceStable(results, func(i, j int) bool { return results[i].Name < results[j].Name })
		for _, mr := range results {
			last := ""
			if n := len(mr.Measurements); n > 0 {
				m := mr.Measurements[n-1]
				last = fmt.Sprintf(", last %s %s", m.Phase, strings.ReplaceAll(m.Value+m.Message, w.env.Metrics.Addr(), Host))
			}
			ms = append(ms, fmt.Sprintf("%s %s: %d measured, %d errors%s", mr.Name, mr.Phase, mr.Count, mr.Error, last))
		}
		s := fmt.Sprintf("AnalysisRun %s %s", ar.Name, ar.Status.Phase)
		if ar.Status.Message != "" {
			s += fmt.Sprintf(" (%s)", strings.ReplaceAll(ar.Status.Message, w.env.Metrics.Addr(), Host))
		}
		if len(ms) > 0 {
			s += "; " + strings.Join(ms, "; ")
		}
		if w.arState[ar.Name] != s && w.recording && ar.Status.Phase != "" {
			w.Event("analysis controller: %s", s)
		}
		w.arState[ar.Name] = s
	}
}

// StartRecording records the current state as frame 0 (Argo CD's view right after it applied the new
// revision, before the controller saw it). Earlier ticks (the initial deployment) are not recorded.
func (w *World) StartRecording() error {
	w.recording = true
	w.reconciles = 0
	return w.record()
}

func (w *World) record() error {
	// first sightings are noted whether recording or not, so creation times are the same either way
	ro := w.Rollout()
	ars := w.AnalysisRuns()
	exps := w.Experiments()
	now := w.clock()
	for _, o := range []metav1.Object{ro} {
		w.see(o, now)
	}
	for i := range ars {
		w.see(&ars[i], now)
	}
	for i := range exps {
		w.see(&exps[i], now)
	}
	if !w.recording {
		w.events = nil
		return nil
	}
	rom, err := w.normalise(ro, "Rollout")
	if err != nil {
		return err
	}
	var arms, exms []map[string]any
	for i := range ars {
		m, err := w.normalise(&ars[i], "AnalysisRun")
		if err != nil {
			return err
		}
		arms = append(arms, m)
	}
	for i := range exps {
		m, err := w.normalise(&exps[i], "Experiment")
		if err != nil {
			return err
		}
		exms = append(exms, m)
	}
	if n := len(w.frames); n > 0 && len(w.events) == 0 {
		last := w.frames[n-1]
		if reflect.DeepEqual(last.Rollout, rom) && reflect.DeepEqual(last.AnalysisRuns, arms) && reflect.DeepEqual(last.Experiments, exms) {
			// a reconcile that wrote nothing leaves Argo CD with the same objects: nothing to record
			return nil
		}
	}
	events := w.events
	if len(w.frames) > 0 {
		events = append(events, "rollout controller reconcile")
	}
	w.frames = append(w.frames, Frame{
		Frame:        len(w.frames),
		Time:         now.UTC().Format(time.RFC3339),
		Reconcile:    w.reconciles,
		Events:       events,
		Rollout:      rom,
		AnalysisRuns: arms,
		Experiments:  exms,
	})
	w.events = nil
	return nil
}

func (w *World) see(o metav1.Object, now time.Time) {
	if _, ok := w.firstSeen[o.GetUID()]; !ok {
		w.firstSeen[o.GetUID()] = now
	}
}

// fakeUID is a UID derived from kind and name, so regenerated timelines are identical.
func fakeUID(kind, name string) string {
	sum := sha256.Sum256([]byte(kind + "/" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// normalise turns a typed object into the JSON-shaped map Argo CD would read from the API server (with
// apiVersion and kind), minus what depends on the run rather than on the controllers: resourceVersion,
// managedFields, the wall-clock creationTimestamp (replaced by the fake time of first sighting), the
// random UIDs (derived from kind and name), the scenario's namespace (recorded as Namespace) and the
// metrics server's port (recorded as Host).
func (w *World) normalise(obj metav1.Object, kind string) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	raw = []byte(strings.ReplaceAll(string(raw), w.env.Metrics.Addr(), Host))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	m["kind"] = kind
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return nil, errors.New("no metadata")
	}
	delete(md, "resourceVersion")
	delete(md, "managedFields")
	md["namespace"] = Namespace
	md["uid"] = fakeUID(kind, obj.GetName())
	if t, ok := w.firstSeen[obj.GetUID()]; ok {
		md["creationTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	if st, ok := m["status"].(map[string]any); ok && kind == "AnalysisRun" {
		// the analysis controller measures a run's metrics in parallel goroutines and, on a run's first
		// measurements, appends their results in the order they finish: sorted by name here
		if mrs, ok := st["metricResults"].([]any); ok {
			sort.SliceStable(mrs, func(i, j int) bool {
				return fmt.Sprint(mrs[i].(map[string]any)["name"]) < fmt.Sprint(mrs[j].(map[string]any)["name"])
			})
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if ref, ok := r.(map[string]any); ok {
				ref["uid"] = fakeUID(fmt.Sprint(ref["kind"]), fmt.Sprint(ref["name"]))
			}
		}
	}
	return m, nil
}

// Frames recorded so far.
func (w *World) Frames() []Frame { return w.frames }

// SyncErrors the controllers logged.
func (w *World) SyncErrors() []string { return w.syncErrors }

// RefusedWrites is how many AnalysisRun/Experiment writes the guard refused to the recorder.
func (w *World) RefusedWrites() int {
	w.refusedMu.Lock()
	defer w.refusedMu.Unlock()
	return w.refused
}

// RevisionOf reads the rollout.argoproj.io/revision annotation.
func RevisionOf(ro *v1alpha1.Rollout) string { return ro.Annotations[annotations.RevisionAnnotation] }

// RolloutsVersion is the version of github.com/argoproj/argo-rollouts in this build, from the module
// directory (test binaries carry no dependency list in their build info).
func RolloutsVersion() string {
	dir := filepath.Base(RolloutsModuleDir())
	if i := strings.LastIndex(dir, "@"); i >= 0 {
		return dir[i+1:]
	}
	return "unknown"
}
