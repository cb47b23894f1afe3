// Package conformance holds the tests that prove analysis-health against Argo CD v2.14's and Argo Rollouts'
// own code, used as libraries: Argo CD's util/lua VM and util/settings, gitops-engine's health package, and
// the Rollouts v1alpha1 API types. They live in one package so those dependencies compile once per run; the
// Argo CD v3 counterpart is the separate module in ./v3.
package conformance
