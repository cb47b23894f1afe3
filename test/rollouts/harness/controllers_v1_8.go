//go:build !rollouts_v1_10

package harness

import (
	"github.com/argoproj/argo-rollouts/analysis"
	"github.com/argoproj/argo-rollouts/rollout"
	kubeinformers "k8s.io/client-go/informers"
)

// v1.8's additions to the controllers' configurations (controllers.go): none beyond the common fields.

func AnalysisConfig(_ kubeinformers.SharedInformerFactory, cfg analysis.ControllerConfig) analysis.ControllerConfig {
	return cfg
}

func rolloutConfig(cfg rollout.ControllerConfig) rollout.ControllerConfig { return cfg }
