package e2e

import (
	"github.com/argoproj/gitops-engine/pkg/health"
)

// The Kargo rules the proof needs, re-implemented from Kargo v1.11.2 (github.com/akuity/kargo; summarised
// with file and function names in ../shared/reference/kargo.md §1–§2). Kargo is not a dependency: its
// module cannot share a build with Argo CD v2.14, and these rules are a few lines each.

// stageHealth is Kargo's HealthState (api/v1alpha1/stage_types.go).
type stageHealth string

const (
	stageHealthy     stageHealth = "Healthy"
	stageProgressing stageHealth = "Progressing"
	stageUnhealthy   stageHealth = "Unhealthy"
)

// stageHealthForApp maps an Argo CD Application's health to the Stage health its argocd-update health
// check reports: pkg/health/checker/builtin/argocd.go stageHealthForAppHealth —
// Healthy → Healthy; Progressing and "" → Progressing; Suspended → Progressing ("a suspended Application
// is considered progressing until the suspension is lifted", since v0.8.0, PR #2243); Degraded, Missing,
// Unknown and anything else → Unhealthy.
//
// It assumes what the recorded scenarios have: the Promotion that synced the new Freight Succeeded (an
// argocd-update step without PostSync hooks or waves returns right after the apply), the Application's
// desired revision is synced, it carries no ComparisonError/InvalidSpecError condition, and Argo CD has
// reconciled since the sync (getApplicationHealth's earlier checks, which would only report Unknown).
func stageHealthForApp(status health.HealthStatusCode) stageHealth {
	switch status {
	case health.HealthStatusHealthy:
		return stageHealthy
	case health.HealthStatusProgressing, "", health.HealthStatusSuspended:
		return stageProgressing
	default:
		return stageUnhealthy
	}
}

// stage follows one Stage through the frames of a timeline: the Freight being delivered is verified at
// the first assessment that finds the Stage Healthy (pkg/controller/stages/regular_stages.go:
// verifyStageFreight skips verification unless status.health is Healthy; with no spec.verification it
// records a Successful VerificationInfo at once; markFreightVerifiedForStage then writes the Stage into
// the Freight's status.verifiedIn, again only while the Stage is Healthy). Nothing ever removes it from
// verifiedIn again, however unhealthy the Stage becomes.
//
// Kargo assesses Stage health on every change of the Application's health status (event_handlers.go
// appHealthOrSyncStatusChanged) and every 5 minutes, so every recorded frame whose App health differs
// from the previous one is assessed; we assess every frame.
type stage struct {
	verified int // frame of verification, -1 while not verified
}

func newStage() *stage { return &stage{verified: -1} }

// assess records one Stage health assessment at frame i and returns the Stage health.
func (s *stage) assess(i int, app health.HealthStatusCode) stageHealth {
	h := stageHealthForApp(app)
	if h == stageHealthy && s.verified < 0 {
		s.verified = i
	}
	return h
}
