package harness

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// settle lets the cluster act until it is quiescent (every ReplicaSet's status describes its Pods, and
// every Pod that is not held is Ready), pauses it, and waits until the controllers' informers hold
// exactly what the API server holds.
func (w *World) settle() error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := w.env.Cluster.Command("resume"); err != nil {
			return err
		}
		if err := w.waitQuiescent(deadline); err != nil {
			return err
		}
		if err := w.env.Cluster.Command("pause"); err != nil {
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
	rss, err := w.Recorder.Kube.AppsV1().ReplicaSets(w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err
	}
	pods, err := w.Recorder.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{})
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
			l, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"analysisruns", v1.analysisRuns.Informer(), func() ([]metav1.Object, error) {
			l, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"analysistemplates", v1.analysisTemplates.Informer(), func() ([]metav1.Object, error) {
			l, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"experiments", v1.experiments.Informer(), func() ([]metav1.Object, error) {
			l, err := w.Recorder.Argo.ArgoprojV1alpha1().Experiments(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"replicasets", w.kubeInf.Apps().V1().ReplicaSets().Informer(), func() ([]metav1.Object, error) {
			l, err := w.Recorder.Kube.AppsV1().ReplicaSets(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
		{"services", w.kubeInf.Core().V1().Services().Informer(), func() ([]metav1.Object, error) {
			l, err := w.Recorder.Kube.CoreV1().Services(w.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}},
	}
	if w.cp != nil {
		sources = append(sources, source{"control plane analysisruns", w.cp.runs.Informer(), func() ([]metav1.Object, error) {
			l, err := w.cp.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.cp.Namespace).List(ctx, metav1.ListOptions{})
			return objects(l, err)
		}})
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
	w.Reconciles++
	for _, ar := range w.AnalysisRuns() {
		if err := w.aq.reconcile(w.Namespace + "/" + ar.Name); err != nil {
			return err
		}
	}
	if w.cp != nil {
		// Kargo's verification runs, by the control plane's analysis controller
		runs, err := w.cp.analysisRuns()
		if err != nil {
			return err
		}
		for _, ar := range runs {
			if err := w.cp.queue.reconcile(w.cp.Namespace + "/" + ar.Name); err != nil {
				return err
			}
		}
	}
	if err := w.settle(); err != nil {
		return err
	}
	w.noteAnalysisRuns()
	exps := w.Experiments()
	for _, ex := range exps {
		if err := w.eq.reconcile(w.Namespace + "/" + ex.Name); err != nil {
			return err
		}
	}
	if len(exps) > 0 {
		if err := w.settle(); err != nil {
			return err
		}
	}
	if err := w.rq.reconcile(w.Namespace + "/" + Name); err != nil {
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
		w.syncErrors = append(w.syncErrors, fmt.Sprintf("reconcile %d: %s", w.Reconciles, strings.Join(other, "; ")))
	}
	if len(conflicts) > 0 && w.Recording {
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
		if w.rsReady[rs.Name] != s && w.Recording {
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
		if w.arState[ar.Name] != s && w.Recording && ar.Status.Phase != "" {
			w.Event("analysis controller: %s", s)
		}
		w.arState[ar.Name] = s
	}
}
