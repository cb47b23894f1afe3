package generator

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"
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
	if in.from != nil {
		if err := in.from.check(in.resolved); err != nil {
			return nil, err
		}
	}
	op := func(kv ...any) *yaml.Node { return mapping(kv...) }
	null := func() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"} }
	// A JSON patch has no conditionals: `add …/-` needs the list, `add` of the member would replace one that
	// exists. So either the patch assumes the lists (and the annotations) exist, or, computed against the
	// live resource (--from), it creates each missing parent with its entries, guarded by a test of null
	// (which passes on an absent member only: evanphx/json-patch v4, as the API server applies it), so a
	// parent created since is never replaced: the patch is then refused whole.
	exists := func(member string) bool { return in.from == nil || in.from.has[member] }
	// create adds path with value after the test that it is still absent.
	create := func(path string, value *yaml.Node) []*yaml.Node {
		return []*yaml.Node{
			op("op", str("test"), "path", str(path), "value", null()),
			op("op", str("add"), "path", str(path), "value", value),
		}
	}
	marker := "/metadata/annotations/" + jsonPointerEscape(OperatorMarker)
	ops := []*yaml.Node{
		// Only the ArgoCD resource it was generated for.
		op("op", str("test"), "path", str("/metadata/name"), "value", str(in.argocdName)),
		op("op", str("test"), "path", str("/metadata/namespace"), "value", str(in.namespace)),
	}
	if exists("annotations") {
		// The duplicate guard: the Kubernetes API server applies JSON patches with evanphx/json-patch v4,
		// whose test of null passes for an absent member and fails for a present one; the marker is set by
		// both operator formats, so a second application fails as a whole instead of appending again.
		ops = append(ops,
			op("op", str("test"), "path", str(marker), "value", null()),
			op("op", str("add"), "path", str(marker), "value", str(in.markerValue())))
	} else {
		// No annotations at all, so no marker either; the test also keeps annotations set since.
		ops = append(ops, create("/metadata/annotations", mapping(OperatorMarker, str(in.markerValue())))...)
	}
	switch {
	case !exists("spec"):
		spec := mapping("resourceHealthChecks", sequence(checks...))
		if len(actions) > 0 {
			spec.Content = append(spec.Content, str("resourceActions"), sequence(actions...))
		}
		ops = append(ops, create("/spec", spec)...)
	default:
		if exists("resourceHealthChecks") {
			for _, c := range checks {
				ops = append(ops, op("op", str("add"), "path", str("/spec/resourceHealthChecks/-"), "value", c))
			}
		} else {
			ops = append(ops, create("/spec/resourceHealthChecks", sequence(checks...))...)
		}
		if len(actions) > 0 && exists("resourceActions") {
			for _, a := range actions {
				ops = append(ops, op("op", str("add"), "path", str("/spec/resourceActions/-"), "value", a))
			}
		} else if len(actions) > 0 {
			ops = append(ops, create("/spec/resourceActions", sequence(actions...))...)
		}
	}
	lists := "spec.resourceHealthChecks"
	if len(actions) > 0 {
		lists += " and spec.resourceActions"
	}
	usage := in.operatorUsage("json")
	if in.from == nil {
		usage = append(usage,
			"A JSON patch (RFC 6902) that APPENDS our entries and keeps every other one. It applies only where",
			"metadata.annotations and "+lists+" exist,",
			"and the annotation "+OperatorMarker+" is not set yet; otherwise the API server",
			"rejects it whole and nothing changes. Where they do not, generate it with --from (docs/install.md).",
		)
	} else {
		usage = append(usage,
			"A JSON patch (RFC 6902) that adds our entries and keeps every other one, computed against "+in.from.described()+":",
			"it appends to the lists that exist there and creates those that do not. If the resource has changed shape",
			"since (a list or metadata.annotations appeared or went), or the annotation "+OperatorMarker,
			"is set, the API server rejects it whole and nothing changes: generate it again from the live resource (docs/install.md).",
		)
	}
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

// ArgoCDResource is what the operator-json6902 patch needs to know of a live ArgoCD resource (`kubectl get
// argocd NAME -o yaml`, the CLI's --from): which of the members it adds to exist, so that it appends to
// those and creates the others, and which entries it already has.
type ArgoCDResource struct {
	source, name, namespace string
	// has: "annotations", "spec", "resourceHealthChecks", "resourceActions", present and not null.
	has    map[string]bool
	marker string
	// checks and actions are the group/Kind of the existing entries.
	checks, actions []string
}

