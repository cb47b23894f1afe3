//go:build rollouts_v1_10

package recorder

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	"github.com/argoproj/argo-rollouts/experiments"
	"github.com/argoproj/argo-rollouts/rollout"
	"github.com/argoproj/argo-rollouts/utils/record"
)

// v1.10's configurations (see controllers_v1_8.go): the analysis controller also watches the Pods of
// its Jobs (ImagePullBackOff makes a Job metric Inconclusive), the experiment controller updates Pods'
// ephemeral metadata with its own workers (rolloutConfig).

func newAnalysisController(w *World, ms *metrics.MetricsServer, rec record.EventRecorder) *analysis.Controller {
	return analysis.NewController(analysis.ControllerConfig{
		KubeClientSet:        w.ctrl.Kube,
		ArgoProjClientset:    w.ctrl.Argo,
		AnalysisRunInformer:  w.roInf.analysisRuns,
		JobInformer:          w.kubeInf.Batch().V1().Jobs(),
		JobPodsInformer:      w.kubeInf.Core().V1().Pods(),
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

// rolloutConfig adds v1.10's fields: the rollout controller updates Pods' ephemeral metadata with
// workers of its own (defaults of cmd/rollouts-controller).
func rolloutConfig(cfg rollout.ControllerConfig) rollout.ControllerConfig {
	cfg.EphemeralMetadataThreads = rollout.DefaultEphemeralMetadataThreads
	cfg.EphemeralMetadataPodRetries = rollout.DefaultEphemeralMetadataPodRetries
	return cfg
}
