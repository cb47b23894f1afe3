// Package rolloutsv18 wires the jobs of ../rollouts with Argo Rollouts v1.8.5's controllers: it records
// the scenarios (package scenarios, on package harness), proves the plugin in the analysis controller
// (pluginproof, handed the catalogue) and measures the plugin's reliability there (reliability; make e2e). It is a module of its own because v1.8.5 pins Kubernetes v0.29.3; the
// replace block in go.mod is argo-rollouts v1.8.5's own.
package rolloutsv18

import (
	"flag"
	"os"
	"testing"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/pluginproof"
	"github.com/analysis-health/analysis-health/test/rollouts/reliability"
	"github.com/analysis-health/analysis-health/test/rollouts/scenarios"
)

var update = flag.Bool("update", false, "rewrite the recorded timelines in test/testdata/timelines/<version>")

var env harness.SharedEnv

// TestMain stops the API server program and metrics server that the tests of this package share
// (harness.SharedEnv starts them for the first test that needs them).
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func TestRecord(t *testing.T) { scenarios.RunRecord(t, env.Get(t), *update) }

func TestGuard(t *testing.T) { harness.RunGuard(t, env.Get(t)) }

// TestPluginVerification: the analysis-health plugin judged by the real analysis controller (docs/kargo.md).
func TestPluginVerification(t *testing.T) {
	pluginproof.RunPluginVerification(t, env.Get(t), scenarios.Catalogue(), *update)
}

// TestPluginRemoved: a verification run naming the plugin after its removal (docs/install.md).
func TestPluginRemoved(t *testing.T) {
	pluginproof.RunPluginRemoved(t, env.Get(t), scenarios.Catalogue())
}

// TestExperimentTerminate: what the Experiment terminate action leads to (docs/actions.md).
func TestExperimentTerminate(t *testing.T) { scenarios.RunExperimentTerminate(t, env.Get(t)) }

// TestVersion pins what this module is for: a build with the rollouts_v1_10 tag would wire v1.10's.
func TestVersion(t *testing.T) {
	if v := harness.RolloutsVersion(); v != "v1.8.5" {
		t.Fatalf("built against argo-rollouts %s, want v1.8.5", v)
	}
}

// TestReliability: the plugin under faults, with least privilege, on oversized objects and under load
// (docs/reliability.md); it starts clusters of its own.
func TestReliability(t *testing.T) { reliability.RunReliability(t, *update) }
