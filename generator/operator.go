package generator

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// The Argo CD Operator (and OpenShift GitOps) owns argocd-cm and rebuilds it from the ArgoCD custom
// resource on every reconcile, so argocd-cm patches are reverted there. Its controllers/argocd/configmap.go
// (getResourceHealthChecks, getResourceActions) writes spec.resourceHealthChecks[] {group, kind, check} to
// resource.customizations.health.<group>_<kind> and spec.resourceActions[] {group, kind, action} to
// resource.customizations.actions.<group>_<kind>: the same values our argocd-cm keys carry.

// DefaultArgoCDName is the ArgoCD resource the operator formats target unless told otherwise.
const DefaultArgoCDName = "argocd"

// OperatorMarker is the annotation both operator formats set on the ArgoCD resource; the JSON patch
// refuses to apply where it is already present, so applying it twice cannot duplicate the entries.
const OperatorMarker = "analysis-health/operator-entries"

const (
	operatorPatchFile     = "argocd-operator-patch.yaml"
	operatorJSONPatchFile = "argocd-operator-json6902.yaml"
)

// validDNS1123Subdomain is the rule Kubernetes applies to the names of most objects, ArgoCD resources
// included (k8s.io/apimachinery/pkg/util/validation IsDNS1123Subdomain): at most 253 characters, dot-separated
// parts of lower-case letters, digits and '-' that start and end with a letter or digit (unlike a
// namespace, a part may be longer than 63).
func validDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for i, c := range part {
			alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			if !alnum && (c != '-' || i == 0 || i == len(part)-1) {
				return false
			}
		}
	}
	return true
}

// operatorEntries are spec.resourceHealthChecks and spec.resourceActions as the operator reads them,
// with the values of our argocd-cm keys.
func operatorEntries(in rendering) (checks, actions []*yaml.Node) {
	for _, k := range in.kinds {
		checks = append(checks, mapping("group", str(k.Group), "kind", str(k.Kind), "check", literal(in.data[HealthKey(k)])))
	}
	for _, k := range in.actionKinds {
		actions = append(actions, mapping("group", str(k.Group), "kind", str(k.Kind), "action", literal(in.data[ActionsKey(k)])))
	}
	return checks, actions
}

// markerValue says what set the marker: version and kinds, so `kubectl get argocd -o yaml` tells which
// entries came from analysis-health.
func (r resolved) markerValue() string {
	kinds := make([]string, 0, len(r.kinds))
	for _, k := range r.kinds {
		kinds = append(kinds, k.Key())
	}
	return fmt.Sprintf("analysis-health %s: %s", r.version, strings.Join(kinds, ", "))
}

func (r resolved) operatorUsage(patchType string) []string {
	return []string{
		fmt.Sprintf("Apply to the ArgoCD resource %s/%s (not to argocd-cm, which the operator rebuilds):", r.namespace, r.argocdName),
		fmt.Sprintf("  kubectl patch argocd %s -n %s --type %s --patch-file %s", r.argocdName, r.namespace, patchType, r.outFile()),
	}
}

func renderOperator(in rendering) ([]File, error) {
	checks, actions := operatorEntries(in)
	spec := mapping("resourceHealthChecks", sequence(checks...))
	if len(actions) > 0 {
		spec.Content = append(spec.Content, str("resourceActions"), sequence(actions...))
	}
	// name and namespace are immutable, so the API server rejects this patch when applied to any other
	// ArgoCD resource than the one it was generated for (apimachinery ValidateObjectMetaUpdate).
	doc := mapping(
		"metadata", mapping(
			"name", str(in.argocdName),
			"namespace", str(in.namespace),
			"annotations", mapping(OperatorMarker, str(in.markerValue())),
		),
		"spec", spec,
	)
	usage := append(in.operatorUsage("merge"),
		"A merge patch REPLACES whole lists: any other spec.resourceHealthChecks or spec.resourceActions entries",
		"of the resource are removed. If it has some, use --format operator-json6902 (docs/install.md).",
	)
	out, err := encode(in.header.with(usage...), doc, nil)
	if err != nil {
		return nil, err
	}
	if err := checkOperatorScripts(out, in.data); err != nil {
		return nil, err
	}
	return []File{{Path: operatorPatchFile, Data: out}}, nil
}

// jsonPointerEscape escapes a JSON Pointer reference token (RFC 6901 §3).
func jsonPointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func renderOperatorJSON6902(in rendering) ([]File, error) {
	checks, actions := operatorEntries(in)
	op := func(kv ...any) *yaml.Node { return mapping(kv...) }
	marker := "/metadata/annotations/" + jsonPointerEscape(OperatorMarker)
	ops := []*yaml.Node{
		// Only the ArgoCD resource it was generated for.
		op("op", str("test"), "path", str("/metadata/name"), "value", str(in.argocdName)),
		op("op", str("test"), "path", str("/metadata/namespace"), "value", str(in.namespace)),
		// The duplicate guard: the Kubernetes API server applies JSON patches with evanphx/json-patch v4,
		// whose test of null passes for an absent member and fails for a present one; the marker is set by
		// both operator formats, so a second application fails as a whole instead of appending again.
		op("op", str("test"), "path", str(marker), "value", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}),
		op("op", str("add"), "path", str(marker), "value", str(in.markerValue())),
	}
	for _, c := range checks {
		ops = append(ops, op("op", str("add"), "path", str("/spec/resourceHealthChecks/-"), "value", c))
	}
	for _, a := range actions {
		ops = append(ops, op("op", str("add"), "path", str("/spec/resourceActions/-"), "value", a))
	}
	lists := "spec.resourceHealthChecks"
	if len(actions) > 0 {
		lists += " and spec.resourceActions"
	}
	usage := append(in.operatorUsage("json"),
		"A JSON patch (RFC 6902) that APPENDS our entries and keeps every other one. It applies only where",
		"metadata.annotations and "+lists+" exist,",
		"and the annotation "+OperatorMarker+" is not set yet; otherwise the API server",
		"rejects it whole and nothing changes (docs/install.md).",
	)
	out, err := encode(in.header.with(usage...), sequence(ops...), nil)
	if err != nil {
		return nil, err
	}
	if err := checkOperatorScripts(out, in.data); err != nil {
		return nil, err
	}
	return []File{{Path: operatorJSONPatchFile, Data: out}}, nil
}

// checkOperatorScripts requires every check and action value in out to be a literal block scalar holding
// exactly the argocd-cm value (encode's check works by map key, which repeats across list entries here).
func checkOperatorScripts(out []byte, data map[string]string) error {
	want := map[string]int{}
	for _, v := range data {
		want[v]++
	}
	var back yaml.Node
	if err := yaml.Unmarshal(out, &back); err != nil {
		return fmt.Errorf("generated YAML does not load: %w", err)
	}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (k.Value == "check" || k.Value == "action") && v.Kind == yaml.ScalarNode && v.Style&yaml.LiteralStyle != 0 {
					want[v.Value]--
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&back)
	for k, v := range data {
		if want[v] != 0 {
			return fmt.Errorf("%s: the value cannot be written as a YAML block scalar (a line ending in whitespace, or a control character?)", k)
		}
	}
	return nil
}
