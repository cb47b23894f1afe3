// Package stage is Kargo's rules for a Stage whose Promotion runs an argocd-update step, re-implemented
// from Kargo v1.11.2 (github.com/akuity/kargo, read in the module cache; summarised with file and function
// names in shared/reference/kargo.md §1–§3). Kargo is not a Go module we can build: its nested module
// github.com/akuity/kargo/api, which every package here would import, is not served.
//
// The e2e replay (../, package kargo) assesses recorded frames with ForAppHealth and Stage; the live suite
// (test/rollouts/live kargo.go) drives a real Argo CD through the API server and decides with ArgoCDUpdate,
// Assess and Freight.
package stage

import (
	"fmt"
	"time"
)

// Health is Kargo's HealthState (api/v1alpha1/stage_types.go).
type Health string

const (
	Healthy     Health = "Healthy"
	Progressing Health = "Progressing"
	Unknown     Health = "Unknown"
	Unhealthy   Health = "Unhealthy"
)

// ForAppHealth maps an Argo CD Application's health status to Stage health: pkg/health/checker/builtin/
// argocd.go stageHealthForAppHealth — Healthy → Healthy; Progressing and "" → Progressing; Suspended →
// Progressing ("a suspended Application is considered progressing until the suspension is lifted", since
// v0.8.0, PR #2243); Degraded, Missing, Unknown and anything else → Unhealthy.
func ForAppHealth(status string) Health {
	switch status {
	case "Healthy":
		return Healthy
	case "Progressing", "", "Suspended":
		return Progressing
	default:
		return Unhealthy
	}
}

// Stage follows one Stage without spec.verification through the frames of a timeline: the Freight being
// delivered is verified at the first assessment that finds the Stage Healthy (pkg/controller/stages/
// regular_stages.go: verifyStageFreight skips verification unless status.health is Healthy; with no
// spec.verification it records a Successful VerificationInfo at once; markFreightVerifiedForStage then
// writes the Stage into the Freight's status.verifiedIn, again only while the Stage is Healthy). Nothing
// ever removes it from verifiedIn again, however unhealthy the Stage becomes.
//
// Kargo assesses Stage health on every change of the Application's health status (event_handlers.go
// appHealthOrSyncStatusChanged) and every 5 minutes, so every recorded frame whose App health differs
// from the previous one is assessed; the replay assesses every frame.
type Stage struct {
	Health   []Health // per assessed frame
	Verified int      // frame of verification, -1 while not verified
}

func New() *Stage { return &Stage{Verified: -1} }

// Assess records the Stage health assessment of the next frame, given the Application's health status.
// It assumes what the replay has: the Promotion succeeded, the desired revision is synced, no error
// condition, and Argo CD reconciled since the sync (Assess below decides those from the Application).
func (s *Stage) Assess(appHealth string) Health {
	h := ForAppHealth(appHealth)
	if h == Healthy && s.Verified < 0 {
		s.Verified = len(s.Health)
	}
	s.Health = append(s.Health, h)
	return h
}

// Application is what Kargo reads of an Argo CD Application: its stub ApplicationStatus
// (pkg/controller/argocd/api/v1alpha1/application_types.go) declares only health, sync, reconciledAt,
// conditions and operationState, and argocd-update looks at the Application's operation.
type Application struct {
	Namespace, Name string
	Health          string // status.health.status
	SyncRevision    string // status.sync.revision
	ReconciledAt    time.Time
	Conditions      []Condition
	// Operation: the Application's operation field is set (a sync not yet taken up by the controller).
	Operation bool
	// status.operationState: phase, message, finishedAt, the operation's info (Kargo finds its own
	// operation by it) and the revision its syncResult synced. Not the revision the operation asked for:
	// Kargo's operation names none (syncApplication sets an empty sync.revisions and the source's
	// targetRevision), and mustPerformUpdate judges the sync by the syncResult's revisions alone.
	OperationPhase      string
	OperationMessage    string
	OperationFinishedAt time.Time
	OperationInfo       map[string]string
	SyncResultRevision  string
}

// Condition is one of status.conditions.
type Condition struct{ Type, Message string }

// AppHealth is getApplicationHealth (pkg/health/checker/builtin/argocd.go, v1.10.0+) for one Application
// with one source and its desired revision: the freshness gate, the error conditions, the sync revision
// (before health), then the health mapping.
func AppHealth(app Application, desired string) (Health, string) {
	name := fmt.Sprintf("Argo CD Application %q in namespace %q", app.Name, app.Namespace)
	if !app.OperationFinishedAt.IsZero() && (app.ReconciledAt.IsZero() || app.ReconciledAt.Before(app.OperationFinishedAt)) {
		return Unknown, name + " was not reconciled after its most recent operation completed; Application health status not trusted"
	}
	for _, c := range app.Conditions {
		// healthErrorConditions: only these two make the Stage Unhealthy
		if c.Type == "ComparisonError" || c.Type == "InvalidSpecError" {
			return Unhealthy, fmt.Sprintf("%s has %q condition: %s", name, c.Type, c.Message)
		}
	}
	if desired != "" {
		// stageHealthForAppSync
		if app.Operation || app.OperationFinishedAt.IsZero() {
			return Unknown, name + " is being synced"
		}
		if app.SyncRevision != desired {
			return Unhealthy, fmt.Sprintf("Not all sources of %s are synced to the desired revisions", name)
		}
	}
	h := ForAppHealth(app.Health)
	switch h {
	case Healthy:
		return h, ""
	case Progressing:
		if app.Health == "Suspended" {
			return h, name + " is suspended"
		}
		return h, name + " is progressing"
	}
	return h, fmt.Sprintf("%s has health state %q", name, app.Health)
}

