// Command noop-metric-plugin is an Argo Rollouts metric-provider plugin that does nothing: every
// measurement is Running, resumed after 10 s (the load's pollInterval), with no read of anything. The
// reliability load (test/rollouts/reliability load.go, provider "noop") runs it beside ours, so
// that what the controller's plugin path costs a measurement, whatever the plugin does, is measured
// apart from what our plugin adds: the floor under any plugin's latency in that controller.
package main

import (
	"time"

	"github.com/argoproj/argo-rollouts/metricproviders/plugin/rpc"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	goPlugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

const resumeAfter = 10 * time.Second

type noop struct{}

func (noop) InitPlugin() types.RpcError { return types.RpcError{} }

func (noop) Run(_ *v1alpha1.AnalysisRun, _ v1alpha1.Metric) v1alpha1.Measurement {
	now := metav1.Now()
	return running(v1alpha1.Measurement{StartedAt: &now})
}

func (noop) Resume(_ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	return running(m)
}

func running(m v1alpha1.Measurement) v1alpha1.Measurement {
	at := metav1.NewTime(time.Now().Add(resumeAfter))
	m.Phase, m.Value, m.ResumeAt = v1alpha1.AnalysisPhaseRunning, "{}", &at
	return m
}

func (noop) Terminate(_ *v1alpha1.AnalysisRun, _ v1alpha1.Metric, m v1alpha1.Measurement) v1alpha1.Measurement {
	now := metav1.Now()
	m.Phase, m.FinishedAt, m.ResumeAt = v1alpha1.AnalysisPhaseSuccessful, &now, nil
	return m
}

func (noop) GarbageCollect(*v1alpha1.AnalysisRun, v1alpha1.Metric, int) types.RpcError {
	return types.RpcError{}
}

func (noop) Type() string { return "Noop" }

func (noop) GetMetadata(v1alpha1.Metric) map[string]string { return nil }

func main() {
	goPlugin.Serve(&goPlugin.ServeConfig{
		HandshakeConfig: rolloutplugin.Handshake,
		Plugins:         map[string]goPlugin.Plugin{rolloutplugin.PluginMapKey: &rpc.RpcMetricProviderPlugin{Impl: noop{}}},
	})
}
