package harness

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Delivery is how a scenario's revisions reach the cluster when not by the recorder's own writes.
type Delivery interface {
	// Deploy delivers revision 1 (the AnalysisTemplates, Services and the Rollout) and returns once the
	// Rollout exists.
	Deploy(w *World, objs []runtime.Object) error
	// Release delivers revision 2, ro being the deployed Rollout with the release's changes, and returns
	// once it is applied; event names it in the next frame.
	Release(w *World, ro *v1alpha1.Rollout, event string) error
}

// SpecDelivery is a Delivery that also delivers a later change of the Rollout's spec (the live suite: the
// previous Freight promoted again, through git and Argo CD), applied to the Rollout as last delivered
// (the manifest, not the live object with the controllers' fields).
type SpecDelivery interface {
	Update(w *World, mutate func(*v1alpha1.Rollout), event string) error
}

// StageDelivery is a Delivery that also delivers what comes before a release in a Stage's history (the
// live suite's no-analysis cases): the Stage's first Freight as the release itself (DeployRelease, no
// revision before it), and an earlier Freight, unrecorded (Deliver, a change of the Rollout as last
// delivered).
type StageDelivery interface {
	DeployRelease(w *World, objs []runtime.Object, event string) error
	Deliver(w *World, mutate func(*v1alpha1.Rollout), event string) error
}

// Create stores objects as a user or Argo CD would apply them.
func (w *World) Create(objs ...runtime.Object) error {
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1alpha1.Rollout:
			o.Namespace = w.Namespace
			if o.Spec.WorkloadRef == nil {
				_, err = w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Create(ctx, o, metav1.CreateOptions{})
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
			_, err = w.Recorder.Dynamic.Resource(v1alpha1.RolloutGVR).Namespace(w.Namespace).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
		case *v1alpha1.AnalysisTemplate:
			o.Namespace = w.Namespace
			_, err = w.Recorder.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *v1alpha1.AnalysisRun:
			o.Namespace = w.Namespace
			_, err = w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			o.Namespace = w.Namespace
			_, err = w.Recorder.Kube.CoreV1().Services(w.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			o.Namespace = w.Namespace
			_, err = w.Recorder.Kube.AppsV1().Deployments(w.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("cannot create %T", o)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Metrics is the scripted metrics server.
func (w *World) Metrics() *MetricsServer { return w.env.Metrics }

// Rollout is the Rollout as stored.
func (w *World) Rollout() *v1alpha1.Rollout {
	ro, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Get(context.Background(), Name, metav1.GetOptions{})
	if err != nil {
		panic(ScriptError{err})
	}
	return ro
}

// AnalysisRuns are the runs in the namespace, sorted by name (creation times of the server have a
// resolution of a second).
func (w *World) AnalysisRuns() []v1alpha1.AnalysisRun {
	list, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(ScriptError{err})
	}
	runs := list.Items
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	return runs
}

// Experiments in the namespace, sorted by name.
func (w *World) Experiments() []v1alpha1.Experiment {
	list, err := w.Recorder.Argo.ArgoprojV1alpha1().Experiments(w.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(ScriptError{err})
	}
	exps := list.Items
	sort.Slice(exps, func(i, j int) bool { return exps[i].Name < exps[j].Name })
	return exps
}

// ReplicaSets in the namespace, sorted by name.
func (w *World) ReplicaSets() []appsv1.ReplicaSet {
	list, err := w.Recorder.Kube.AppsV1().ReplicaSets(w.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(ScriptError{err})
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
	if d, ok := w.opts.Delivery.(SpecDelivery); ok {
		return d.Update(w, mutate, event)
	}
	for attempt := 0; ; attempt++ {
		ro := w.Rollout()
		mutate(ro)
		_, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Update(context.Background(), ro, metav1.UpdateOptions{})
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
	_, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Patch(context.Background(), Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
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
	return w.env.Cluster.Command(cmd + " " + w.Namespace + "/" + podHash)
}

// ErrNoDelivery is returned by a live scenario that needs the recorder's own writes.
var ErrNoDelivery = errors.New("the scenario cannot be delivered through git")
