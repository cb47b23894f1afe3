// Package e2e is the end-to-end proof that Argo Rollouts' controllers, Argo CD's Application health, a
// sync with the PostSync barrier hook, and Kargo's Stage health and verification rules agree with the
// analysis verdict when Argo CD uses the analysis-health Rollout script, and where they do not with Argo
// CD's built-in script.
//
// The inputs are timelines recorded from Argo Rollouts' real rollout, analysis and experiment controllers
// on a real kube-apiserver (v1.8.5 by module test/rollouts-v1.8, v1.10.2 by module test/rollouts-v1.10;
// the API server program is module test/kube-apiserver-v1.34), in test/testdata/timelines/<version>/*.yaml. The tests (run with `make e2e`)
// feed every recorded Rollout, with the AnalysisRuns it owns, through Argo CD v2.14's application
// controller comparison (controller.AppStateManager.CompareAppState, which computes Application health
// with setApplicationHealth), once with our scripts installed through argocd-cm and once with Argo CD's
// built-in script, then through Kargo's Stage health and Freight verification rules (package kargo) and
// through gitops-engine's sync engine with the barrier hook (barrier_test.go). docs/why.md holds the
// report they print and docs/timelines its pictures (package picture); a test keeps both equal to what
// they compute.
package e2e
