package argocdcm

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/lua"
)

// Source says where the script Argo CD uses for a kind comes from.
type Source string

const (
	ExactKey        Source = "argocd-cm"          // the kind's own key
	Wildcard        Source = "argocd-cm wildcard" // a glob key of the legacy resource.customizations
	Builtin         Source = "built-in"           // resource_customizations/<group>/<Kind>/
	BuiltinWildcard Source = "built-in wildcard"  // v3: a resource_customizations folder with "_" for "*"
	GoCheck         Source = "Go check"           // gitops-engine's health.GetHealthCheckFunc
	None            Source = "none"
)

// HealthResolution is the health script Argo CD uses for a kind (util/lua GetHealthScript).
type HealthResolution struct {
	Source Source
	// Key is the argocd-cm override key, or the built-in script's path.
	Key string
	// Script is the argocd-cm script (empty for built-ins and Go checks).
	Script   string
	OpenLibs bool
	// Ambiguous lists the other wildcard keys that match too: Argo CD then picks one in Go map order.
	Ambiguous []string
}

// ActionsResolution is what Argo CD's API server uses for a kind's actions (util/lua
// GetResourceActionDiscovery and GetResourceAction).
type ActionsResolution struct {
	// Discovery lists the discovery scripts in the order Argo CD runs them: the argocd-cm one (Key is the
	// override key), then the built-in one (Key is its path) unless argocd-cm's hides it.
	Discovery []ScriptRef
	// Custom are argocd-cm's action definitions, by name; Builtin the built-in actions, by name.
	Custom, Builtin []string
	// BuiltinHidden: argocd-cm's actions have mergeBuiltinActions false, so the built-in discovery does not
	// run (the built-in actions stay runnable by name).
	BuiltinHidden bool
}

// ScriptRef names one script.
type ScriptRef struct {
	Source Source
	Key    string
	Script string
}

// Resolution is everything Argo CD uses for one kind.
type Resolution struct {
	Key     string
	Health  HealthResolution
	Actions ActionsResolution
}

// customActions is Argo CD's ResourceActions, as argocd-cm's actions value holds it.
type customActions struct {
	Discovery   string `json:"discovery.lua,omitempty"`
	Definitions []struct {
		Name      string `json:"name"`
		ActionLua string `json:"action.lua"`
	} `json:"definitions,omitempty"`
	MergeBuiltinActions bool `json:"mergeBuiltinActions,omitempty"`
}

func parseActions(raw string) (customActions, error) {
	var a customActions
	err := yaml.Unmarshal([]byte(raw), &a)
	return a, err
}

// Resolve says which scripts Argo CD uses for group/kind given these overrides, the release's built-in
// scripts and whether gitops-engine has a Go health check for the kind.
func (ov Overrides) Resolve(group, kind string, ix builtin.Index, goCheck bool) (Resolution, error) {
	key := ConfigMapKey(group, kind)
	r := Resolution{Key: key}

	var matches []string
	for _, k := range ov.wildcardKeys() {
		if ov[k].HealthLua != "" && globMatch(k, key) {
			matches = append(matches, k)
		}
	}
	switch o, ok := ov[key]; {
	case ok && o.HealthLua != "":
		r.Health = HealthResolution{Source: ExactKey, Key: key, Script: o.HealthLua, OpenLibs: o.UseOpenLibs}
	case len(matches) > 0:
		w := ov[matches[0]]
		r.Health = HealthResolution{Source: Wildcard, Key: matches[0], Script: w.HealthLua, OpenLibs: w.UseOpenLibs, Ambiguous: matches[1:]}
	default:
		if p, wildcard, ok := ix.Health(key); ok {
			src := Builtin
			if wildcard {
				src = BuiltinWildcard
			}
			r.Health = HealthResolution{Source: src, Key: p, OpenLibs: true}
		} else if goCheck {
			r.Health = HealthResolution{Source: GoCheck}
		} else {
			r.Health = HealthResolution{Source: None}
		}
	}

	builtinDiscovery, hasBuiltinDiscovery := ix.Discovery(key)
	r.Actions.Builtin = ix.Actions(key)
	if o, ok := ov[key]; ok && o.Actions != "" {
		a, err := parseActions(o.Actions)
		if err != nil {
			return r, fmt.Errorf("%s actions: %w", key, err)
		}
		r.Actions.Discovery = append(r.Actions.Discovery, ScriptRef{Source: ExactKey, Key: key, Script: a.Discovery})
		for _, d := range a.Definitions {
			r.Actions.Custom = append(r.Actions.Custom, d.Name)
		}
		if !a.MergeBuiltinActions {
			r.Actions.BuiltinHidden = hasBuiltinDiscovery
			return r, nil
		}
	}
	if hasBuiltinDiscovery {
		r.Actions.Discovery = append(r.Actions.Discovery, ScriptRef{Source: Builtin, Key: builtinDiscovery})
	}
	return r, nil
}

