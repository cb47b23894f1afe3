package generator

import (
	"fmt"
	"slices"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// RolloutsValuesNone is the --rollouts-values of a release without values of its own (a first install
// with the chart's defaults): the lists then hold analysis-health's entries alone.
const RolloutsValuesNone = "none"

// The argo-rollouts chart's lists that kargoValues writes (values.yaml of argo-helm's chart 2.41.0).
// Helm merges values files map by map but replaces a list by the later file's whole list
// (pkg/cli/values mergeMaps, chartutil coalesce), so each of these, once written, must hold the
// release's entries too.
const (
	rolloutsMetricPlugins  = "metricProviderPlugins"
	rolloutsInitContainers = "initContainers"
	rolloutsVolumes        = "volumes"
	rolloutsVolumeMounts   = "volumeMounts"
)

// rolloutsValues are the release's values (KargoOptions.RolloutsValues) merged as helm merges -f files,
// with, for each controller list, the file that set it last (the one an error names).
type rolloutsValues struct {
	controller object
	source     map[string]string
	names      string // the files, for messages
}

// readRolloutsValues merges the files in helm's -f order. A file that is empty or null (what helm get
// values prints for a release installed without values) adds nothing.
func readRolloutsValues(files []File) (rolloutsValues, error) {
	rv := rolloutsValues{controller: object{}, source: map[string]string{}}
	merged := object{}
	var names []string
	for _, f := range files {
		names = append(names, f.Path)
		var v any
		if err := sigsyaml.Unmarshal(f.Data, &v); err != nil {
			return rv, fmt.Errorf("--rollouts-values %s: not YAML: %w", f.Path, err)
		}
		if v == nil {
			continue
		}
		m, ok := v.(object)
		if !ok {
			return rv, fmt.Errorf("--rollouts-values %s: chart values are a map, not a %s", f.Path, yamlKind(v))
		}
		// helm get values without -o yaml prints this title above the values
		if _, ok := m["USER-SUPPLIED VALUES"]; ok {
			return rv, fmt.Errorf("--rollouts-values %s: this is helm get values' table output: run helm get values argo-rollouts -n argo-rollouts -o yaml", f.Path)
		}
		if c, ok := m["controller"]; ok && c != nil {
			cm, ok := c.(object)
			if !ok {
				return rv, fmt.Errorf("--rollouts-values %s: controller is a %s, not a map of the chart's controller values", f.Path, yamlKind(c))
			}
			for _, k := range []string{rolloutsMetricPlugins, rolloutsInitContainers, rolloutsVolumes, rolloutsVolumeMounts} {
				if _, ok := cm[k]; ok {
					rv.source[k] = f.Path
				}
			}
		}
		merged = mergeValues(merged, m)
	}
	rv.names = strings.Join(names, ", ")
	if c, ok := merged["controller"].(object); ok {
		rv.controller = c
	}
	// The chart writes argo-rollouts-config only with createConfigmap (templates/controller/configmap.yaml):
	// without it our plugin item would go nowhere, and the verification would fail on an unknown plugin.
	if b, ok := rv.controller["createConfigmap"].(bool); ok && !b {
		return rv, fmt.Errorf("--rollouts-values %s: controller.createConfigmap is false, so the chart writes no argo-rollouts-config for the plugin: add the %s item to the ConfigMap you manage (docs/kargo.md)", rv.names, KargoPluginName)
	}
	return rv, nil
}

// mergeValues is helm's merge of -f files (helm.sh/helm/v3/pkg/cli/values mergeMaps): maps merge key by
// key, anything else — a list included — is replaced by the later file's.
func mergeValues(a, b object) object {
	out := make(object, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(object); ok {
			if am, ok := out[k].(object); ok {
				out[k] = mergeValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func yamlKind(v any) string {
	switch v.(type) {
	case object:
		return "map"
	case []any:
		return "list"
	case string:
		return "string"
	case nil:
		return "null"
	}
	return "scalar"
}

// list is the release's controller list key, each entry a map with a name. A null list is none.
func (rv rolloutsValues) list(key string) ([]object, error) {
	v := rv.controller[key]
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("--rollouts-values %s: controller.%s is a %s, not a list", rv.source[key], key, yamlKind(v))
	}
	out := make([]object, 0, len(l))
	for i, e := range l {
		m, ok := e.(object)
		if !ok {
			return nil, fmt.Errorf("--rollouts-values %s: controller.%s[%d] is a %s, not a map", rv.source[key], key, i, yamlKind(e))
		}
		if n, _ := m["name"].(string); n == "" {
			return nil, fmt.Errorf("--rollouts-values %s: controller.%s[%d] has no name", rv.source[key], key, i)
		}
		out = append(out, m)
	}
	return out, nil
}

// mergeNamed puts ours into the release's list key: in place of the entry of the same name, which must be
// one analysis-health wrote (mine), else at the end. Any other entry with the same name is someone
// else's, and replacing it would break what uses it: an error naming the file.
func (rv rolloutsValues) mergeNamed(key string, ours object, mine func(object) bool, what string) ([]any, error) {
	l, err := rv.list(key)
	if err != nil {
		return nil, err
	}
	name := ours["name"].(string)
	out := make([]any, 0, len(l)+1)
	found := false
	for i, e := range l {
		if e["name"] != name {
			out = append(out, e)
			continue
		}
		if found {
			return nil, fmt.Errorf("--rollouts-values %s: controller.%s names %s twice (entry %d)", rv.source[key], key, name, i)
		}
		if !mine(e) {
			return nil, fmt.Errorf("--rollouts-values %s: controller.%s[%d] is named %s but is not %s analysis-health writes: rename yours, since analysis-health's would replace it", rv.source[key], key, i, name, what)
		}
		found = true
		out = append(out, ours)
	}
	if !found {
		out = append(out, ours)
	}
	return out, nil
}

// mergeMetricPlugin puts our plugin item into the release's metricProviderPlugins. Ours already there (an
// earlier Project's install) is updated in place: the new location and sha256, its other fields kept, and
// its args the old ones followed by the new ones it lacks, so that each Project's --allow-namespace-pair
// adds to the admin's policy instead of replacing it.
func (rv rolloutsValues) mergeMetricPlugin(ours object) ([]any, error) {
	src := rv.source[rolloutsMetricPlugins]
	var item object
	merged, err := rv.mergeNamed(rolloutsMetricPlugins, ours, func(old object) bool {
		item = old
		return true
	}, "the plugin")
	if err != nil || item == nil {
		return merged, err
	}
	updated := make(object, len(item)+2)
	for k, v := range item {
		updated[k] = v
	}
	updated["location"] = ours["location"]
	delete(updated, "sha256") // a file:// location has none, and an old digest would not be checked
	if s, ok := ours["sha256"]; ok {
		updated["sha256"] = s
	}
	var args []any
	if old, ok := item["args"]; ok && old != nil {
		l, ok := old.([]any)
		if !ok {
			return nil, fmt.Errorf("--rollouts-values %s: the args of %s in controller.%s are a %s, not a list", src, KargoPluginName, rolloutsMetricPlugins, yamlKind(old))
		}
		for _, a := range l {
			if _, ok := a.(string); !ok {
				return nil, fmt.Errorf("--rollouts-values %s: the args of %s in controller.%s hold a %s, not a string", src, KargoPluginName, rolloutsMetricPlugins, yamlKind(a))
			}
		}
		args = append(args, l...)
	}
	if l, ok := ours["args"].([]any); ok {
		for _, a := range l {
			if !slices.Contains(args, a) {
				args = append(args, a)
			}
		}
	}
	if len(args) > 0 {
		updated["args"] = args
	}
	for i, e := range merged {
		if e.(object)["name"] == KargoPluginName {
			merged[i] = updated
		}
	}
	return merged, nil
}

// mergeVolumeMounts is mergeNamed for the controller's mounts, which must also not share our mountPath:
// the API server refuses a container with two mounts at one path.
func (rv rolloutsValues) mergeVolumeMounts(ours object) ([]any, error) {
	l, err := rv.list(rolloutsVolumeMounts)
	if err != nil {
		return nil, err
	}
	for i, m := range l {
		if m["name"] != ours["name"] && m["mountPath"] == ours["mountPath"] {
			return nil, fmt.Errorf("--rollouts-values %s: controller.%s[%d] (%v) is mounted at %s, where the plugin's volume goes: give --plugin-location another folder", rv.source[rolloutsVolumeMounts], rolloutsVolumeMounts, i, m["name"], ours["mountPath"])
		}
	}
	// a mount of ours names our volume, which mergeNamed has checked is ours
	return rv.mergeNamed(rolloutsVolumeMounts, ours, func(object) bool { return true }, "the mount")
}

// without is the release's list key without the entries named name that are ours (mine), and whether
// there were any.
func (rv rolloutsValues) without(key, name string, mine func(object) bool) ([]any, bool, error) {
	l, err := rv.list(key)
	if err != nil {
		return nil, false, err
	}
	kept := make([]any, 0, len(l))
	for _, e := range l {
		if e["name"] == name && mine(e) {
			continue
		}
		kept = append(kept, e)
	}
	return kept, len(kept) < len(l), nil
}

// ourInitContainer: analysis-health's init container runs the plugin image's binary with --copy-to.
func ourInitContainer(c object) bool {
	cmd, _ := c["command"].([]any)
	return len(cmd) >= 2 && cmd[0] == PluginImageBinary && cmd[1] == "--copy-to"
}

// ourVolume: analysis-health's volume is an emptyDir and nothing else.
func ourVolume(v object) bool {
	_, ok := v["emptyDir"]
	return ok && len(v) == 2
}
