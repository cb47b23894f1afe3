// Package v110 wires the jobs of ../rollouts (scenarios, pluginproof, reliability, live, on package
// harness) with Argo Rollouts v1.10.2's controllers. It is a module of its own because v1.10.2 pins
// Kubernetes v0.34 libraries and needs Go >= 1.26.10 (GOTOOLCHAIN=go1.27.3), and it must be tested with
// -tags rollouts_v1_10, which selects the harness's v1.10 controller wiring (../rollouts/harness/controllers_v1_10.go). `make e2e` does both.
package v110

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

// TestVersion pins what this module is for: a build without the tag would wire the v1.8 controllers.
func TestVersion(t *testing.T) {
	if v := harness.RolloutsVersion(); v != "v1.10.2" {
		t.Fatalf("built against argo-rollouts %s, want v1.10.2", v)
	}
}

func TestRecord(t *testing.T) { scenarios.RunRecord(t, env.Get(t), *update) }

func TestGuard(t *testing.T) { harness.RunGuard(t, env.Get(t)) }

// TestPluginVerification: the analysis-health plugin judged by the real analysis controller (docs/kargo.md).
func TestPluginVerification(t *testing.T) {
	pluginproof.RunPluginVerification(t, env.Get(t), scenarios.Catalogue(), *update)
}

// TestExperimentTerminate: what the Experiment terminate action leads to (docs/actions.md).
func TestExperimentTerminate(t *testing.T) { scenarios.RunExperimentTerminate(t, env.Get(t)) }

// TestPluginRemoved: a verification run naming the plugin after its removal (docs/install.md).
func TestPluginRemoved(t *testing.T) {
	pluginproof.RunPluginRemoved(t, env.Get(t), scenarios.Catalogue())
}

// TestReliability: the plugin under faults, with least privilege, on oversized objects and under load, in
// v1.10.2's analysis controller (docs/reliability.md "Load on Rollouts v1.10.2"); it starts clusters of
// its own. make reliability runs its loads; make e2e runs the one of v1.8.5.
func TestReliability(t *testing.T) { reliability.RunReliability(t, *update) }
