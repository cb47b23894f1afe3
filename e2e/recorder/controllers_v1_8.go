//go:build !rollouts_v1_10

package recorder

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/experiments"
	"github.com/argoproj/argo-rollouts/rollout"
	"github.com/argoproj/argo-rollouts/utils/record"
)

// The controllers' configurations differ between Rollouts releases; this file is v1.8's (the default
// build), controllers_v1_10.go is v1.10's (build tag rollouts_v1_10, set by the v1.10.2 module's test).

func newAnalysisController(w *World, ms *metrics.MetricsServer, rec record.EventRecorder) *analysis.Controller {
	return analysis.NewController(analysis.ControllerConfig{
		KubeClientSet:        w.ctrl.Kube,
		ArgoProjClientset:    w.ctrl.Argo,
		AnalysisRunInformer:  w.roInf.analysisRuns,
		JobInformer:          w.kubeInf.Batch().V1().Jobs(),
		ResyncPeriod:         0,
		AnalysisRunWorkQueue: w.aq,
		MetricsServer:        ms,
		Recorder:             rec,
	})
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

// rolloutConfig adds v1.8's fields of the rollout controller's configuration (none beyond the common ones).
func rolloutConfig(cfg rollout.ControllerConfig) rollout.ControllerConfig { return cfg }
