//go:build rollouts_v1_10

package harness

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/rollout"
	kubeinformers "k8s.io/client-go/informers"
)

// v1.10's additions to the controllers' configurations (controllers.go).

// AnalysisConfig: the analysis controller also watches the Pods of its Jobs (ImagePullBackOff makes a
// Job metric Inconclusive).
func AnalysisConfig(kubeInf kubeinformers.SharedInformerFactory, cfg analysis.ControllerConfig) analysis.ControllerConfig {
	cfg.JobPodsInformer = kubeInf.Core().V1().Pods()
	return cfg
}

// rolloutConfig: the rollout controller updates Pods' ephemeral metadata with workers of its own
// (defaults of cmd/rollouts-controller).
func rolloutConfig(cfg rollout.ControllerConfig) rollout.ControllerConfig {
	cfg.EphemeralMetadataThreads = rollout.DefaultEphemeralMetadataThreads
	cfg.EphemeralMetadataPodRetries = rollout.DefaultEphemeralMetadataPodRetries
	return cfg
}
