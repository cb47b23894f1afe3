package generator

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
)

// Names of the files the single-file formats suggest, and of the kustomize folder's files.
const (
	configMapFile     = "argocd-cm.yaml"
	patchFile         = "argocd-cm-patch.yaml"
	helmFile          = "values.yaml"
	kustomizationFile = "kustomization.yaml"
)

func renderConfigMap(r resolved) ([]File, error) {
	data, err := configMapData(r)
	if err != nil {
		return nil, err
	}
	doc := mapping(
		"apiVersion", str("v1"),
		"kind", str("ConfigMap"),
		"metadata", mapping(
			"name", str("argocd-cm"),
			"namespace", str(r.namespace),
			// Argo CD's SettingsManager only watches ConfigMaps with part-of: argocd; name matches install.yaml.
			"labels", mapping(
				"app.kubernetes.io/name", str("argocd-cm"),
				"app.kubernetes.io/part-of", str("argocd"),
			),
		),
		"data", scripts(data),
	)
	out, err := encode(r.header(ConfigMap,
		"A complete argocd-cm holding only the analysis-health keys. Argo CD reads all its settings from this one",
		"ConfigMap: merge these data keys into the argocd-cm you manage rather than replacing it (docs/install.md).",
	), doc, data)
	if err != nil {
		return nil, err
	}
	return []File{{Path: configMapFile, Data: out}}, nil
}

func renderPatch(r resolved) ([]File, error) {
	data, err := configMapData(r)
	if err != nil {
		return nil, err
	}
	if r.remove {
		// null deletes a key in a merge patch (RFC 7386); every other setting stays.
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		nulls := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range keys {
			nulls.Content = append(nulls.Content, str(k), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
		}
		out, err := encode(r.header(Patch,
			"JSON merge patch that removes the analysis-health keys of argocd-cm, so Argo CD's built-in health",
			"scripts and actions apply again (docs/install.md, uninstall):",
			"  kubectl patch configmap argocd-cm -n "+r.namespace+" --type merge --patch-file "+patchFile,
		), mapping("data", nulls), nil)
		if err != nil {
			return nil, err
		}
		return []File{{Path: patchFile, Data: out}}, nil
	}
	// Only data keys: a merge patch replaces exactly the keys it names and leaves every other setting alone.
	doc := mapping("data", scripts(data))
	out, err := encode(r.header(Patch,
		"JSON merge patch that adds or replaces only the analysis-health keys of argocd-cm:",
		"  kubectl patch configmap argocd-cm -n "+r.namespace+" --type merge --patch-file "+patchFile,
	), doc, data)
	if err != nil {
		return nil, err
	}
	return []File{{Path: patchFile, Data: out}}, nil
}

func renderHelm(r resolved) ([]File, error) {
	data, err := configMapData(r)
	if err != nil {
		return nil, err
	}
	// The chart copies every configs.cm key verbatim into argocd-cm (argo-cd.config.cm in _helpers.tpl).
	doc := mapping("configs", mapping("cm", scripts(data)))
	out, err := encode(r.header(Helm,
		"Values for the argo-helm argo-cd chart; Helm merges them with your other values files:",
		"  helm upgrade RELEASE argo/argo-cd -n "+r.namespace+" -f your-values.yaml -f "+helmFile,
	), doc, data)
	if err != nil {
		return nil, err
	}
	return []File{{Path: helmFile, Data: out}}, nil
}

func renderKustomize(r resolved) ([]File, error) {
	data, err := configMapData(r)
	if err != nil {
		return nil, err
	}
	// A Component, because a plain Kustomization can only patch resources it includes itself, and this
	// folder cannot know where the user's Argo CD base lives.
	kust := mapping(
		"apiVersion", str("kustomize.config.k8s.io/v1alpha1"),
		"kind", str("Component"),
		"patches", sequence(mapping("path", str(patchFile))),
	)
	kustOut, err := encode(r.header(Kustomize,
		"A kustomize Component that adds the analysis-health keys to argocd-cm. List this folder under",
		"`components:` in the kustomization that installs Argo CD (docs/install.md).",
	), kust, nil)
	if err != nil {
		return nil, err
	}
	// No namespace and no target: kustomize matches the patch by kind and name (before the parent's
	// `namespace:` is applied, or by the id the base had before its own), and fails the build when no
	// argocd-cm is found instead of silently patching nothing.
	patch := mapping(
		"apiVersion", str("v1"),
		"kind", str("ConfigMap"),
		"metadata", mapping("name", str("argocd-cm")),
		"data", scripts(data),
	)
	patchOut, err := encode(r.header(Kustomize,
		"Strategic-merge patch applied by "+kustomizationFile+": adds or replaces only the analysis-health keys.",
	), patch, data)
	if err != nil {
		return nil, err
	}
	return []File{{Path: kustomizationFile, Data: kustOut}, {Path: patchFile, Data: patchOut}}, nil
}

// YAML node builders. Node order is output order, so output is deterministic by construction.

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func literal(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.LiteralStyle}
}

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i < len(kv); i += 2 {
		n.Content = append(n.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// scripts is a mapping of key → script in sorted key order, each script a literal block scalar.
func scripts(data map[string]string) *yaml.Node {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range keys {
		n.Content = append(n.Content, str(k), literal(data[k]))
	}
	return n
}

// encode writes header then doc, and checks that every script in want came out as a literal block scalar
// holding exactly the script: yaml.v3 silently falls back to a quoted string for text a block scalar
// cannot hold (a line ending in a space, control characters), which would still load but be unreadable.
func encode(header string, doc *yaml.Node, want map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if len(want) == 0 {
		return out, nil
	}
	var back yaml.Node
	if err := yaml.Unmarshal(out, &back); err != nil {
		return nil, fmt.Errorf("generated YAML does not load: %w", err)
	}
	found := map[string]bool{}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if s, ok := want[k.Value]; ok && v.Kind == yaml.ScalarNode && v.Style&yaml.LiteralStyle != 0 && v.Value == s {
					found[k.Value] = true
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&back)
	for k := range want {
		if !found[k] {
			return nil, fmt.Errorf("%s: the script cannot be written as a YAML block scalar (a line ending in whitespace, or a control character?)", k)
		}
	}
	return out, nil
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)}
}

