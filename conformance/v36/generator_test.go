package v36

import (
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

// The generated argocd-cm, loaded through Argo CD v3.6.1's util/settings, carries our scripts byte for byte,
// and every fixture evaluated through v3.6's controller path with those overrides equals the engine's v3
// profile on the same generated script — with default options, inconclusive=Degraded, the failed-analysis
// guard off, and actions off. The actions keys load through the same path and are checked by
// assertGeneratedActions.
func TestGeneratedConfigMapInArgoCDv36(t *testing.T) {
	sets := []struct {
		name string
		opts generator.Options
	}{
		{"default", generator.Options{}},
		{"degraded", generator.Options{Inconclusive: generator.InconclusiveDegraded}},
		{"no-block-bypass", generator.Options{BlockBypassOnFailedAnalysis: new(false)}},
		{"no-actions", generator.Options{Actions: new(false)}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			opts := set.opts
			files, err := generator.Generate(generator.ConfigMap, opts)
			if err != nil || len(files) != 1 {
				t.Fatalf("generate: %v (%d files)", err, len(files))
			}
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict(files[0].Data, &cm); err != nil {
				t.Fatal(err)
			}
			if cm.Labels["app.kubernetes.io/part-of"] != "argocd" || cm.Name != "argocd-cm" {
				t.Fatalf("not a loadable argocd-cm: %s %v", cm.Name, cm.Labels)
			}
			ov := overrides(t, cm.Data)
			fixtures, err := lua.Fixtures()
			if err != nil {
				t.Fatal(err)
			}
			degraded := 0
			for _, k := range lua.Kinds() {
				want, err := generator.Script(k, opts)
				if err != nil {
					t.Fatal(err)
				}
				o, ok := ov[k.Key()]
				if !ok || o.HealthLua != want || o.UseOpenLibs {
					t.Fatalf("%s: override missing, altered or with open libs", k.Key())
				}
			}
			for _, f := range fixtures {
				obj := object(t, f.Raw)
				script, err := generator.Script(lua.Kind{Group: obj.GroupVersionKind().Group, Kind: obj.GetKind()}, opts)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := recorded(obj.Object, script)
				if err != nil {
					t.Fatal(err)
				}
				got, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides(ov))
				if err != nil || got == nil {
					t.Fatalf("%s: %v %v", f.Path, got, err)
				}
				if string(got.Status) != ours.Status || got.Message != ours.Message {
					t.Errorf("%s: argo-cd v3.6 %+v, engine %+v", f.Path, *got, ours)
				}
				if ours.Status == engine.Degraded {
					degraded++
				}
			}
			if degraded == 0 {
				t.Error("no fixture is Degraded: the comparison proves nothing")
			}
			assertGeneratedActions(t, ov, opts)
		})
	}
}

