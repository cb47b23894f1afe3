// Package v36 proves analysis-health against Argo CD v3.6's own code. It is a module of its own because
// Argo CD v3.6 needs Go 1.27 (the main module stays on the machine's Go) and Kubernetes libraries that
// differ from those of v2.14 and v3.2.
package v36
