package suite

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/argocdoperator"
)

// OptionSet is one set of generator options a format is proven with.
type OptionSet struct {
	Name string
	Opts generator.Options
}

// OptionSets are the options every format is proven with.
var OptionSets = []OptionSet{
	{"default", generator.Options{}},
	{"degraded", generator.Options{Inconclusive: generator.InconclusiveDegraded}},
	{"no-block-bypass", generator.Options{BlockBypassOnFailedAnalysis: new(false)}},
	{"human-gate", generator.Options{HumanGate: generator.HumanGateHealthy}},
}

// FormSets are the source as written and the form `generate --argocd-version version` emits, with and
// without options.
func FormSets(version string) []OptionSet {
	return []OptionSet{
		{"source", generator.Options{}},
		{version + " form", generator.Options{ArgoCDVersion: version}},
		{version + " form degraded", generator.Options{ArgoCDVersion: version, Inconclusive: generator.InconclusiveDegraded}},
		{version + " form no-block-bypass", generator.Options{ArgoCDVersion: version, BlockBypassOnFailedAnalysis: new(false)}},
		{version + " form human-gate", generator.Options{ArgoCDVersion: version, HumanGate: generator.HumanGateHealthy}},
	}
}

// Generated is the generator's output for format f.
func Generated(t testing.TB, f generator.Format, o generator.Options) []generator.File {
	t.Helper()
	files, err := generator.Generate(f, o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// DecodeConfigMap decodes an argocd-cm strictly.
func DecodeConfigMap(t testing.TB, raw []byte) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "argocd-cm" {
		t.Fatalf("decoded %s %s, want ConfigMap argocd-cm", cm.Kind, cm.Name)
	}
	return &cm
}

// LoadCM loads cm (namespace argocd where it has none, as a client applying it would); Argo CD refusing
// it fails the test.
func LoadCM(t testing.TB, r Release, cm *corev1.ConfigMap) Settings {
	t.Helper()
	if cm.Namespace == "" {
		cm = cm.DeepCopy()
		cm.Namespace = "argocd"
	}
	s, err := r.Load(t, cm)
	if err != nil {
		t.Fatalf("Argo CD %s rejects the ConfigMap: %v", r.Version(), err)
	}
	return s
}

// AssertLoaded checks that Argo CD's overrides hold our script for every kind the options select,
// byte-identical to the generator's (and, with default options, to the embedded file), without open
// libraries, and no script of ours for kinds left out; and the same for the actions keys: present for the
// selected kinds with actions unless actions are off, parsed by ResourceOverride.GetActions into our
// discovery (options applied) and definitions with mergeBuiltinActions, and, with default options,
// loading exactly as ActionsData's hand-built value. exactActions false accepts an actions value with
// other bytes that Argo CD loads to the same scripts (one built by hand from the lua tree).
func AssertLoaded(t testing.TB, r Release, s Settings, o generator.Options, exactActions bool) {
	t.Helper()
	want, err := generator.ConfigMapData(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range lua.Kinds() {
		script, selected := want[generator.HealthKey(k)]
		got, ok := s.Override(k.Key())
		switch {
		case !selected:
			if ok && strings.Contains(got.HealthLua, "analysis-health") {
				t.Errorf("%s: script present though the kind was not selected", k.Key())
			}
		case !ok:
			t.Errorf("%s: no override in Argo CD's settings", k.Key())
		case got.HealthLua != script:
			t.Errorf("%s: Argo CD's script is not byte-identical to the generated one", k.Key())
		case got.UseOpenLibs:
			t.Errorf("%s: useOpenLibs is on", k.Key())
		case o.Inconclusive == "" && o.HumanGate == "" && o.ArgoCDVersion == "":
			if embedded, _ := lua.Health(k.Group, k.Kind); got.HealthLua != embedded {
				t.Errorf("%s: default options, but the script differs from the embedded file", k.Key())
			}
		}
	}
	handBuilt := LoadOnce(t, r, "hand-built actions", func() *corev1.ConfigMap { return ArgoCM(ActionsData(t)) })
	for _, k := range lua.ActionKinds() {
		value, selected := want[generator.ActionsKey(k)]
		got, _ := s.Override(k.Key())
		if !selected {
			if strings.Contains(got.Actions, "analysis-health") {
				t.Errorf("%s: actions present though not selected", k.Key())
			}
			continue
		}
		if exactActions && got.Actions != value {
			t.Errorf("%s: Argo CD's actions value is not byte-identical to the generated one", k.Key())
		}
		actions, err := s.Actions(k.Key())
		if err != nil {
			t.Errorf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
			continue
		}
		discovery, defs, err := generator.Actions(k, o)
		if err != nil {
			t.Fatal(err)
		}
		if !actions.MergeBuiltinActions || actions.DiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Errorf("%s: Argo CD loaded %+v", k.Key(), actions)
			continue
		}
		for i, d := range defs {
			if actions.Definitions[i] != (ActionDefinition{Name: d.Name, ActionLua: d.Script}) {
				t.Errorf("%s: definitions[%d] is not our %s", k.Key(), i, d.Name)
			}
		}
		if o.BlockBypassOnFailedAnalysis == nil {
			if ref, err := handBuilt.Actions(k.Key()); err != nil || !reflect.DeepEqual(ref, actions) {
				t.Errorf("%s: default options, but Argo CD loads the generated value differently from the hand-built one (%v)", k.Key(), err)
			}
		}
	}
}

// AssertGeneratedHealth evaluates every fixture through the controller's path (gitops-engine
// GetResourceHealth over the loaded overrides) and through the engine with the generated script: equal
// results. The options change Argo CD's health from that of the default script only where Degraded asks
// for it, and then on a fixture of each kind (--human-gate healthy: a Suspended Rollout Healthy with the
// gate's message, on some Rollout fixture), so the option is seen to reach Argo CD; some fixture is
// Degraded, or the comparison proves nothing.
func AssertGeneratedHealth(t testing.TB, r Release, s Settings, o generator.Options) {
	t.Helper()
	defaults := LoadOnce(t, r, "generated argocd-cm, default options, form "+o.ArgoCDVersion, func() *corev1.ConfigMap {
		return DecodeConfigMap(t, Generated(t, generator.ConfigMap, generator.Options{ArgoCDVersion: o.ArgoCDVersion})[0].Data)
	})
	changed, checked := map[string]int{}, map[string]int{}
	degraded := 0
	for _, fx := range Fixtures(t) {
		obj := Object(t, fx.Raw)
		k := KindOf(obj)
		script, err := generator.Script(k, o)
		if err != nil {
			continue // an object of a kind we ship no script for (a referenced object): nothing to compare
		}
		checked[k.Key()]++
		ours, err := recorded(r, obj, script)
		if err != nil {
			t.Errorf("%s: engine: %v", fx.Path, err)
			continue
		}
		argo, err := s.ResourceHealth(obj)
		if err != nil || argo == nil {
			t.Errorf("%s: gitops-engine GetResourceHealth: %s, %v", fx.Path, Show(argo), err)
			continue
		}
		if !SameRecorded(&ours, argo) {
			t.Errorf("%s: engine %+v != Argo CD %s %s", fx.Path, ours, r.Version(), Show(argo))
		}
		if ours.Status == engine.Degraded {
			degraded++
		}
		def, err := defaults.ResourceHealth(obj)
		if err != nil || def == nil {
			t.Fatalf("%s: default script: %s, %v", fx.Path, Show(def), err)
		}
		if !SameRecorded(def, argo) {
			// --human-gate healthy turns only a Suspended Rollout Healthy, saying why.
			gate := o.HumanGate == generator.HumanGateHealthy && k.Kind == "Rollout" && def.Status == engine.Suspended &&
				argo.Status == engine.Healthy && strings.HasPrefix(argo.Message, lua.HumanGateMessage+" (")
			if !gate && (o.Inconclusive != generator.InconclusiveDegraded || argo.Status != engine.Degraded) {
				t.Errorf("%s: options %+v changed Argo CD's health from %s to %s", fx.Path, o, Show(def), Show(argo))
			}
			changed[k.Key()]++
		}
	}
	for _, k := range lua.Kinds() {
		if checked[k.Key()] == 0 {
			t.Errorf("%s: no fixture evaluated", k.Key())
		}
		if o.Inconclusive == generator.InconclusiveDegraded && changed[k.Key()] == 0 {
			t.Errorf("%s: --inconclusive degraded changed no fixture's health in Argo CD", k.Key())
		}
		if o.HumanGate == generator.HumanGateHealthy && (changed[k.Key()] == 0) != (k.Kind != "Rollout") {
			t.Errorf("%s: --human-gate healthy changed the health of %d fixtures in Argo CD (it must change some Rollouts', and nothing else)", k.Key(), changed[k.Key()])
		}
	}
	if degraded == 0 {
		t.Error("no fixture is Degraded: the comparison proves nothing")
	}
}

// AssertGeneratedActions runs the release's API-server path (util/lua VM with the loaded overrides) over
// every fixture of each kind with actions: absent with actions off; otherwise discovery is ours first,
// then the built-in one; the merged result lists ours and the built-ins and equals the engine's on the
// same scripts; every action resolves to ours. On Rollouts it checks the guard: with it on, our blocked
// promote-full replaces the built-in entry wherever ours returns one (and on the failed-analysis
// fixture); with it off, ours never returns promote-full and the built-in entry stands.
func AssertGeneratedActions(t testing.TB, r Release, s Settings, o generator.Options) {
	t.Helper()
	actionsOn := o.Actions == nil || *o.Actions
	guard := o.BlockBypassOnFailedAnalysis == nil || *o.BlockBypassOnFailedAnalysis
	e := engine.Engine{Profile: r.Profile()}
	blocked, failedSeen := 0, false
	for _, k := range lua.ActionKinds() {
		if !actionsOn {
			if ov, _ := s.Override(k.Key()); ov.Actions != "" {
				t.Errorf("%s: actions loaded though --actions=false", k.Key())
			}
			continue
		}
		discovery, defs, err := generator.Actions(k, o)
		if err != nil {
			t.Fatal(err)
		}
		builtin := r.Capabilities().BuiltinActions[k.Key()]
		for _, fx := range FixturesOf(t, k) {
			obj := Object(t, fx.Raw)
			scripts, err := s.DiscoveryScripts(obj)
			if err != nil {
				t.Fatalf("%s: %v", fx.Path, err)
			}
			if len(scripts) != 1+min(len(builtin), 1) || scripts[0] != discovery {
				t.Fatalf("%s: discovery scripts: want the generated one first, then the built-in one if any; got %d", fx.Path, len(scripts))
			}
			ours, err := s.Discover(obj, scripts[:1])
			if err != nil {
				t.Errorf("%s: our discovery failed in Argo CD: %v", fx.Path, err)
				continue
			}
			merged, mergedErr := s.Discover(obj, scripts)
			engineMerged, engineErr := e.Discover(obj, scripts...)
			if ErrText(mergedErr) != ErrText(engineErr) {
				t.Errorf("%s: merged discovery error: argo-cd %s, engine %s", fx.Path, ErrText(mergedErr), ErrText(engineErr))
				continue
			}
			if mergedErr != nil {
				continue // the built-in discovery fails on this object (docs/actions.md caveat); ours did not
			}
			if !reflect.DeepEqual(merged, engineMerged) {
				t.Errorf("%s: merged discovery: argo-cd %+v, engine %+v", fx.Path, merged, engineMerged)
			}
			requireNames(t, merged, defs, builtin)
			if k.Kind == "Rollout" {
				builtinOnly, err := s.Discover(obj, scripts[1:])
				if err != nil {
					t.Fatalf("%s: built-in discovery: %v", fx.Path, err)
				}
				oursPromote, builtinPromote := findAction(ours, "promote-full"), findAction(builtinOnly, "promote-full")
				got := findAction(merged, "promote-full")
				if got == nil {
					got = &engine.Action{}
				}
				switch {
				case !guard && oursPromote != nil:
					t.Errorf("%s: guard off, but our discovery returns promote-full %+v", fx.Path, *oursPromote)
				case oursPromote != nil:
					blocked++
					if !got.Disabled || !strings.HasPrefix(got.DisplayName, "promote-full (blocked: ") || !reflect.DeepEqual(*got, *oursPromote) {
						t.Errorf("%s: merged promote-full %+v, want our blocked entry", fx.Path, *got)
					}
				case builtinPromote == nil || !reflect.DeepEqual(*got, *builtinPromote):
					t.Errorf("%s: merged promote-full %+v, want the built-in %+v", fx.Path, *got, builtinPromote)
				}
				if strings.HasSuffix(fx.Path, "/canary_step_analysis_failed_aborted_v1.8.yaml") {
					failedSeen = true
					if got.Disabled != guard {
						t.Errorf("%s (step analysis Failed): promote-full disabled %v, want %v with the guard %v", fx.Path, got.Disabled, guard, guard)
					}
				}
			}
			for _, d := range defs {
				if script, err := s.ActionScript(obj, d.Name); err != nil || script != d.Script {
					t.Fatalf("%s: Argo CD resolved %s to another script (%v)", fx.Path, d.Name, err)
				}
			}
		}
	}
	if actionsOn && !failedSeen {
		t.Error("the failed-analysis fixture was not checked")
	}
	if actionsOn && guard && blocked == 0 {
		t.Error("no fixture blocked promote-full: the guard is not seen to reach Argo CD")
	}
}

func findAction(actions []engine.Action, name string) *engine.Action {
	for i := range actions {
		if actions[i].Name == name {
			return &actions[i]
		}
	}
	return nil
}

// AssertInstalled is AssertLoaded, AssertGeneratedHealth and AssertGeneratedActions: what a generated
// format must give once Argo CD reads it.
func AssertInstalled(t testing.TB, r Release, s Settings, o generator.Options) {
	t.Helper()
	AssertLoaded(t, r, s, o, true)
	AssertGeneratedHealth(t, r, s, o)
	AssertGeneratedActions(t, r, s, o)
}

// GeneratedConfigMap: the argocd-cm format, loaded as is, holds only our keys (actions keys exactly for
// the selected kinds with actions, unless actions are off) and gives what AssertInstalled requires; and
// the label is what makes Argo CD see it: without it, none of our overrides load.
func GeneratedConfigMap(t *testing.T, r Release) {
	sets := append(slices.Clone(OptionSets),
		OptionSet{"rollout-only", generator.Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "Rollout"}}, Namespace: "gitops"}},
		OptionSet{"no-actions", generator.Options{Actions: new(false)}})
	for _, set := range sets {
		t.Run(set.Name, func(t *testing.T) {
			cm := DecodeConfigMap(t, Generated(t, generator.ConfigMap, set.Opts)[0].Data)
			if cm.Labels["app.kubernetes.io/part-of"] != "argocd" {
				t.Fatalf("not a loadable argocd-cm: %v", cm.Labels)
			}
			s := LoadCM(t, r, cm)
			AssertLoaded(t, r, s, set.Opts, true)
			want, err := generator.ConfigMapData(set.Opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(cm.Data) != len(want) {
				t.Errorf("ConfigMap has %d keys, want only ours", len(cm.Data))
			}
			if set.Name != "rollout-only" {
				AssertGeneratedHealth(t, r, s, set.Opts)
				AssertGeneratedActions(t, r, s, set.Opts)
			}
			for _, k := range lua.ActionKinds() {
				want := set.Opts.Actions == nil && (len(set.Opts.Kinds) == 0 || slices.Contains(set.Opts.Kinds, k))
				if _, ok := cm.Data[generator.ActionsKey(k)]; ok != want {
					t.Errorf("%s: actions key present %v, want %v", k.Key(), ok, want)
				}
			}
			unlabelled := cm.DeepCopy()
			delete(unlabelled.Labels, "app.kubernetes.io/part-of")
			if s, err := r.Load(t, unlabelled); err == nil {
				if ov, _ := s.Override("argoproj.io/Rollout"); ov.HealthLua != "" {
					t.Error("an unlabelled argocd-cm was read: the label check proves nothing")
				}
			}
		})
	}
}

