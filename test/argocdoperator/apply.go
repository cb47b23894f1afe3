package argocdoperator

import (
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/yaml"
)

// Patch types of `kubectl patch --type`.
const (
	Merge = "merge"
	JSON  = "json"
)

// Apply applies a patch file (YAML or JSON) to the resource cr (YAML or JSON) and returns the result as
// JSON, as `kubectl patch --type patchType --patch-file` does: kubectl converts the file to JSON
// (k8s.io/kubectl pkg/cmd/patch), and the API server's PATCH handler (k8s.io/apiserver
// pkg/endpoints/handlers/patch.go) applies it with gopkg.in/evanphx/json-patch.v4 — MergePatch for
// merge, DecodePatch and Apply for json, all operations or none.
func Apply(patchType string, patch, cr []byte) ([]byte, error) {
	p, err := yaml.YAMLToJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	doc, err := yaml.YAMLToJSON(cr)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	switch patchType {
	case Merge:
		return jsonpatch.MergePatch(doc, p)
	case JSON:
		ops, err := jsonpatch.DecodePatch(p)
		if err != nil {
			return nil, err
		}
		return ops.Apply(doc)
	}
	return nil, fmt.Errorf("unknown patch type %q", patchType)
}

// MinimalArgoCD is an ArgoCD resource as the operator's docs create one: a name and nothing else.
const MinimalArgoCD = `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: argocd
  namespace: argocd
spec: {}
`

// CustomizedArgoCD is one with settings and customizations of its own, as a team using the operator has.
const CustomizedArgoCD = `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: argocd
  namespace: argocd
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  server:
    route:
      enabled: true
  resourceHealthChecks:
  - group: cert-manager.io
    kind: Certificate
    check: |
      return {status = "Healthy"}
  resourceActions:
  - group: apps
    kind: Deployment
    action: |
      discovery.lua: |
        return {}
`
