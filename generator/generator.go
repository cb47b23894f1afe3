// Package generator renders the bundled health scripts and resource actions (package lua, the single source
// of truth) into the artifacts that install them into Argo CD: a complete argocd-cm, a merge patch for it,
// values for the argo-helm argo-cd chart, a kustomize component, and a resource_customizations-style Lua
// tree with its tests. Options reach the Lua only by rewriting the values of a script's options block, so
// with default options every emitted script is byte-identical to the embedded file.
//
// It is the library behind `analysis-health generate`, which only binds flags onto Options.
package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// Format names an artifact kind.
type Format string

const (
	// ConfigMap is a complete argocd-cm holding only our keys.
	ConfigMap Format = "argocd-cm"
	// Patch is a JSON merge patch (as YAML) for `kubectl patch configmap argocd-cm --type merge`.
	Patch Format = "patch"
	// Helm is a values file for the argo-helm argo-cd chart (configs.cm).
	Helm Format = "helm"
	// Kustomize is a folder holding a kustomize Component that patches argocd-cm.
	Kustomize Format = "kustomize"
	// Lua is a folder in Argo CD's resource_customizations layout, tests included.
	Lua Format = "lua"
	// Operator is a JSON merge patch (as YAML) for the Argo CD Operator's ArgoCD resource: it sets
	// spec.resourceHealthChecks and spec.resourceActions to exactly our entries.
	Operator Format = "operator"
	// OperatorJSON6902 is a JSON patch (as YAML) for the ArgoCD resource that appends our entries to its
	// existing lists, guarded against applying twice.
	OperatorJSON6902 Format = "operator-json6902"
)

// Formats lists every format, in the order the CLI documents them.
func Formats() []Format {
	return []Format{ConfigMap, Patch, Helm, Kustomize, Lua, Operator, OperatorJSON6902}
}

// IsDir reports whether the format is a folder of files rather than one file.
func (f Format) IsDir() bool { return f == Kustomize || f == Lua }

// ParseFormat accepts a format name, case-insensitively.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (valid: %s)", s, joinFormats())
}

