// Package argocdcm reads resource customizations out of an argocd-cm ConfigMap the way Argo CD's
// util/settings does (GetResourceOverrides: the legacy `resource.customizations` key first, then the split
// `resource.customizations.<type>.<group>_<Kind>` keys overwriting single fields), and resolves the health
// script for a kind the way util/lua's GetHealthScript does (exact key, then wildcard). Its validation
// mirrors Argo CD's: a key Argo CD would reject is an error here too, because in Argo CD that one key
// breaks health and actions for every kind.
package argocdcm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"
)

const customizationsKey = "resource.customizations"

// Override is the part of Argo CD's ResourceOverride this project reads and writes.
type Override struct {
	HealthLua   string
	UseOpenLibs bool
	Actions     string
}

// Overrides maps "<group>/<Kind>" (or a wildcard from the legacy key) to its customization.
type Overrides map[string]Override

// FromObject validates that obj is an argocd-cm ConfigMap and parses its customizations. where names the
// object in errors.
func FromObject(where string, obj map[string]any) (Overrides, error) {
	data, err := DataFromObject(where, obj)
	if err != nil {
		return nil, err
	}
	ov, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return ov, nil
}

// DataFromObject validates that obj is an argocd-cm ConfigMap and returns its data.
func DataFromObject(where string, obj map[string]any) (map[string]string, error) {
	if obj["apiVersion"] != "v1" || obj["kind"] != "ConfigMap" {
		return nil, fmt.Errorf("%s: not an argocd-cm: want apiVersion v1, kind ConfigMap, got %v %v", where, obj["apiVersion"], obj["kind"])
	}
	meta, _ := obj["metadata"].(map[string]any)
	if name, _ := meta["name"].(string); name != "argocd-cm" {
		return nil, fmt.Errorf("%s: not an argocd-cm: ConfigMap is named %q", where, name)
	}
	data := map[string]string{}
	if raw, ok := obj["data"]; ok && raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: data is not a map", where)
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: data.%s is not a string (ConfigMap values must be quoted)", where, k)
			}
			data[k] = s
		}
	}
	return data, nil
}

// legacyOverride is one entry of the legacy `resource.customizations` YAML (Argo CD rawResourceOverride).
type legacyOverride struct {
	HealthLua   string `json:"health.lua,omitempty"`
	UseOpenLibs bool   `json:"health.lua.useOpenLibs,omitempty"`
	Actions     string `json:"actions,omitempty"`
}

// Parse reads the customizations from argocd-cm's data.
func Parse(data map[string]string) (Overrides, error) {
	ov := Overrides{}
	if raw := data[customizationsKey]; raw != "" {
		var legacy map[string]legacyOverride
		if err := yaml.Unmarshal([]byte(raw), &legacy); err != nil {
			return nil, fmt.Errorf("%s: %w", customizationsKey, err)
		}
		for k, v := range legacy {
			// An entry with only ignoreDifferences, ignoreResourceUpdates or knownTypeFields (fields this
			// struct does not read) holds no Lua: it is no script, so it is no entry here (see below).
			if o := Override(v); o != (Override{}) {
				ov[k] = o
			}
		}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, customizationsKey) {
			continue
		}
		parts := strings.SplitN(k, ".", 4)
		if len(parts) < 4 {
			continue
		}
		key, err := overrideKey(parts[3])
		if err != nil {
			return nil, err
		}
		v := data[k]
		// The customization types Argo CD's util/settings reads from split keys
		// (SettingsManager.appendResourceOverridesFromSplitKeys: health, useOpenLibs, actions,
		// ignoreDifferences, ignoreResourceUpdates, knownTypeFields; any other is an error there). Only the
		// first three are about Lua, so only they make an entry: a diff or update-filter key (the argo-helm
		// chart ships eight ignoreResourceUpdates ones by default) is not a script that could "match no kind".
		switch parts[2] {
		case "ignoreDifferences", "ignoreResourceUpdates", "knownTypeFields":
			// Not ours to interpret, but Argo CD rejects unparsable YAML here, so do we.
			var any interface{}
			if err := yaml.Unmarshal([]byte(v), &any); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			continue
		}
		o := ov[key]
		switch parts[2] {
		case "health":
			o.HealthLua = v
		case "useOpenLibs":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			o.UseOpenLibs = b
		case "actions":
			o.Actions = v
		default:
			return nil, fmt.Errorf("%s: resource customization type %s not supported", k, parts[2])
		}
		ov[key] = o
	}
	return ov, nil
}

func overrideKey(groupKind string) (string, error) {
	parts := strings.Split(groupKind, "_")
	switch {
	case len(parts) == 2:
		return parts[0] + "/" + parts[1], nil
	case len(parts) == 1 && groupKind == "all":
		return "*/*", nil
	case len(parts) == 1 && groupKind != "":
		return groupKind, nil
	}
	return "", fmt.Errorf("group kind should be in format `resource.customizations.<type>.<group_kind>` or `resource.customizations.<type>.<kind>`, got group kind: '%s'", groupKind)
}

// ConfigMapKey is Argo CD's key for a kind: "<group>/<Kind>", or "<Kind>" for the core group.
func ConfigMapKey(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// HealthScript resolves the health script for group/kind: the exact key first, then the first matching
// wildcard in key order (Argo CD iterates a Go map here, so several matching wildcards are ambiguous there;
// sorting makes ours at least repeatable). ok is false when the ConfigMap has none.
func (ov Overrides) HealthScript(group, kind string) (script string, openLibs bool, ok bool) {
	key := ConfigMapKey(group, kind)
	if o, found := ov[key]; found && o.HealthLua != "" {
		return o.HealthLua, o.UseOpenLibs, true
	}
	keys := make([]string, 0, len(ov))
	for k := range ov {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.ContainsAny(k, "*?[{") || ov[k].HealthLua == "" {
			continue
		}
		g, err := glob.Compile(k)
		if err == nil && g.Match(key) {
			return ov[k].HealthLua, ov[k].UseOpenLibs, true
		}
	}
	return "", false, false
}
