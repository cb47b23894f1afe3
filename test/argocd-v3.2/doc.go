// Package v3 proves analysis-health against Argo CD v3.2's own code. It is a module of its own because
// github.com/argoproj/argo-cd/v2 and /v3 cannot share a go.mod (their Kubernetes libraries differ).
package v3
