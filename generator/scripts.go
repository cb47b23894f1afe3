package generator

import (
	"fmt"
	"path"

	"github.com/analysis-health/analysis-health/lua"
)

// The scripts with the options applied, and the argocd-cm data that carries them: what Generate builds
// once per call (resolved.rendering) and the public ConfigMapData, Script and Actions return.

// HealthKey is the split argocd-cm key Argo CD reads a kind's health script from
// (util/settings: resource.customizations.health.<group>_<Kind>).
func HealthKey(k lua.Kind) string { return "resource.customizations.health." + k.ConfigMapSuffix() }

// ActionsKey is the split argocd-cm key Argo CD reads a kind's resource actions from
// (util/settings: resource.customizations.actions.<group>_<Kind>, parsed by ResourceOverride.GetActions).
func ActionsKey(k lua.Kind) string { return "resource.customizations.actions." + k.ConfigMapSuffix() }

// configMapData is ConfigMapData for resolved options.
func configMapData(r resolved) (map[string]string, error) {
	data := map[string]string{}
	for _, k := range r.kinds {
		s, err := script(k, r)
		if err != nil {
			return nil, err
		}
		data[HealthKey(k)] = s
	}
	for _, k := range r.actionKinds {
		discovery, defs, err := actions(k, r)
		if err != nil {
			return nil, err
		}
		v, err := actionsValue(discovery, defs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ActionsKey(k), err)
		}
		data[ActionsKey(k)] = v
	}
	return data, nil
}

func script(k lua.Kind, r resolved) (string, error) {
	out, err := sourceScript(k, r)
	if err != nil {
		return "", err
	}
	if out, err = Render(out, r.form); err != nil {
		return "", fmt.Errorf("%s, %s form: %w", path.Join(k.Group, k.Kind, "health.lua"), r.form, err)
	}
	switch r.form {
	case FormLazy:
		// The minified form lost the source's header; say what this is and where the readable one lives, in
		// few bytes: the VM lexes this line on every call.
		out = "-- analysis-health lua/" + k.Key() + "/health.lua minified for Argo CD " + r.argocdVersion + "\n" + out
	case FormFlat:
		out = "-- analysis-health " + k.Key() + " health, one chunk for Argo CD " + r.argocdVersion +
			" (compiles the script once and caches it); source: lua/" + k.Key() + "/health.lua\n" + out
	}
	return out, nil
}

// sourceScript is the health script as written in the tree (package lua's for Generate), with the options
// applied.
func sourceScript(k lua.Kind, r resolved) (string, error) {
	src, err := treeHealth(r.src, k)
	if err != nil {
		return "", err
	}
	out, err := lua.SetOptions(src, r.healthOptions(k))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path.Join(k.Group, k.Kind, "health.lua"), err)
	}
	return out, nil
}

// healthOptions are the values kind k's options block must assign.
func (r resolved) healthOptions(k lua.Kind) map[string]any {
	o := map[string]any{"inconclusiveStatus": r.inconclusive}
	if k.Kind == "Rollout" {
		o["humanGate"] = r.humanGate
	}
	return o
}

// discoveryOptions are the values every discovery options block must assign.
func (r resolved) discoveryOptions() map[string]any {
	return map[string]any{"blockBypassOnFailedAnalysis": r.blockBypass}
}

func actions(k lua.Kind, r resolved) (string, []lua.ActionDef, error) {
	src, defs, err := treeActions(r.src, k)
	if err != nil {
		return "", nil, err
	}
	if !lua.HasOptions(src) {
		// No knobs in this script (AnalysisRun, Experiment): the embedded file as is.
		return src, defs, nil
	}
	out, err := lua.SetOptions(src, r.discoveryOptions())
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path.Join(k.Group, k.Kind, "actions", "discovery.lua"), err)
	}
	return out, defs, nil
}
