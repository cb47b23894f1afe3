// Package recorder drives Argo Rollouts v1.8.5's own rollout controller (github.com/argoproj/argo-rollouts
// rollout.Controller) against fake Kubernetes and Rollouts clientsets and records the Rollout object, and
// the AnalysisRuns it owns, after every reconcile. The timelines it writes (../testdata/timelines) are the
// input of the Argo CD and Kargo evaluation in package e2e of the main module.
//
// Only the rollout controller is real. What the rest of a cluster does between reconciles is emulated
// here, each in the smallest way the rollout controller can observe:
//   - the ReplicaSet controller and kubelet: a ReplicaSet's status follows its spec (pods ready);
//   - the analysis controller: AnalysisRun status is written by the scenario (Running, then a verdict),
//     and a run the rollout controller terminated (spec.terminate) ends Successful "Run Terminated", as
//     analysis/analysis.go assessRunStatus does for a terminated run whose metrics are within limits;
//   - the API server: creation timestamps, UIDs, resourceVersions with optimistic-concurrency conflicts,
//     and the metadata.generation bump when Argo CD changes the spec;
//   - Argo CD and users: applying a new revision, and the resume/retry actions of Argo CD's built-in
//     Rollout actions (argo-cd resource_customizations/argoproj.io/Rollout/actions).
package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned/fake"
	informers "github.com/argoproj/argo-rollouts/pkg/client/informers/externalversions"
	"github.com/argoproj/argo-rollouts/rollout"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	"github.com/argoproj/argo-rollouts/utils/ingress"
	istioutil "github.com/argoproj/argo-rollouts/utils/istio"
	"github.com/argoproj/argo-rollouts/utils/record"
	timeutil "github.com/argoproj/argo-rollouts/utils/time"
	smifake "github.com/servicemeshinterface/smi-sdk-go/pkg/gen/client/split/clientset/versioned/fake"
	log "github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

const (
	// Namespace and Name of every recorded Rollout; App is the Argo CD Application (and its tracking label).
	Namespace = "shop"
	Name      = "checkout"
	App       = "checkout"
	// tick is how far the clock moves between two reconciles.
	tick = 10 * time.Second
)

// epoch is the start of every scenario's clock, so recorded timestamps are stable across regenerations.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// World is one fake cluster with one real rollout controller.
type World struct {
	kube    *k8sfake.Clientset
	argo    *fake.Clientset
	roInf   informers.SharedInformerFactory
	kubeInf kubeinformers.SharedInformerFactory
	queue   *stepQueue
	cancel  context.CancelFunc
	workers sync.WaitGroup

	mu  sync.Mutex
	now time.Time

	reconciles int
	recording  bool
	frames     []Frame
	events     []string
	// holdPods names (by pod-template hash) ReplicaSets whose not-yet-ready pods never become ready.
	holdPods map[string]bool
	// Errors the controller returned from a reconcile (it then asks to be requeued with a rate limit).
	syncErrors []string
	logErrors  []string
	// resourceVersion is the fake API server's write counter.
	resourceVersion int
}

// Frame is the state after one reconcile that changed something (or the first state after Argo CD
// applied the new revision, before the controller saw it).
type Frame struct {
	Frame     int      `json:"frame"`
	Time      string   `json:"time"`
	Reconcile int      `json:"reconcile"`
	Events    []string `json:"events"`
	// Rollout and AnalysisRuns are the objects as stored in the (fake) API server.
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns,omitempty"`
}

