package harness

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/experiments"
	rolloutinformers "github.com/argoproj/argo-rollouts/pkg/client/informers/externalversions/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/record"
	kubeinformers "k8s.io/client-go/informers"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// The analysis and experiment controllers as cmd/rollouts-controller configures them. What a Rollouts
// release adds to a configuration is in controllers_v1_8.go (the default build) and controllers_v1_10.go
// (build tag rollouts_v1_10, set by the v1.10.2 module's test): analysisConfig and rolloutConfig.

// newAnalysisController: the World's, on its namespace, or the control plane's, on the Kargo Project's.
func newAnalysisController(kubeInf kubeinformers.SharedInformerFactory, ctrl *cluster.Clients, runs rolloutinformers.AnalysisRunInformer, q *stepQueue, ms *metrics.MetricsServer, rec record.EventRecorder) *analysis.Controller {
	return analysis.NewController(AnalysisConfig(kubeInf, analysis.ControllerConfig{
		KubeClientSet:        ctrl.Kube,
		ArgoProjClientset:    ctrl.Argo,
		AnalysisRunInformer:  runs,
		JobInformer:          kubeInf.Batch().V1().Jobs(),
		ResyncPeriod:         0,
		AnalysisRunWorkQueue: q,
		MetricsServer:        ms,
		Recorder:             rec,
	}))
}

func newExperimentController(w *World, ms *metrics.MetricsServer, rec record.EventRecorder) *experiments.Controller {
	v1 := w.roInf
	return experiments.NewController(experiments.ControllerConfig{
		KubeClientSet:                   w.ctrl.Kube,
		ArgoProjClientset:               w.ctrl.Argo,
		ReplicaSetInformer:              w.kubeInf.Apps().V1().ReplicaSets(),
		ExperimentsInformer:             v1.experiments,
		AnalysisRunInformer:             v1.analysisRuns,
		AnalysisTemplateInformer:        v1.analysisTemplates,
		ClusterAnalysisTemplateInformer: v1.clusterAnalysisTemplates,
		ServiceInformer:                 w.kubeInf.Core().V1().Services(),
		ResyncPeriod:                    0,
		RolloutWorkQueue:                w.rq,
		ExperimentWorkQueue:             w.eq,
		MetricsServer:                   ms,
		Recorder:                        rec,
	})
}
