//go:build e2e_live

package v110

import (
	"testing"

	"github.com/analysis-health/analysis-health/test/rollouts/live"
)

// TestLiveHumanGate: releases whose analysis passed, waiting for a person, under our default scripts,
// --human-gate healthy and Argo CD's built-ins (docs/hooks.md "The human gate"; `make e2e-live`).
func TestLiveHumanGate(t *testing.T) { live.RunLiveHumanGate(t, env.Get(t), *update) }