// Action is the script Argo CD runs for action name on the kind: argocd-cm's definition of that name
// first, then the built-in one (util/lua GetResourceAction).
func (ov Overrides) Action(group, kind, name string, ix builtin.Index) (ScriptRef, bool, error) {
	key := ConfigMapKey(group, kind)
	if o, ok := ov[key]; ok && o.Actions != "" {
		a, err := parseActions(o.Actions)
		if err != nil {
			return ScriptRef{}, false, fmt.Errorf("%s actions: %w", key, err)
		}
		for _, d := range a.Definitions {
			if d.Name == name {
				return ScriptRef{Source: ExactKey, Key: key, Script: d.ActionLua}, true, nil
			}
		}
	}
	if p, ok := ix.Action(key, name); ok {
		return ScriptRef{Source: Builtin, Key: p}, true, nil
	}
	return ScriptRef{}, false, nil
}

func (ov Overrides) wildcardKeys() []string {
	var out []string
	for k := range ov {
		if strings.ContainsAny(k, "*?[{") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func globMatch(pattern, key string) bool {
	g, err := glob.Compile(pattern)
	return err == nil && g.Match(key)
}

// Kinds lists the keys with any customization worth resolving: every exact override key, and every
// built-in kind a wildcard health override matches (it replaces the built-in script there), sorted.
func (ov Overrides) Kinds(ix builtin.Index) []string {
	seen := map[string]bool{}
	for k, o := range ov {
		if strings.ContainsAny(k, "*?[{") || k == "*/*" {
			continue
		}
		if o.HealthLua != "" || o.Actions != "" || o.UseOpenLibs {
			seen[k] = true
		}
	}
	for _, w := range ov.wildcardKeys() {
		if ov[w].HealthLua == "" {
			continue
		}
		for _, k := range ix.Kinds() {
			if !strings.Contains(k, "_") && globMatch(w, k) {
				seen[k] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SplitKey turns "<group>/<Kind>" (or "<Kind>") back into group and kind.
func SplitKey(key string) (group, kind string) {
	if i := strings.LastIndex(key, "/"); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// Warning is a customization that does not do what it seems to.
type Warning struct {
	// Key is the argocd-cm data key it is about.
	Key     string
	Message string
}

func (w Warning) String() string { return w.Key + ": " + w.Message }

// Warnings finds argocd-cm customizations that match nothing or are shadowed: useOpenLibs without a
// health script, kinds that cannot be Kubernetes kinds (lower-case) or differ from a built-in kind only in
// case, wildcard actions (Argo CD looks actions up by exact key only), wildcards that replace built-in
// scripts or are shadowed by exact keys or by each other, legacy entries overwritten by split keys, and
// actions that hide the built-in ones. present, if not nil, holds the keys of the objects the user
// deploys: then keys matching none of them are reported too.
func Warnings(data map[string]string, ix builtin.Index, present map[string]bool) ([]Warning, error) {
	ov, err := Parse(data)
	if err != nil {
		return nil, err
	}
	present = WithControllerMade(present)
	var out []Warning
	add := func(key, format string, a ...any) { out = append(out, Warning{key, fmt.Sprintf(format, a...)}) }
	builtinKinds := ix.Kinds()
	lower := map[string]string{}
	for _, k := range builtinKinds {
		lower[strings.ToLower(k)] = k
	}

	// Which data key set each field: the legacy map first, then split keys overwrite single fields.
	legacy := map[string]legacyOverride{}
	if raw := data[customizationsKey]; raw != "" {
		if err := yaml.Unmarshal([]byte(raw), &legacy); err != nil {
			return nil, err
		}
	}
	splitKey := func(field, key string) string {
		g, k := SplitKey(key)
		if g == "" {
			return "resource.customizations." + field + "." + k
		}
		return "resource.customizations." + field + "." + g + "_" + k
	}
	has := func(k string) bool { _, ok := data[k]; return ok }
	for key, l := range legacy {
		where := customizationsKey + " " + key
		if l.HealthLua != "" && has(splitKey("health", key)) {
			add(where, "health.lua is replaced by %s", splitKey("health", key))
		}
		if l.Actions != "" && has(splitKey("actions", key)) {
			add(where, "actions are replaced by %s", splitKey("actions", key))
		}
		if l.UseOpenLibs && has(splitKey("useOpenLibs", key)) {
			add(where, "health.lua.useOpenLibs is replaced by %s", splitKey("useOpenLibs", key))
		}
	}

	keys := make([]string, 0, len(ov))
	for k := range ov {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	origin := func(field, key string) string {
		if has(splitKey(field, key)) {
			return splitKey(field, key)
		}
		return customizationsKey + " " + key
	}
	wildcards := ov.wildcardKeys()
	for _, key := range keys {
		o := ov[key]
		if key == "*/*" {
			continue // resource.customizations.*.all, and Argo CD v3's own status-ignore entry
		}
		if strings.ContainsAny(key, "*?[{") {
			if o.Actions != "" {
				add(origin("actions", key), "actions are looked up by the exact group/kind only, so wildcard actions never apply")
			}
			if o.HealthLua == "" {
				if o.UseOpenLibs {
					add(origin("useOpenLibs", key), "useOpenLibs without a health script has no effect")
				}
				continue
			}
			var replaced, shadowedBy []string
			for _, k := range builtinKinds {
				if strings.Contains(k, "_") || !globMatch(key, k) {
					continue
				}
				if e, ok := ov[k]; ok && e.HealthLua != "" {
					continue
				}
				if _, _, ok := ix.Health(k); ok {
					replaced = append(replaced, k)
				}
			}
			for _, k := range keys {
				_, kk := SplitKey(k)
				if k != key && !strings.ContainsAny(k, "*?[{") && ov[k].HealthLua != "" && globMatch(key, k) && kk != "" && unicode.IsUpper([]rune(kk)[0]) {
					shadowedBy = append(shadowedBy, k)
				}
			}
			for _, other := range wildcards {
				if other < key && ov[other].HealthLua != "" && overlap(key, other, builtinKinds, keys) {
					add(origin("health", key), "overlaps wildcard %s: where both match, Argo CD picks either (Go map order)", other)
				}
			}
			if len(replaced) > 0 {
				add(origin("health", key), "replaces Argo CD's built-in health script of %s", strings.Join(replaced, ", "))
			}
			if len(shadowedBy) > 0 {
				add(origin("health", key), "does not apply to %s, whose own key wins", strings.Join(shadowedBy, ", "))
			}
			if present != nil && !matchesAny(key, present) {
				add(origin("health", key), "matches none of the given objects' kinds")
			}
			continue
		}
		_, k := SplitKey(key)
		if k != "" && !unicode.IsUpper([]rune(k)[0]) {
			add(origin(firstField(o), key), "kind %q starts lower-case: Kubernetes kinds are CamelCase and the key is case-sensitive, so it matches nothing", k)
		} else if canon, ok := lower[strings.ToLower(key)]; ok && canon != key {
			add(origin(firstField(o), key), "matches nothing: Argo CD's built-in kind is %s (keys are case-sensitive)", canon)
		}
		if o.UseOpenLibs && o.HealthLua == "" {
			add(origin("useOpenLibs", key), "useOpenLibs without an argocd-cm health script has no effect (built-in scripts always run with open libraries)")
		}
		if o.Actions != "" {
			a, err := parseActions(o.Actions)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", origin("actions", key), err)
			}
			if builtins := ix.Actions(key); !a.MergeBuiltinActions && len(builtins) > 0 {
				add(origin("actions", key), "hides the built-in actions %s from the menu (mergeBuiltinActions is false); they stay runnable by name", strings.Join(builtins, ", "))
			}
			for _, d := range a.Definitions {
				if _, ok := ix.Action(key, d.Name); ok && !bundledAction(key, d.Name, d.ActionLua) {
					add(origin("actions", key), "action %s replaces the built-in action of that name", d.Name)
				}
			}
		}
		if present != nil && !present[key] {
			add(origin(firstField(o), key), "matches none of the given objects' kinds")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// bundledAction reports whether script is analysis-health's own action of that name for key, as
// `generate` writes it: that replacement of a built-in is deliberate (docs/actions.md), and the scripts
// table still shows it, so it is no warning. An edited copy is one again.
func bundledAction(key, name, script string) bool {
	group, kind := SplitKey(key)
	_, defs, err := lua.Actions(group, kind)
	if err != nil {
		return false
	}
	for _, d := range defs {
		if d.Name == name && strings.TrimSpace(d.Script) == strings.TrimSpace(script) {
			return true
		}
	}
	return false
}

func firstField(o Override) string {
	switch {
	case o.HealthLua != "":
		return "health"
	case o.Actions != "":
		return "actions"
	}
	return "useOpenLibs"
}

func matchesAny(pattern string, keys map[string]bool) bool {
	for k := range keys {
		if globMatch(pattern, k) {
			return true
		}
	}
	return false
}

// overlap says whether two wildcards match a common known kind.
func overlap(a, b string, kinds ...[]string) bool {
	for _, list := range kinds {
		for _, k := range list {
			if globMatch(a, k) && globMatch(b, k) {
				return true
			}
		}
	}
	return false
}
