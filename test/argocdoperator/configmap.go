// Package argocdoperator is the part of the Argo CD Operator (argoproj-labs/argocd-operator, also packaged
// as OpenShift GitOps) that the operator formats depend on: how the operator turns an ArgoCD resource's
// spec.resourceHealthChecks and spec.resourceActions into argocd-cm keys. The operator is not a Go module
// any proof here can build, so this reimplements that mapping for tests, from
// controllers/argocd/configmap.go:
//
//   - getResourceHealthChecks: for each spec.resourceHealthChecks[] {group, kind, check}, the key
//     resource.customizations.health.<group>_<kind> holds check;
//   - getResourceActions: for each spec.resourceActions[] {group, kind, action}, the key
//     resource.customizations.actions.<group>_<kind> holds action, the same YAML block (discovery.lua,
//     definitions, mergeBuiltinActions) as an argocd-cm value.
//
// The operator owns argocd-cm: it rebuilds the ConfigMap from the resource on every reconcile, so these
// keys, not an argocd-cm patch, are what Argo CD then reads (argocd-operator #383; argo-cd #5056, #6169).
package argocdoperator

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// Customization is one entry of spec.resourceHealthChecks (Check) or spec.resourceActions (Action), as the
// CRD's v1alpha1 and v1beta1 schemas declare them.
type Customization struct {
	Group  string `json:"group,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Check  string `json:"check,omitempty"`
	Action string `json:"action,omitempty"`
}

// Spec is the part of an ArgoCD resource's spec the mapping reads.
type Spec struct {
	ResourceHealthChecks []Customization `json:"resourceHealthChecks,omitempty"`
	ResourceActions      []Customization `json:"resourceActions,omitempty"`
}

// ConfigMapData is the resource-customization data of the argocd-cm the operator derives from the ArgoCD
// resource cr (as JSON or YAML). A second entry for the same group and kind is an error here: which one
// the operator keeps is not something our formats may depend on.
func ConfigMapData(cr []byte) (map[string]string, error) {
	var obj struct {
		Kind string `json:"kind"`
		Spec Spec   `json:"spec"`
	}
	if err := yaml.Unmarshal(cr, &obj); err != nil {
		return nil, fmt.Errorf("ArgoCD resource: %w", err)
	}
	if obj.Kind != "ArgoCD" {
		return nil, fmt.Errorf("not an ArgoCD resource: kind %q", obj.Kind)
	}
	data := map[string]string{}
	add := func(prefix string, c Customization, value string) error {
		key := prefix + c.Group + "_" + c.Kind
		if _, dup := data[key]; dup {
			return fmt.Errorf("ArgoCD resource: two entries for %s/%s give %s", c.Group, c.Kind, key)
		}
		data[key] = value
		return nil
	}
	for _, c := range obj.Spec.ResourceHealthChecks {
		if err := add("resource.customizations.health.", c, c.Check); err != nil {
			return nil, err
		}
	}
	for _, c := range obj.Spec.ResourceActions {
		if err := add("resource.customizations.actions.", c, c.Action); err != nil {
			return nil, err
		}
	}
	return data, nil
}