// NewWorld builds the controller as rollout/controller_test.go newController does, except that the
// informer caches are refreshed from the clientsets before every reconcile (instead of being seeded once)
// and the rollout work queue is stepped by the recorder.
func NewWorld() (*World, error) {
	w := &World{now: epoch, holdPods: map[string]bool{}}
	// the controller logs through logrus' standard logger; keep its errors for the recording's verdict
	log.SetLevel(log.ErrorLevel)
	log.SetOutput(io.Discard)
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.AddHook(errorHook{w})
	// client-go's runtime.HandleError (klog) repeats the same errors on stderr
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	timeutil.SetNowTimeFunc(w.clock)

	w.kube = k8sfake.NewSimpleClientset()
	w.argo = fake.NewSimpleClientset()
	w.stampOnCreate(&w.kube.Fake)
	w.stampOnCreate(&w.argo.Fake)
	w.optimisticConcurrency(&w.kube.Fake, w.kube.Tracker())
	w.optimisticConcurrency(&w.argo.Fake, w.argo.Tracker())

	w.roInf = informers.NewSharedInformerFactory(w.argo, 0)
	w.kubeInf = kubeinformers.NewSharedInformerFactory(w.kube, 0)

	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	vsvcGVR := istioutil.GetIstioVirtualServiceGVR()
	destGVR := istioutil.GetIstioDestinationRuleGVR()
	tgbGVR := schema.GroupVersionResource{Group: "elbv2.k8s.aws", Version: "v1beta1", Resource: "targetgroupbindings"}
	dynamicClient := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		tgbGVR:  "TargetGroupBindingList",
		vsvcGVR: vsvcGVR.Resource + "List",
		destGVR: destGVR.Resource + "List",
	})
	dynInf := dynamicinformer.NewDynamicSharedInformerFactory(dynamicClient, 0)

	ingressWrapper, err := ingress.NewIngressWrapper(ingress.IngressModeNetworking, w.kube, w.kubeInf)
	if err != nil {
		return nil, err
	}
	w.queue = newStepQueue()
	ctrl := rollout.NewController(rollout.ControllerConfig{
		Namespace:                       metav1.NamespaceAll,
		KubeClientSet:                   w.kube,
		ArgoProjClientset:               w.argo,
		DynamicClientSet:                dynamicClient,
		ExperimentInformer:              w.roInf.Argoproj().V1alpha1().Experiments(),
		AnalysisRunInformer:             w.roInf.Argoproj().V1alpha1().AnalysisRuns(),
		AnalysisTemplateInformer:        w.roInf.Argoproj().V1alpha1().AnalysisTemplates(),
		ClusterAnalysisTemplateInformer: w.roInf.Argoproj().V1alpha1().ClusterAnalysisTemplates(),
		ReplicaSetInformer:              w.kubeInf.Apps().V1().ReplicaSets(),
		ServicesInformer:                w.kubeInf.Core().V1().Services(),
		IngressWrapper:                  ingressWrapper,
		RolloutsInformer:                w.roInf.Argoproj().V1alpha1().Rollouts(),
		SmiClientSet:                    smifake.NewSimpleClientset(),
		IstioPrimaryDynamicClient:       dynamicClient,
		IstioVirtualServiceInformer:     dynInf.ForResource(vsvcGVR).Informer(),
		IstioDestinationRuleInformer:    dynInf.ForResource(destGVR).Informer(),
		ResyncPeriod:                    0,
		RolloutWorkQueue:                w.queue,
		ServiceWorkQueue:                newStepQueue(),
		IngressWorkQueue:                newStepQueue(),
		MetricsServer: metrics.NewMetricsServer(metrics.ServerConfig{
			Addr:               "localhost:8090",
			K8SRequestProvider: &metrics.K8sRequestsCountProvider{},
		}),
		Recorder:    record.NewFakeEventRecorder(),
		RefResolver: noWorkloadRefs{},
	})
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	// Controller.Run is the exported way into the controller's sync handler: its worker takes keys from
	// the work queue we supplied, so each key we hand it is exactly one reconcile.
	w.workers.Add(1)
	go func() {
		defer w.workers.Done()
		_ = ctrl.Run(ctx, 1)
	}()
	return w, nil
}

// Close stops the controller's workers.
func (w *World) Close() {
	// cancel first: the worker loop (wait.Until in Controller.Run) must see the context done when
	// RunWorker returns on the closed queue, or it would start the worker again
	w.cancel()
	w.queue.ShutDown()
	done := make(chan struct{})
	go func() { w.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

func (w *World) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

// stampOnCreate does what the API server does on create: a creation timestamp and a UID (derived from the
// name, so that regenerated timelines are identical).
func (w *World) stampOnCreate(f *k8stesting.Fake) {
	f.PrependReactor("create", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj, ok := action.(k8stesting.CreateAction).GetObject().(metav1.Object)
		if ok {
			if ts := obj.GetCreationTimestamp(); ts.IsZero() {
				obj.SetCreationTimestamp(metav1.NewTime(w.clock()))
			}
			if obj.GetUID() == "" {
				sum := sha256.Sum256([]byte(action.GetResource().Resource + "/" + obj.GetNamespace() + "/" + obj.GetName()))
				obj.SetUID(types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])))
			}
			if obj.GetGeneration() == 0 {
				obj.SetGeneration(1)
			}
		}
		return false, nil, nil
	})
}

