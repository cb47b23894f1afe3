package hooks

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// The Rollouts the hooks patch and the objects they copy metrics from are edited as yaml.v3 nodes, so that
// a patched document keeps its comments, key order and scalar styles, and an AnalysisRun hook carries its
// template's metrics (PromQL blocks, comments) as written.

func parseDocument(raw []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("not a single YAML document")
	}
	return &doc, nil
}

// objectNode is the mapping of the object at item (1-based inside a List, 0 for the document itself).
func objectNode(doc *yaml.Node, item int) *yaml.Node {
	root := doc.Content[0]
	if item == 0 {
		return root
	}
	items := get(root, "items")
	if items == nil || items.Kind != yaml.SequenceNode || item > len(items.Content) {
		return nil
	}
	return items.Content[item-1]
}

func encodeDocument(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// get returns the value of key in mapping m, nil when m is not a mapping or lacks the key.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// path follows keys through nested mappings.
func path(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = get(m, k)
	}
	return m
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// mapping returns the mapping under key, creating it (or replacing a null) when absent.
func mapping(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); v != nil {
		if v.Kind == yaml.MappingNode {
			if len(v.Content) == 0 {
				v.Style = 0 // an empty "{}" grows into a block mapping
			}
			return v
		}
		if isNull(v) {
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			return v
		}
		return nil
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, str(key), v)
	return v
}

// setString sets key to value in mapping m and reports whether anything changed.
func setString(m *yaml.Node, key, value string) bool {
	if v := get(m, key); v != nil {
		if v.Kind == yaml.ScalarNode && v.Value == value && v.Tag == "!!str" {
			return false
		}
		*v = *str(value)
		return true
	}
	m.Content = append(m.Content, str(key), str(value))
	return true
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// mapOf builds a block mapping from alternating keys and values.
func mapOf(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch x := kv[i+1].(type) {
		case string:
			v = str(x)
		case *yaml.Node:
			v = x
		default:
			panic(fmt.Sprintf("mapOf: %T", x))
		}
		m.Content = append(m.Content, str(kv[i].(string)), v)
	}
	return m
}

// deepCopy copies a node tree, so a template's metrics can be placed in an AnalysisRun without sharing
// nodes between documents. Aliases are resolved, since the anchor stays behind in the template.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return deepCopy(n.Alias)
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = deepCopy(child)
	}
	return &c
}
