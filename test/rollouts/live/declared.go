// What the live suite declares of each scenario: Argo CD's health from the release on, Kargo's Promotion,
// Stage and verification.

package live

import (
	"slices"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// LiveScenario is a scenario the live suite runs, with what it declares Argo CD and Kargo end in.
type LiveScenario struct {
	Name string `json:"name"`
	// Health is the Application's health from the release on, collapsed to changes: the replay's too.
	Health []string `json:"health"`
	// Promotion is the release's Promotion phase (its argocd-update step syncs with the PostSync barrier);
	// Stage the Stage's health at the end; Verification the phase of the Stage's verification run (our
	// generated template and plugin) or "not started"; Verified whether the Freight is verified.
	Promotion    string `json:"promotion"`
	Stage        string `json:"stage"`
	Verification string `json:"verification"`
	Verified     bool   `json:"verified"`
	// Rollback is the phase of the Promotion of the previous Freight, RollbackVerification its
	// Verification's, when the scenario syncs the previous image back.
	Rollback             string `json:"rollback,omitempty"`
	RollbackVerification string `json:"rollbackVerification,omitempty"`
	// Case, for a revision promoted without analysis (the plugin proof's no-analysis scenarios), is
	// the case our verification's message names; such a scenario has no replay (no recorded timeline).
	Case string `json:"case,omitempty"`
}

// noAnalysisLive is the no-analysis scenario named as it is live: promoted, no analysis, the Freight
// verified by Kargo (with ours: our verification's default policy, successful, after full promotion).
// Its Case is the catalogue's (declared).
func noAnalysisLive(name string, health ...string) LiveScenario {
	return LiveScenario{Name: name, Health: health, Promotion: "Succeeded", Stage: "Healthy",
		Verification: "Successful", Verified: true}
}

// declared is LiveScenarios with the case of each no-analysis scenario, as the catalogue names it.
func declared(cat harness.Catalogue) []LiveScenario {
	out := slices.Clone(LiveScenarios)
	for i := range out {
		for _, na := range cat.NoAnalysis {
			if na.Name == out[i].Name {
				out[i].Case = na.Case
			}
		}
	}
	return out
}

var (
	promotedSteps = []string{"Progressing", "Suspended", "Progressing", "Healthy"}
	degraded      = []string{"Progressing", "Degraded"}
)

// Failed is a scenario whose update the controller aborts: the barrier's sync fails on the Degraded
// Rollout, so the Promotion Errors, and Kargo assesses no health after a Promotion that did not succeed.
func failed(name string) LiveScenario {
	return LiveScenario{Name: name, Health: degraded, Promotion: "Errored", Stage: "Unknown", Verification: kargoverify.NotStarted}
}

// LiveScenarios are the scenarios the live suite runs: those whose revisions a git repository delivers
// and whose users act through Argo CD's resource actions.
var LiveScenarios = []LiveScenario{
	{Name: "canary-step-successful", Health: promotedSteps, Promotion: "Succeeded", Stage: "Healthy", Verification: "Successful", Verified: true},
	failed("canary-step-failed"),
	failed("canary-step-error"),
	{Name: "canary-step-inconclusive-resumed", Health: []string{"Progressing", "Suspended", "Progressing", "Suspended", "Progressing", "Healthy"},
		Promotion: "Succeeded", Stage: "Healthy", Verification: "Successful", Verified: true},
	{Name: "canary-background-promoted-while-running", Health: []string{"Progressing", "Healthy"}, Promotion: "Succeeded", Stage: "Healthy",
		Verification: "Successful", Verified: true},
	failed("canary-background-failed-during-pause"),
	failed("canary-progress-deadline-abort"),
	failed("canary-experiment-failed"),
	failed("bluegreen-prepromotion-failed"),
	failed("bluegreen-postpromotion-failed"),
	// the retry comes after the barrier's sync failed: the Promotion has Errored, and Kargo needs a new
	// one before it assesses the Stage again (shared/reference/kargo.md §3)
	// the previous image synced back while the step analysis runs: the release's Promotion is still
	// running (the barrier waits for a Healthy Rollout), so the user aborts it and terminates the sync
	// before Kargo promotes the previous Freight; the released Freight is never verified
	{Name: "canary-rollback-during-analysis", Health: []string{"Progressing", "Healthy"}, Promotion: "Aborted", Stage: "Healthy",
		Verification: kargoverify.NotStarted, Rollback: "Succeeded", RollbackVerification: "Successful"},
	{Name: "canary-retry-after-abort", Health: []string{"Progressing", "Degraded", "Progressing", "Suspended", "Progressing", "Healthy"},
		Promotion: "Errored", Stage: "Unknown", Verification: kargoverify.NotStarted},
	noAnalysisLive("first-deployment", "Progressing", "Healthy"),
	noAnalysisLive("canary-without-analysis", "Progressing", "Suspended", "Progressing", "Suspended", "Progressing", "Healthy"),
	noAnalysisLive("canary-analysis-removed", "Progressing", "Suspended", "Progressing", "Healthy"),
}
