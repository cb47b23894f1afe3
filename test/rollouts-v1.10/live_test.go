//go:build e2e_live

package v110

import (
	"testing"

	"github.com/analysis-health/analysis-health/test/rollouts/live"
	"github.com/analysis-health/analysis-health/test/rollouts/scenarios"
)

// TestLive: the scenarios delivered from git by Argo CD v3.6.2's own application controller and
// repo-server (../../live/argocd) beside v1.10.2's controllers, against the replay (`make e2e-live`).
func TestLive(t *testing.T) { live.RunLive(t, env.Get(t), scenarios.Catalogue(), *update) }

// TestLiveTwoClusters: the topology Kargo users run, Kargo's control plane and a workload cluster, with
// the token rotation (docs/kargo.md "Multi-cluster"; test/testdata/live/two-clusters-v1.10.2.yaml).
func TestLiveTwoClusters(t *testing.T) { live.RunLiveTwoClusters(t, scenarios.Catalogue(), *update) }