// optimisticConcurrency gives the fake API server resourceVersions: every write gets a new one, and an
// update that carries a resourceVersion other than the stored one fails with a Conflict, as the real API
// server does. client-go v0.29's fake object tracker does neither, and without it a controller that
// patches an object and then updates its stale in-memory copy silently undoes its own patch (it does so
// with the scale-down-deadline annotation of a ReplicaSet on a retried blue-green rollout), which a real
// cluster would refuse.
func (w *World) optimisticConcurrency(f *k8stesting.Fake, tracker k8stesting.ObjectTracker) {
	next := func() string {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.resourceVersion++
		return fmt.Sprint(w.resourceVersion)
	}
	f.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		switch a := action.(type) {
		case k8stesting.CreateActionImpl:
			if obj, ok := a.GetObject().(metav1.Object); ok {
				obj.SetResourceVersion(next())
			}
		case k8stesting.UpdateActionImpl:
			obj, ok := a.GetObject().(metav1.Object)
			if !ok {
				return false, nil, nil
			}
			stored, err := tracker.Get(a.GetResource(), a.GetNamespace(), obj.GetName())
			if err != nil {
				return false, nil, nil // the default reactor reports NotFound
			}
			if rv := obj.GetResourceVersion(); rv != "" && rv != stored.(metav1.Object).GetResourceVersion() {
				return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), obj.GetName(),
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
			obj.SetResourceVersion(next())
		case k8stesting.PatchActionImpl:
			handled, ret, err := k8stesting.ObjectReaction(tracker)(action)
			if err != nil || !handled {
				return handled, ret, err
			}
			ret.(metav1.Object).SetResourceVersion(next())
			if err := tracker.Update(a.GetResource(), ret, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, ret, nil
		}
		return false, nil, nil
	})
}

type errorHook struct{ w *World }

func (errorHook) Levels() []log.Level {
	return []log.Level{log.ErrorLevel, log.FatalLevel, log.PanicLevel}
}

func (h errorHook) Fire(e *log.Entry) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	h.w.logErrors = append(h.w.logErrors, e.Message)
	return nil
}

type noWorkloadRefs struct{}

// Resolve is a no-op: the recorded Rollouts carry their pod template inline (no spec.workloadRef).
func (noWorkloadRefs) Resolve(*v1alpha1.Rollout) error { return nil }

