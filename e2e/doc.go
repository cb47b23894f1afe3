// Package e2e is the end-to-end proof that Argo Rollouts' controller, Argo CD's Application health and
// Kargo's Stage health and verification rules agree with the AnalysisRun verdict when Argo CD uses the
// analysis-health Rollout script, and where they do not with Argo CD's built-in script.
//
// The inputs are timelines recorded from Argo Rollouts v1.8.5's real rollout controller by the separate
// module in recorder/ (testdata/timelines/*.yaml). The tests (run with `make e2e`) feed every recorded
// Rollout, with the AnalysisRuns it owns, through Argo CD v2.14's application controller comparison
// (controller.AppStateManager.CompareAppState, which computes Application health with
// setApplicationHealth), once with our scripts installed through argocd-cm and once with Argo CD's
// built-in script, and then through Kargo's Stage health and Freight verification rules (kargo_test.go).
// docs/why.md holds the report they print; a test keeps it equal to what they compute.
package e2e