// The phases of a Promotion (api/v1alpha1/promotion_types.go) that an argocd-update step leads to.
const (
	PromotionRunning   = "Running"
	PromotionSucceeded = "Succeeded"
	PromotionErrored   = "Errored"
)

// DefaultTimeout is the argocd-update step's default timeout (pkg/promotion/runner/builtin/
// argocd_updater.go DefaultTimeout), measured by Kargo on its own (real) clock.
const DefaultTimeout = 5 * time.Minute

// PromotionInfoKey is the operation info by which argocd-update recognises the operation it started for
// a Promotion (argocd_updater.go syncApplication's info, mustPerformUpdate's check).
const PromotionInfoKey = "kargo.akuity.io/promotion"

// ArgoCDUpdate is the Promotion's phase while its only step, argocd-update, waits on the sync it started
// for the desired revision (argocd_updater.go mustPerformUpdate and operationPhaseToPromotionStepStatus;
// the error threshold of 1 from pkg/promotion/registry.go, so a failed step errors the Promotion, which
// DetermineFinalPhase makes Errored), after elapsed on Kargo's clock:
//   - the operation not yet taken up, or still Running or Terminating: Running, until the timeout;
//   - an operation other than this Promotion's: Running (argocd-update waits, then starts its own);
//   - finished with its syncResult at the desired revision: Succeeded, or Errored for Failed and Error
//     ("Argo CD Application %q in namespace %q failed with: <message>").
func ArgoCDUpdate(app Application, promotion, desired string, elapsed time.Duration) (string, string) {
	running := app.Operation || app.OperationPhase == "" || app.OperationPhase == "Running" || app.OperationPhase == "Terminating" ||
		app.OperationInfo[PromotionInfoKey] != promotion || app.SyncResultRevision != desired
	if running {
		if elapsed > DefaultTimeout {
			return PromotionErrored, fmt.Sprintf("step %q timed out after %s", "argocd-update", DefaultTimeout)
		}
		return PromotionRunning, ""
	}
	switch app.OperationPhase {
	case "Succeeded":
		return PromotionSucceeded, ""
	default: // Failed, Error
		return PromotionErrored, fmt.Sprintf("step %q met error threshold of 1: Argo CD Application %q in namespace %q failed with: %s",
			"argocd-update", app.Name, app.Namespace, app.OperationMessage)
	}
}

// Assess is assessHealth (pkg/controller/stages/regular_stages.go) for a Stage whose last Promotion is in
// the given phase: Unknown while it runs or when it did not succeed, else the argocd-update health check
// of the Application.
func Assess(promotionPhase string, app Application, desired string) (Health, string) {
	switch promotionPhase {
	case PromotionSucceeded:
		return AppHealth(app, desired)
	case PromotionRunning:
		return Unknown, "Cannot assess health because a Promotion is currently in progress"
	}
	return Unknown, "Cannot assess health because last Promotion did not succeed"
}

// The phases of an AnalysisRun that end a verification (VerificationPhase, api/v1alpha1).
func terminal(phase string) bool {
	switch phase {
	case "Successful", "Failed", "Error", "Inconclusive", "Aborted":
		return true
	}
	return false
}

// Freight follows the verification of one Freight in a Stage with spec.verification
// (regular_stages.go verifyStageFreight and markFreightVerifiedForStage):
//   - it starts at the first assessment that finds the Stage Healthy (the health gate), never before;
//   - once started, its phase follows the AnalysisRun's whatever the Stage's health (the non-terminal
//     branch comes before the health gate);
//   - the Freight is verified at an assessment that finds the Stage Healthy with the verification
//     Successful, and never revoked.
//
// HealthOnly is a Stage without spec.verification, as Kargo is set up without analysis-health: at the first
// Healthy assessment the verification is Successful at once ("If we have no specific verification
// configuration, then we can mark the verification as successful") and the Freight is verified in the same
// reconcile, the Stage's health being all Kargo knows of the analysis.
type Freight struct {
	HealthOnly bool
	Started    bool
	Phase      string
	Verified   bool
}

// Reconcile is one Stage reconcile: h the assessed health, phase the verification AnalysisRun's phase
// (ignored before it starts). It reports whether the verification starts now (the caller creates the run).
func (f *Freight) Reconcile(h Health, phase string) (start bool) {
	if !f.Started {
		if h != Healthy {
			return false
		}
		if f.HealthOnly {
			f.Started, f.Phase, f.Verified = true, "Successful", true
			return false
		}
		f.Started, f.Phase = true, "Pending"
		return true
	}
	if !terminal(f.Phase) {
		if phase == "" {
			phase = "Pending"
		}
		f.Phase = phase
	}
	if h == Healthy && f.Phase == "Successful" {
		f.Verified = true
	}
	return false
}

// KargoVersion is the Kargo release these rules are read from, and the one the docs name as supported.
const KargoVersion = "v1.11.2"