// OperatorPatches: the argocd-cm the Argo CD Operator derives from the patched ArgoCD resource (the merge
// patch on a minimal resource, the JSON patch on one with entries of its own) gives what AssertInstalled
// requires, and keeps the resource's own health check. The schema validation of the patched resource is
// in the main module (test/argocd-v2.14/operator_test.go).
func OperatorPatches(t *testing.T, r Release) {
	cases := []struct {
		name      string
		format    generator.Format
		patchType string
		cr        string
	}{
		{"merge on minimal", generator.Operator, argocdoperator.Merge, argocdoperator.MinimalArgoCD},
		{"json6902 on customized", generator.OperatorJSON6902, argocdoperator.JSON, argocdoperator.CustomizedArgoCD},
	}
	sets := append(slices.Clone(OptionSets), OptionSet{"no-actions", generator.Options{Actions: new(false)}})
	for _, tc := range cases {
		for _, set := range sets {
			t.Run(tc.name+"/"+set.Name, func(t *testing.T) {
				patched, err := argocdoperator.Apply(tc.patchType, Generated(t, tc.format, set.Opts)[0].Data, []byte(tc.cr))
				if err != nil {
					t.Fatalf("patch refused: %v", err)
				}
				data, err := argocdoperator.ConfigMapData(patched)
				if err != nil {
					t.Fatal(err)
				}
				s := Load(t, r, data)
				AssertInstalled(t, r, s, set.Opts)
				if ov, _ := s.Override("cert-manager.io/Certificate"); tc.cr == argocdoperator.CustomizedArgoCD && ov.HealthLua == "" {
					t.Error("the resource's own health check was lost")
				}
			})
		}
	}
}