// assertGeneratedActions checks the generated actions keys in Argo CD v3.6.1: absent with actions off;
// otherwise parsed by ResourceOverride.GetActions into our discovery (options applied) and definitions
// with mergeBuiltinActions, loading exactly as the hand-built value of actions_test.go with default
// options; and through the API server's path (lua.VM with the overrides) every fixture's discovery is ours
// then the built-in one, the merged result lists ours and v3.6's built-ins and equals the engine's, and on
// Rollouts promote-full is our blocked entry where our discovery returns one (the failed-analysis fixture
// among them) with the guard on, and always the built-in entry with it off.
func assertGeneratedActions(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options) {
	t.Helper()
	actionsOn := o.Actions == nil || *o.Actions
	guard := o.BlockBypassOnFailedAnalysis == nil || *o.BlockBypassOnFailedAnalysis
	handBuilt := actionsData(t)
	vm := argolua.VM{ResourceOverrides: ov}
	blocked, failedSeen := 0, false
	for _, k := range lua.ActionKinds() {
		override := ov[k.Key()]
		if !actionsOn {
			if override.Actions != "" {
				t.Errorf("%s: actions loaded though --actions=false", k.Key())
			}
			continue
		}
		actions, err := override.GetActions()
		if err != nil {
			t.Fatalf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
		}
		discovery, defs, err := generator.Actions(k, o)
		if err != nil {
			t.Fatal(err)
		}
		if !actions.MergeBuiltinActions || actions.ActionDiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Fatalf("%s: Argo CD loaded %+v", k.Key(), actions)
		}
		for i, d := range defs {
			if actions.Definitions[i].Name != d.Name || actions.Definitions[i].ActionLua != d.Script {
				t.Errorf("%s: definitions[%d] is not our %s", k.Key(), i, d.Name)
			}
		}
		if o.BlockBypassOnFailedAnalysis == nil {
			ref, err := (&v1alpha1.ResourceOverride{Actions: handBuilt[generator.ActionsKey(k)]}).GetActions()
			if err != nil || !reflect.DeepEqual(ref, actions) {
				t.Errorf("%s: default options, but Argo CD loads the generated value differently from the hand-built one (%v)", k.Key(), err)
			}
		}
		builtin := v36BuiltinActions[k.Key()]
		for _, fx := range fixturesOf(t, k.Group, k.Kind) {
			obj := object(t, fx.Raw)
			scripts, err := vm.GetResourceActionDiscovery(obj)
			if err != nil {
				t.Fatalf("%s: %v", fx.Path, err)
			}
			if len(scripts) != 1+min(len(builtin), 1) || scripts[0] != discovery {
				t.Fatalf("%s: discovery scripts: want the generated one first, then the built-in one if any; got %d", fx.Path, len(scripts))
			}
			ours, err := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts[:1])
			if err != nil {
				t.Errorf("%s: our discovery failed in Argo CD: %v", fx.Path, err)
				continue
			}
			merged, mergedErr := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts)
			engineMerged, engineErr := engine.Engine{Profile: engine.V36}.Discover(obj.Object, scripts...)
			if errText(mergedErr) != errText(engineErr) {
				t.Errorf("%s: merged discovery error: argo-cd %s, engine %s", fx.Path, errText(mergedErr), errText(engineErr))
				continue
			}
			if mergedErr != nil {
				continue // v3.6's built-in discovery fails on this object (docs/actions.md caveat); ours did not
			}
			if !reflect.DeepEqual(fromArgo(merged), engineMerged) {
				t.Errorf("%s: merged discovery: argo-cd %+v, engine %+v", fx.Path, fromArgo(merged), engineMerged)
			}
			byName := map[string]v1alpha1.ResourceAction{}
			for _, a := range merged {
				byName[a.Name] = a
			}
			for _, d := range defs {
				if _, ok := byName[d.Name]; !ok {
					t.Errorf("%s: merged discovery lacks ours %s", fx.Path, d.Name)
				}
			}
			for _, name := range builtin {
				if _, ok := byName[name]; !ok {
					t.Errorf("%s: merged discovery lacks the built-in %s", fx.Path, name)
				}
			}
			if k.Kind == "Rollout" {
				builtinOnly, err := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts[1:])
				if err != nil {
					t.Fatalf("%s: built-in discovery: %v", fx.Path, err)
				}
				oursPromote, builtinPromote := findAction(ours, "promote-full"), findAction(builtinOnly, "promote-full")
				got := byName["promote-full"]
				switch {
				case !guard && oursPromote != nil:
					t.Errorf("%s: guard off, but our discovery returns promote-full %+v", fx.Path, *oursPromote)
				case oursPromote != nil:
					blocked++
					if !got.Disabled || !strings.HasPrefix(got.DisplayName, "promote-full (blocked: ") || !reflect.DeepEqual(got, *oursPromote) {
						t.Errorf("%s: merged promote-full %+v, want our blocked entry", fx.Path, got)
					}
				case builtinPromote == nil || !reflect.DeepEqual(got, *builtinPromote):
					t.Errorf("%s: merged promote-full %+v, want the built-in %+v", fx.Path, got, builtinPromote)
				}
				if strings.HasSuffix(fx.Path, "/canary_step_analysis_failed_aborted_v1.8.yaml") {
					failedSeen = true
					if got.Disabled != guard {
						t.Errorf("%s (step analysis Failed): promote-full disabled %v, want %v with the guard %v", fx.Path, got.Disabled, guard, guard)
					}
				}
			}
			for _, d := range defs {
				def, err := vm.GetResourceAction(obj, d.Name)
				if err != nil || def.ActionLua != d.Script {
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

func findAction(actions []v1alpha1.ResourceAction, name string) *v1alpha1.ResourceAction {
	for i := range actions {
		if actions[i].Name == name {
			return &actions[i]
		}
	}
	return nil
}
