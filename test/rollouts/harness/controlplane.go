package harness

import (
	"context"
	"fmt"
	"sync"

	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutinformers "github.com/argoproj/argo-rollouts/pkg/client/informers/externalversions/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/record"
	"github.com/argoproj/argo-rollouts/utils/tolerantinformer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// controlPlane is a World's side in Kargo's control plane (Env.ControlPlane): the Kargo Project's
// namespace, where Kargo's controller creates the verification runs, and the control plane's Rollouts
// analysis controller, which measures them (with the plugin: Options.RolloutsConfig is loaded there) and
// is stepped on every tick as the World's own controllers are. The Rollout, its runs and its controllers
// stay in the workload cluster (Env.Cluster).
type controlPlane struct {
	Namespace string
	ctrl      *cluster.Clients // the analysis controller's
	Recorder  *cluster.Clients // the recorder's (guarded as the World's)

	dynInf  dynamicinformer.DynamicSharedInformerFactory
	kubeInf kubeinformers.SharedInformerFactory
	runs    rolloutinformers.AnalysisRunInformer
	queue   *stepQueue
}

func newControlPlane(c *cluster.Cluster, namespace string, refused *int, mu *sync.Mutex, live bool) (*controlPlane, error) {
	cp := &controlPlane{Namespace: namespace, queue: newStepQueue()}
	var err error
	if cp.ctrl, err = cluster.NewClients(c.Config); err != nil {
		return nil, err
	}
	if cp.Recorder, err = cluster.NewClients(cluster.GuardedConfig(c.Config, refused, mu, live)); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cp.Recorder.Kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("the control plane's namespace %s: %w", namespace, err)
	}
	return cp, nil
}

// start starts the analysis controller's informers and returns its Run.
func (cp *controlPlane) start(ctx context.Context, ms *metrics.MetricsServer, rec record.EventRecorder) (func(context.Context, int) error, error) {
	cp.dynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(cp.ctrl.Dynamic, 0, cp.Namespace, nil)
	cp.kubeInf = kubeinformers.NewSharedInformerFactoryWithOptions(cp.ctrl.Kube, 0, kubeinformers.WithNamespace(cp.Namespace))
	cp.runs = tolerantinformer.NewTolerantAnalysisRunInformer(cp.dynInf)
	ac := newAnalysisController(cp.kubeInf, cp.ctrl, cp.runs, cp.queue, ms, rec)
	cp.dynInf.Start(ctx.Done())
	cp.kubeInf.Start(ctx.Done())
	for typ, ok := range cp.dynInf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("control plane informer %v did not sync", typ)
		}
	}
	for typ, ok := range cp.kubeInf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("control plane informer %v did not sync", typ)
		}
	}
	return ac.Run, nil
}

// analysisRuns lists the Project namespace's runs.
func (cp *controlPlane) analysisRuns() ([]v1alpha1.AnalysisRun, error) {
	l, err := cp.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(cp.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// ControlPlane is the recorder's clients of the cluster holding Kargo's Project (the control plane, or
// the World's own cluster), and ProjectNamespace that namespace (the World's own with one cluster).
func (w *World) ControlPlane() *cluster.Clients {
	if w.cp != nil {
		return w.cp.Recorder
	}
	return w.Recorder
}

func (w *World) ProjectNamespace() string {
	if w.cp != nil {
		return w.cp.Namespace
	}
	return w.Namespace
}