// ReadArgoCD parses an ArgoCD resource (YAML or JSON; a List holding exactly one, as `kubectl get argocd
// -o yaml` without a name prints, is taken too). source names it in errors and in the patch's header.
func ReadArgoCD(source string, data []byte) (*ArgoCDResource, error) {
	var obj map[string]any
	if err := sigsyaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%s: no object: want the ArgoCD resource (kubectl get argocd NAME -n NAMESPACE -o yaml)", source)
	}
	if obj["kind"] == "List" {
		items, _ := obj["items"].([]any)
		if len(items) != 1 {
			return nil, fmt.Errorf("%s: a List of %d objects: want exactly one ArgoCD resource (kubectl get argocd NAME -n NAMESPACE -o yaml)", source, len(items))
		}
		obj, _ = items[0].(map[string]any)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	if obj["kind"] != "ArgoCD" || !strings.HasPrefix(apiVersion, "argoproj.io/") {
		return nil, fmt.Errorf("%s: not an ArgoCD resource: want apiVersion argoproj.io/*, kind ArgoCD, got %v %v", source, obj["apiVersion"], obj["kind"])
	}
	r := &ArgoCDResource{source: source, has: map[string]bool{}}
	meta, _ := obj["metadata"].(map[string]any)
	r.name, _ = meta["name"].(string)
	r.namespace, _ = meta["namespace"].(string)
	if r.name == "" || r.namespace == "" {
		return nil, fmt.Errorf("%s: the ArgoCD resource has no metadata.name or metadata.namespace", source)
	}
	if a, ok := meta["annotations"]; ok && a != nil {
		m, ok := a.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: metadata.annotations is not a map", source)
		}
		r.has["annotations"] = true
		if v, ok := m[OperatorMarker]; ok {
			r.marker = fmt.Sprint(v)
		}
	}
	if raw, ok := obj["spec"]; ok && raw != nil {
		spec, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: spec is not a map", source)
		}
		r.has["spec"] = true
		for _, list := range []struct {
			field string
			into  *[]string
		}{{"resourceHealthChecks", &r.checks}, {"resourceActions", &r.actions}} {
			raw, ok := spec[list.field]
			if !ok || raw == nil {
				continue
			}
			entries, ok := raw.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: spec.%s is not a list", source, list.field)
			}
			r.has[list.field] = true
			for i, e := range entries {
				m, _ := e.(map[string]any)
				group, _ := m["group"].(string)
				kind, _ := m["kind"].(string)
				if kind == "" {
					return nil, fmt.Errorf("%s: spec.%s[%d] has no kind", source, list.field, i)
				}
				*list.into = append(*list.into, group+"/"+kind)
			}
		}
	}
	return r, nil
}

// Name and Namespace are the resource's, for the CLI to default --argocd-name and --namespace to.
func (a *ArgoCDResource) Name() string      { return a.name }
func (a *ArgoCDResource) Namespace() string { return a.namespace }

// described is the resource's source for a sentence: standard input has no file name.
func (a *ArgoCDResource) described() string {
	if a.source == "-" {
		return "the resource read from standard input"
	}
	return a.source
}

// check refuses what the patch cannot do right on this resource: another resource, our entries already
// there (the API server would take the patch, and the operator then sees two entries for one key).
func (a *ArgoCDResource) check(r resolved) error {
	if a.name != r.argocdName || a.namespace != r.namespace {
		return fmt.Errorf("%s: the ArgoCD resource is %s/%s, but the patch is for %s/%s (--namespace, --argocd-name)", a.source, a.namespace, a.name, r.namespace, r.argocdName)
	}
	if a.marker != "" {
		return fmt.Errorf("%s: the annotation %s is set (%q): analysis-health's entries are installed already; to upgrade, remove them and the annotation first (docs/install.md)", a.source, OperatorMarker, a.marker)
	}
	for _, k := range r.kinds {
		if slices.Contains(a.checks, k.Key()) {
			return fmt.Errorf("%s: spec.resourceHealthChecks already has an entry for %s (an older script?): remove it first, two entries map to one argocd-cm key (docs/install.md)", a.source, k.Key())
		}
	}
	for _, k := range r.actionKinds {
		if slices.Contains(a.actions, k.Key()) {
			return fmt.Errorf("%s: spec.resourceActions already has an entry for %s: remove it first, two entries map to one argocd-cm key (docs/install.md)", a.source, k.Key())
		}
	}
	return nil
}