// refreshCaches replaces the contents of every informer cache with what the clientsets hold, so the
// controller's listers see exactly the state of the (fake) API server, as after its watches caught up.
func (w *World) refreshCaches() error {
	ctx := context.Background()
	ros, err := w.argo.ArgoprojV1alpha1().Rollouts(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ars, err := w.argo.ArgoprojV1alpha1().AnalysisRuns(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ats, err := w.argo.ArgoprojV1alpha1().AnalysisTemplates(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	rss, err := w.kube.AppsV1().ReplicaSets(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	svcs, err := w.kube.CoreV1().Services(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	replace := func(inf cache.SharedIndexInformer, items []any) error {
		return inf.GetIndexer().Replace(items, "")
	}
	var items []any
	for i := range ros.Items {
		items = append(items, &ros.Items[i])
	}
	if err := replace(w.roInf.Argoproj().V1alpha1().Rollouts().Informer(), items); err != nil {
		return err
	}
	items = nil
	for i := range ars.Items {
		items = append(items, &ars.Items[i])
	}
	if err := replace(w.roInf.Argoproj().V1alpha1().AnalysisRuns().Informer(), items); err != nil {
		return err
	}
	items = nil
	for i := range ats.Items {
		items = append(items, &ats.Items[i])
	}
	if err := replace(w.roInf.Argoproj().V1alpha1().AnalysisTemplates().Informer(), items); err != nil {
		return err
	}
	items = nil
	for i := range rss.Items {
		items = append(items, &rss.Items[i])
	}
	if err := replace(w.kubeInf.Apps().V1().ReplicaSets().Informer(), items); err != nil {
		return err
	}
	items = nil
	for i := range svcs.Items {
		items = append(items, &svcs.Items[i])
	}
	return replace(w.kubeInf.Core().V1().Services().Informer(), items)
}

// Create stores objects as a user or Argo CD would apply them.
func (w *World) Create(objs ...runtime.Object) error {
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1alpha1.Rollout:
			_, err = w.argo.ArgoprojV1alpha1().Rollouts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *v1alpha1.AnalysisTemplate:
			_, err = w.argo.ArgoprojV1alpha1().AnalysisTemplates(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = w.kube.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("cannot create %T", o)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Rollout is the Rollout as stored.
func (w *World) Rollout() *v1alpha1.Rollout {
	ro, err := w.argo.ArgoprojV1alpha1().Rollouts(Namespace).Get(context.Background(), Name, metav1.GetOptions{})
	if err != nil {
		panic(err)
	}
	return ro
}

// AnalysisRuns are the runs in the namespace, sorted by creation then name.
func (w *World) AnalysisRuns() []v1alpha1.AnalysisRun {
	list, err := w.argo.ArgoprojV1alpha1().AnalysisRuns(Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(err)
	}
	runs := list.Items
	sort.Slice(runs, func(i, j int) bool {
		ti, tj := runs[i].CreationTimestamp.Time, runs[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return runs[i].Name < runs[j].Name
	})
	return runs
}

// ReplicaSets owned by the Rollout, sorted by name.
func (w *World) ReplicaSets() []appsv1.ReplicaSet {
	list, err := w.kube.AppsV1().ReplicaSets(Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(err)
	}
	rss := list.Items
	sort.Slice(rss, func(i, j int) bool { return rss[i].Name < rss[j].Name })
	return rss
}

// Event notes something the world did before the next reconcile; it lands in the next recorded frame.
func (w *World) Event(format string, args ...any) {
	w.events = append(w.events, fmt.Sprintf(format, args...))
}

// UpdateSpec applies a change to the Rollout spec as `kubectl apply` by Argo CD would: the API server
// bumps metadata.generation, the status is untouched.
func (w *World) UpdateSpec(event string, mutate func(*v1alpha1.Rollout)) error {
	ro := w.Rollout()
	before := ro.Spec.DeepCopy()
	mutate(ro)
	if !reflect.DeepEqual(*before, ro.Spec) {
		ro.Generation++
	}
	if _, err := w.argo.ArgoprojV1alpha1().Rollouts(Namespace).Update(context.Background(), ro, metav1.UpdateOptions{}); err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// PatchStatus applies a JSON merge patch to the Rollout's status subresource (an Argo CD resource action
// or a kubectl argo rollouts command).
func (w *World) PatchStatus(event, patch string) error {
	_, err := w.argo.ArgoprojV1alpha1().Rollouts(Namespace).Patch(context.Background(), Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// SetAnalysisRunStatus writes an AnalysisRun's status as the analysis controller would.
func (w *World) SetAnalysisRunStatus(name string, status v1alpha1.AnalysisRunStatus, event string) error {
	ctx := context.Background()
	ar, err := w.argo.ArgoprojV1alpha1().AnalysisRuns(Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ar.Status = status
	if _, err := w.argo.ArgoprojV1alpha1().AnalysisRuns(Namespace).UpdateStatus(ctx, ar, metav1.UpdateOptions{}); err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// HoldPods stops (or lets again) the not-yet-ready pods of the ReplicaSet with the given pod-template hash
// from becoming ready; pods already ready stay ready.
func (w *World) HoldPods(podHash string, hold bool) {
	w.holdPods[podHash] = hold
}

// emulate is what the rest of the cluster does between two reconciles.
func (w *World) emulate() error {
	ctx := context.Background()
	// ReplicaSet controller + kubelet: every pod of every ReplicaSet becomes ready and available.
	for _, rs := range w.ReplicaSets() {
		want := int32(0)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		ready := want
		if w.holdPods[rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]] && rs.Status.ReadyReplicas < want {
			// pods that are ready stay ready; new ones never become ready
			ready = rs.Status.ReadyReplicas
		}
		st := rs.Status
		if st.Replicas == want && st.ReadyReplicas == ready && st.AvailableReplicas == ready && st.ObservedGeneration == rs.Generation {
			continue
		}
		rs := rs.DeepCopy()
		rs.Status.Replicas = want
		rs.Status.FullyLabeledReplicas = want
		rs.Status.ReadyReplicas = ready
		rs.Status.AvailableReplicas = ready
		rs.Status.ObservedGeneration = rs.Generation
		if _, err := w.kube.AppsV1().ReplicaSets(Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{}); err != nil {
			return err
		}
		if w.recording && (st.Replicas != want || st.ReadyReplicas != ready) {
			w.Event("ReplicaSet %s: %d/%d pods ready", rs.Name, ready, want)
		}
	}
	// Analysis controller: a run the rollout controller terminated ends once its in-flight measurements
	// are cancelled; with every metric within limits it is Successful "Run Terminated".
	for _, ar := range w.AnalysisRuns() {
		if ar.Spec.Terminate && !ar.Status.Phase.Completed() {
			st := ar.Status.DeepCopy()
			st.Phase = v1alpha1.AnalysisPhaseSuccessful
			st.Message = "Run Terminated"
			completed := metav1.NewTime(w.clock())
			st.CompletedAt = &completed
			for i := range st.MetricResults {
				if !st.MetricResults[i].Phase.Completed() {
					st.MetricResults[i].Phase = v1alpha1.AnalysisPhaseSuccessful
					st.MetricResults[i].Message = "Metric Terminated"
				}
			}
			if err := w.SetAnalysisRunStatus(ar.Name, *st, fmt.Sprintf("AnalysisRun %s terminated by the rollout controller: Successful (Run Terminated)", ar.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Tick advances the clock, lets the world move, runs one reconcile and records the result if anything
// changed. The action runs after the clock moved and before the emulated cluster.
func (w *World) Tick(action func() error) error {
	w.mu.Lock()
	w.now = w.now.Add(tick)
	w.mu.Unlock()
	if action != nil {
		if err := action(); err != nil {
			return err
		}
	}
	if err := w.emulate(); err != nil {
		return err
	}
	if err := w.refreshCaches(); err != nil {
		return err
	}
	w.reconciles++
	if err := w.queue.reconcile(Namespace + "/" + Name); err != nil {
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
	w.logErrors = nil
	w.mu.Unlock()
	if len(other) > 0 {
		w.syncErrors = append(w.syncErrors, fmt.Sprintf("reconcile %d: %s", w.reconciles, strings.Join(other, "; ")))
	}
	if len(conflicts) > 0 && w.recording {
		// a normal outcome against a real API server too: the controller retries the key
		w.Event("rollout controller reconcile failed on a write conflict (%s)", conflicts[0])
	}
	return w.record()
}

// StartRecording records the current state as frame 0 (Argo CD's view right after it applied the new
// revision, before the controller saw it). Earlier ticks (the initial deployment) are not recorded.
func (w *World) StartRecording() error {
	w.recording = true
	w.reconciles = 0
	return w.record()
}

func (w *World) record() error {
	if !w.recording {
		w.events = nil
		return nil
	}
	ro, err := toMap(w.Rollout(), "Rollout")
	if err != nil {
		return err
	}
	var ars []map[string]any
	for _, ar := range w.AnalysisRuns() {
		m, err := toMap(&ar, "AnalysisRun")
		if err != nil {
			return err
		}
		ars = append(ars, m)
	}
	if n := len(w.frames); n > 0 && len(w.events) == 0 {
		last := w.frames[n-1]
		if reflect.DeepEqual(last.Rollout, ro) && reflect.DeepEqual(last.AnalysisRuns, ars) {
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
		Time:         w.clock().UTC().Format(time.RFC3339),
		Reconcile:    w.reconciles,
		Events:       events,
		Rollout:      ro,
		AnalysisRuns: ars,
	})
	w.events = nil
	return nil
}

// Frames recorded so far.
func (w *World) Frames() []Frame { return w.frames }

// SyncErrors the controller returned.
func (w *World) SyncErrors() []string { return w.syncErrors }

// toMap turns a typed object into the JSON-shaped map Argo CD would read from the API server (with
// apiVersion and kind, which typed clients leave empty).
func toMap(obj runtime.Object, kind string) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	m["kind"] = kind
	if md, ok := m["metadata"].(map[string]any); ok {
		// resourceVersion changes with every write, whatever was written; Argo CD's health ignores it
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	return m, nil
}

// RevisionOf reads the rollout.argoproj.io/revision annotation.
func RevisionOf(ro *v1alpha1.Rollout) string { return ro.Annotations[annotations.RevisionAnnotation] }

// HasPrefixAR reports whether a run with that name (or a collision-counter successor) exists.
func (w *World) HasPrefixAR(base string) bool {
	for _, ar := range w.AnalysisRuns() {
		if ar.Name == base || strings.HasPrefix(ar.Name, base+".") {
			return true
		}
	}
	return false
}