func joinFormats() string {
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Values of Options.Inconclusive: the health an inconclusive analysis gives the Rollout, AnalysisRun or
// Experiment.
const (
	// InconclusiveSuspended is the default: the Rollout pauses and waits for a human, like Argo CD's
	// built-in scripts; Argo CD syncs with later waves or PostSync hooks then wait (no sync timeout by default).
	InconclusiveSuspended = "Suspended"
	// InconclusiveDegraded fails syncs and Kargo verification on an inconclusive analysis.
	InconclusiveDegraded = "Degraded"
)

// Values of Options.HumanGate: the health of a Rollout paused where only a person resumes it (a canary
// `pause: {}`, a blue-green Rollout with autoPromotionEnabled: false) after every analysis so far passed.
const (
	// HumanGateSuspended is the default, as Argo CD's built-in script: the sync with a hook or waves and
	// Kargo's Stage wait for the person.
	HumanGateSuspended = "Suspended"
	// HumanGateHealthy lets them complete while the person decides, with the message "waiting for a
	// person; analysis passed (…)". Kargo then starts verification at the pause, so use it only with the
	// plugin as the Stage's verification: it waits for full promotion (docs/hooks.md "The human gate").
	HumanGateHealthy = "Healthy"
)

// DefaultNamespace is where Argo CD's install manifests put argocd-cm.
const DefaultNamespace = "argocd"

// Options selects what to render. The zero value renders every bundled kind with default behaviour: each
// field's zero value (empty string, nil) means its default, so adding a knob never changes the output of
// existing callers.
type Options struct {
	// Inconclusive is InconclusiveSuspended (default when empty) or InconclusiveDegraded.
	Inconclusive string
	// HumanGate is HumanGateSuspended (default when empty) or HumanGateHealthy; only the Rollout script has
	// the option.
	HumanGate string
	// Kinds to include; nil or empty means all of lua.Kinds(). Order and duplicates do not matter: output is
	// always in lua.Kinds() order. A selected kind with bundled actions gets them too (unless Actions is off).
	Kinds []lua.Kind
	// Namespace of argocd-cm, used by the argocd-cm format and in the usage hints, and of the ArgoCD
	// resource in the operator formats; default DefaultNamespace.
	Namespace string
	// ArgoCDName is the name of the Argo CD Operator's ArgoCD resource the operator formats patch (a
	// DNS-1123 subdomain); default DefaultArgoCDName.
	ArgoCDName string
	// Version of analysis-health named in the header comment; default "dev".
	Version string
	// Actions emits the resource actions (resource.customizations.actions.<group>_<Kind>, and the actions/
	// folders of the lua format) of the selected kinds that have them; nil means true. A pointer, so the
	// zero Options keeps the default: write new(false) to leave them out.
	Actions *bool
	// BlockBypassOnFailedAnalysis is the Rollout discovery's blockBypassOnFailedAnalysis option: while an
	// analysis run of the current revision has failed, promote-full and skip-current-step are listed
	// disabled (docs/actions.md). nil means true; new(false) lets Argo CD's built-in entries stand. Setting
	// it to false is an error when no selected kind's discovery has the option (actions off, or no Rollout).
	BlockBypassOnFailedAnalysis *bool
	// ArgoCDVersion picks the form of the health scripts that is cheapest in that Argo CD's Lua VM
	// (FormFor); empty keeps the source as written. The lua format always holds the source.
	ArgoCDVersion string
	// Remove makes the patch format the uninstall: a merge patch that deletes (null) every key the same
	// options install, so Argo CD's built-in scripts and actions apply again. Patch format only.
	Remove bool
	// Out is where the output is written (the CLI's --out): a single-file format's usage hint names it, so
	// the command pasted from the header applies this very file (a suggested name would apply another:
	// the install instead of the --remove patch), and the regenerate command spells it out. Empty means
	// standard output, whose file name the generator cannot know: the hints say FILE.
	Out string
	// From is the live ArgoCD resource (ReadArgoCD) the operator-json6902 patch is computed against: it
	// then creates the lists and annotations the resource lacks instead of requiring them. Its name and
	// namespace must be ArgoCDName and Namespace. operator-json6902 only.
	From *ArgoCDResource
}

// File is one rendered file. Path is a slash-separated path relative to the output folder for folder
// formats, and a suggested file name for single-file formats.
type File struct {
	Path string
	Data []byte
}

// resolved is Options validated and with defaults applied, against the script tree it renders.
type resolved struct {
	// src is the script tree, in package lua's layout: lua.FS except in the tests (generate).
	src          fs.FS
	inconclusive string
	humanGate    string
	kinds        []lua.Kind
	namespace    string
	argocdName   string
	version      string
	actions      bool
	// actionKinds are the selected kinds with bundled actions, empty when actions are off.
	actionKinds   []lua.Kind
	blockBypass   bool
	remove        bool
	out           string
	from          *ArgoCDResource
	form          Form
	argocdVersion string
	// profile is the engine profile of argocdVersion, under which the lua format derives its expectations.
	profile engine.Profile
}

// Validate reports options Generate would reject, so a caller can tell bad input from a failed render.
func (o Options) Validate() error {
	_, err := o.resolve()
	return err
}

// resolve validates o against the embedded scripts.
func (o Options) resolve() (resolved, error) { return o.resolveIn(lua.FS) }

// resolveIn validates o against the script tree src.
func (o Options) resolveIn(src fs.FS) (resolved, error) {
	r := resolved{
		src:          src,
		inconclusive: o.Inconclusive, humanGate: o.HumanGate, namespace: o.Namespace, argocdName: o.ArgoCDName, version: o.Version,
		actions:     o.Actions == nil || *o.Actions,
		blockBypass: o.BlockBypassOnFailedAnalysis == nil || *o.BlockBypassOnFailedAnalysis,
		remove:      o.Remove,
		out:         o.Out,
		from:        o.From,
	}
	form, err := FormFor(o.ArgoCDVersion)
	if err != nil {
		return resolved{}, err
	}
	r.form, r.argocdVersion = form, o.ArgoCDVersion
	if p, err := engine.ParseProfile(o.ArgoCDVersion); err == nil {
		// A release no profile stands for (FormFor accepts any) keeps engine.Default.
		r.profile = p
	}
	switch r.inconclusive {
	case "":
		r.inconclusive = InconclusiveSuspended
	case InconclusiveSuspended, InconclusiveDegraded:
	default:
		return resolved{}, fmt.Errorf("inconclusive status %q is not one of %s, %s", o.Inconclusive, InconclusiveSuspended, InconclusiveDegraded)
	}
	switch r.humanGate {
	case "":
		r.humanGate = HumanGateSuspended
	case HumanGateSuspended, HumanGateHealthy:
	default:
		return resolved{}, fmt.Errorf("human gate status %q is not one of %s, %s", o.HumanGate, HumanGateSuspended, HumanGateHealthy)
	}
	if r.namespace == "" {
		r.namespace = DefaultNamespace
	}
	if !validNamespace(r.namespace) {
		return resolved{}, fmt.Errorf("namespace %q is not a valid Kubernetes namespace name (lower-case letters, digits and '-', at most 63)", r.namespace)
	}
	if r.argocdName == "" {
		r.argocdName = DefaultArgoCDName
	}
	if !validDNS1123Subdomain(r.argocdName) {
		return resolved{}, fmt.Errorf("ArgoCD name %q is not a valid Kubernetes object name (DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)", r.argocdName)
	}
	if r.version == "" {
		r.version = "dev"
	}
	all := treeKinds(src)
	if len(o.Kinds) == 0 {
		r.kinds = all
	} else {
		want := map[lua.Kind]bool{}
		for _, k := range o.Kinds {
			if !containsKind(all, k) {
				return resolved{}, fmt.Errorf("no bundled health script for %s (valid: %s)", k.Key(), kindNames(all))
			}
			want[k] = true
		}
		// lua.Kinds() order, so the same selection always renders the same bytes.
		for _, k := range all {
			if want[k] {
				r.kinds = append(r.kinds, k)
			}
		}
	}
	if r.actions {
		withActions := treeActionKinds(src)
		for _, k := range r.kinds {
			if containsKind(withActions, k) {
				r.actionKinds = append(r.actionKinds, k)
			}
		}
	}
	if !r.blockBypass {
		// A setting that changes nothing is refused rather than ignored: the user believes the guard is off.
		switch {
		case !r.actions:
			return resolved{}, errors.New("--block-bypass-on-failed-analysis=false has no effect with --actions=false")
		case len(optionedDiscoveryKinds(src, r.actionKinds)) == 0:
			return resolved{}, fmt.Errorf("--block-bypass-on-failed-analysis=false has no effect: no selected kind's discovery has the option (it applies to %s)",
				kindNames(optionedDiscoveryKinds(src, treeActionKinds(src))))
		}
	}
	return r, nil
}

// optionedDiscoveryKinds are those of kinds whose discovery.lua in src has an options block, i.e. the ones
// the discovery options reach. A block must assign every discovery option (lua.SetOptions refuses
// otherwise), so having one means having blockBypassOnFailedAnalysis.
func optionedDiscoveryKinds(src fs.FS, kinds []lua.Kind) []lua.Kind {
	var out []lua.Kind
	for _, k := range kinds {
		if discovery, _, err := treeActions(src, k); err == nil && lua.HasOptions(discovery) {
			out = append(out, k)
		}
	}
	return out
}

// validNamespace is the DNS-1123 label rule Kubernetes applies to namespace names.
func validNamespace(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

func containsKind(kinds []lua.Kind, k lua.Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func kindNames(kinds []lua.Kind) string {
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, k.Kind)
	}
	return strings.Join(names, ", ")
}

// ParseKinds resolves kind names as a user types them: "Rollout" or "argoproj.io/Rollout", any case.
func ParseKinds(names []string) ([]lua.Kind, error) {
	all := lua.Kinds()
	var out []lua.Kind
	for _, name := range names {
		name = strings.TrimSpace(name)
		var found *lua.Kind
		for i, k := range all {
			if strings.EqualFold(name, k.Kind) || strings.EqualFold(name, k.Key()) {
				found = &all[i]
				break
			}
		}
		if found == nil {
			return nil, fmt.Errorf("unknown kind %q (valid: %s)", name, kindNames(all))
		}
		out = append(out, *found)
	}
	return out, nil
}

// renderers render each format from what resolved.rendering hands them.
var renderers = map[Format]func(rendering) ([]File, error){
	ConfigMap:        renderConfigMap,
	Patch:            renderPatch,
	Helm:             renderHelm,
	Kustomize:        renderKustomize,
	Lua:              renderLuaTree,
	Operator:         renderOperator,
	OperatorJSON6902: renderOperatorJSON6902,
}

// Generate renders one format. Single-file formats return exactly one File; folder formats return their
// files sorted by path.
func Generate(f Format, o Options) ([]File, error) { return generate(lua.FS, f, o) }

// generate renders format f from the script tree src, laid out as package lua (<group>/<Kind>/health.lua,
// health_test.yaml, testdata/, actions/): Generate renders lua.FS, the tests also a small stub tree, so that
// their goldens of every format and option set hold the format rather than copies of the bundled scripts.
func generate(src fs.FS, f Format, o Options) ([]File, error) {
	r, err := o.resolveIn(src)
	if err != nil {
		return nil, err
	}
	if r.remove && f != Patch {
		return nil, fmt.Errorf("remove applies to the %s format only, not %s", Patch, f)
	}
	if r.from != nil && f != OperatorJSON6902 {
		return nil, fmt.Errorf("from applies to the %s format only, not %s", OperatorJSON6902, f)
	}
	render, ok := renderers[f]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (valid: %s)", f, joinFormats())
	}
	in, err := r.rendering(f)
	if err != nil {
		return nil, err
	}
	files, err := render(in)
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// ConfigMapData is the argocd-cm data every ConfigMap-shaped format carries: one health key per selected
// kind and, unless actions are off, one actions key per selected kind with bundled actions.
func ConfigMapData(o Options) (map[string]string, error) {
	r, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return configMapData(r)
}

// Script renders the health script of one kind with the options applied.
func Script(k lua.Kind, o Options) (string, error) {
	r, err := o.resolve()
	if err != nil {
		return "", err
	}
	return script(k, r)
}

// Actions renders one kind's action discovery script with the options applied, and its action
// definitions (verbatim: no action script has options). A kind without bundled actions gives an error
// wrapping lua.ErrNoActions. Actions being off does not matter here: it only decides what Generate emits.
func Actions(k lua.Kind, o Options) (discovery string, defs []lua.ActionDef, err error) {
	r, err := o.resolve()
	if err != nil {
		return "", nil, err
	}
	return actions(k, r)
}

// command is the CLI invocation that reproduces an artifact, for its header.
func (r resolved) command(f Format) string {
	kinds := make([]string, 0, len(r.kinds))
	for _, k := range r.kinds {
		kinds = append(kinds, k.Kind)
	}
	// Every option spelled out, defaults included, so the command reproduces the file even if a default
	// changes. Bool flags need the = form.
	actions := "--actions=false"
	if r.actions {
		actions = fmt.Sprintf("--actions=true --block-bypass-on-failed-analysis=%v", r.blockBypass)
	}
	version := ""
	if r.argocdVersion != "" {
		// Only when set, so artifacts made before the flag existed regenerate unchanged.
		version = " --argocd-version " + r.argocdVersion
	}
	target := "--namespace " + r.namespace
	if f == Operator || f == OperatorJSON6902 {
		target = "--argocd-name " + r.argocdName + " " + target
	}
	if r.humanGate != HumanGateSuspended {
		// Only when set, as --argocd-version.
		version += " --human-gate " + strings.ToLower(r.humanGate)
	}
	if r.remove {
		version += " --remove"
	}
	if r.from != nil {
		// The patch depends on the resource read: the command names where it came from.
		version += " --from " + shellQuote(r.from.source)
	}
	if r.out != "" {
		version += " --out " + shellQuote(r.out)
	}
	return fmt.Sprintf("analysis-health generate --format %s --inconclusive %s --kinds %s %s %s%s",
		f, strings.ToLower(r.inconclusive), strings.Join(kinds, ","), target, actions, version)
}

// rendering hands a format's renderer everything it reads, built once per Generate: the renderers take
// their header and their argocd-cm data from it, and reach back for nothing.
func (r resolved) rendering(f Format) (rendering, error) {
	in := rendering{resolved: r, header: header{version: r.version, command: r.command(f)}}
	if f == Lua {
		// The tree holds the scripts as written (renderLuaTree), not argocd-cm's form.
		return in, nil
	}
	data, err := configMapData(r)
	if err != nil {
		return rendering{}, err
	}
	in.data = data
	return in, nil
}

// outFile is the file a single-file format's usage hint names: --out, or FILE for standard output.
func (r resolved) outFile() string {
	if r.out == "" {
		return "FILE"
	}
	return shellQuote(r.out)
}

// shellQuote quotes s for a POSIX shell when it holds anything but characters no shell treats specially,
// so a usage hint stays a command to paste whatever --out was.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./-=:@+,%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