// resourceActions mirrors Argo CD's v1alpha1.ResourceActions field for field (json tags, as
// ResourceOverride.GetActions reads it with sigs.k8s.io/yaml), to check what actionsValue wrote.
type resourceActions struct {
	ActionDiscoveryLua  string                 `json:"discovery.lua,omitempty"`
	Definitions         []resourceActionDefRaw `json:"definitions,omitempty"`
	MergeBuiltinActions bool                   `json:"mergeBuiltinActions,omitempty"`
}

type resourceActionDefRaw struct {
	Name      string `json:"name"`
	ActionLua string `json:"action.lua"`
}

// actionsValue is the value of resource.customizations.actions.<group>_<Kind>: Argo CD's ResourceActions as
// YAML, with mergeBuiltinActions: true so Argo CD's own actions stay in the menu (its discovery runs after
// ours, and ours wins on a duplicate name), and every script a literal block scalar. The result is itself
// written as a block scalar inside the ConfigMap, so it is checked to load back to exactly these scripts.
func actionsValue(discovery string, defs []lua.ActionDef) (string, error) {
	items := sequence()
	for _, d := range defs {
		items.Content = append(items.Content, mapping("name", str(d.Name), "action.lua", literal(d.Script)))
	}
	doc := mapping("mergeBuiltinActions", boolean(true), "discovery.lua", literal(discovery))
	if len(defs) > 0 {
		doc.Content = append(doc.Content, str("definitions"), items)
	}
	out, err := encode("", doc, nil)
	if err != nil {
		return "", err
	}
	want := resourceActions{ActionDiscoveryLua: discovery, MergeBuiltinActions: true}
	for _, d := range defs {
		want.Definitions = append(want.Definitions, resourceActionDefRaw{Name: d.Name, ActionLua: d.Script})
	}
	var got resourceActions
	if err := sigsyaml.UnmarshalStrict(out, &got); err != nil {
		return "", fmt.Errorf("generated actions value does not load: %w", err)
	}
	if !reflect.DeepEqual(got, want) {
		return "", errors.New("generated actions value does not load back to the scripts")
	}
	var back yaml.Node
	if err := yaml.Unmarshal(out, &back); err != nil {
		return "", err
	}
	if bad := nonLiteralScripts(&back); len(bad) > 0 {
		return "", fmt.Errorf("%s cannot be written as a YAML block scalar (a line ending in whitespace, or a control character?)", strings.Join(bad, ", "))
	}
	return string(out), nil
}

// nonLiteralScripts names the discovery.lua and action.lua values below n that are not literal block scalars.
func nonLiteralScripts(n *yaml.Node) []string {
	var bad []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if (k.Value == "discovery.lua" || k.Value == "action.lua") && (v.Kind != yaml.ScalarNode || v.Style&yaml.LiteralStyle == 0) {
				bad = append(bad, k.Value)
			}
		}
	}
	for _, c := range n.Content {
		bad = append(bad, nonLiteralScripts(c)...)
	}
	return bad
}
