// Package rollouts110 holds the upstream-corpus proof for Argo Rollouts v1.10.2 (its examples, e2e inputs
// and test data, against Argo CD's built-in scripts and that version's kubectl-argo-rollouts). It is a
// module of its own: Argo Rollouts v1.10.2 is built against Kubernetes v0.34 libraries and needs Go
// >= 1.26.10 (GOTOOLCHAIN=go1.27.3), while the main module stays on Argo Rollouts v1.8.5 and the
// machine's Go. The replace block of go.mod is argo-rollouts v1.10.2's own.
package rollouts110
