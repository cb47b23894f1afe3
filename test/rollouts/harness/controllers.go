package harness

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/experiments"
	"github.com/argoproj/argo-rollouts/utils/record"
)

// The analysis and experiment controllers as cmd/rollouts-controller configures them. What a Rollouts
// release adds to a configuration is in controllers_v1_8.go (the default build) and controllers_v1_10.go
// (build tag rollouts_v1_10, set by the v1.10.2 module's test): analysisConfig and rolloutConfig.

func newAnalysisController(w *World, ms *metrics.MetricsServer, rec record.EventRecorder) *analysis.Controller {
	return analysis.NewController(AnalysisConfig(w.kubeInf, analysis.ControllerConfig{
		KubeClientSet:        w.ctrl.Kube,
		ArgoProjClientset:    w.ctrl.Argo,
		AnalysisRunInformer:  w.roInf.analysisRuns,
		JobInformer:          w.kubeInf.Batch().V1().Jobs(),
		ResyncPeriod:         0,
		AnalysisRunWorkQueue: w.aq,
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
