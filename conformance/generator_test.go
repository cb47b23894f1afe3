package conformance

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/argo-cd/v2/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	jsonpatch "github.com/evanphx/json-patch"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// The argo-helm argo-cd chart is not a Go module: it is vendored read-only outside the repository
// (internal/upstream: $ANALYSIS_HEALTH_VENDOR, default ../shared/vendor from the repository root).
const argoHelmChartRel = "argo-helm/charts/argo-cd"

// genOptionSets are the options every consumer is proven with.
var genOptionSets = []struct {
	name string
	opts generator.Options
}{
	{"default", generator.Options{}},
	{"degraded", generator.Options{Inconclusive: generator.InconclusiveDegraded}},
	{"no-block-bypass", generator.Options{BlockBypassOnFailedAnalysis: new(false)}},
}

func genFiles(t *testing.T, f generator.Format, o generator.Options) []generator.File {
	t.Helper()
	files, err := generator.Generate(f, o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func genFile(t *testing.T, files []generator.File, name string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Path == name {
			return f.Data
		}
	}
	t.Fatalf("no %s among the generated files", name)
	return nil
}

// genBaseConfigMap is an argocd-cm as a running Argo CD has it: settings of its own, an unrelated
// customization, and an older health script and actions for Rollout that ours must replace.
func genBaseConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"},
		},
		Data: map[string]string{
			"url": "https://argocd.example.com",
			"resource.customizations.ignoreDifferences.all":       "jsonPointers:\n- /status\n",
			"resource.customizations.health.apps_Deployment":      "return {status = \"Healthy\"}\n",
			"resource.customizations.health.argoproj.io_Rollout":  "return {status = \"Healthy\", message = \"old\"}\n",
			"resource.customizations.actions.argoproj.io_Rollout": genOldActions,
		},
	}
}

// genOldActions is a Rollout actions value from before analysis-health: it hides Argo CD's built-ins.
const genOldActions = "discovery.lua: |\n  return {old = {}}\ndefinitions:\n- name: old\n  action.lua: |\n    return obj\n"

// genUnrelated is what genBaseConfigMap carries besides the Rollout script and actions.
var genUnrelated = map[string]string{
	"url": "https://argocd.example.com",
	"resource.customizations.ignoreDifferences.all":  "jsonPointers:\n- /status\n",
	"resource.customizations.health.apps_Deployment": "return {status = \"Healthy\"}\n",
}

// genSettingsOverrides loads cm as Argo CD's controller does: cm and an argocd-secret in a (fake) cluster,
// read by util/settings' SettingsManager, which only sees ConfigMaps labelled part-of: argocd and
// validates every resource.customizations key.
func genSettingsOverrides(t *testing.T, cm *corev1.ConfigMap) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	ns := cm.Namespace
	if ns == "" {
		ns = "argocd"
		cm = cm.DeepCopy()
		cm.Namespace = ns
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-secret", Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
		},
		Data: map[string][]byte{"server.secretkey": []byte("test")},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ov, err := settings.NewSettingsManager(ctx, fake.NewSimpleClientset(cm, secret), ns).GetResourceOverrides()
	if err != nil {
		t.Fatalf("Argo CD rejects the ConfigMap: %v", err)
	}
	return ov
}

func genDecodeConfigMap(t *testing.T, raw []byte) *corev1.ConfigMap {
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

// genAssertOurs checks that Argo CD's overrides hold our script for every kind the options select,
// byte-identical to the generator's (and, with default options, to the embedded file), without open
// libraries, and no script of ours for kinds left out; and the same for the actions keys: present for the
// selected kinds with actions unless actions are off, parsed by Argo CD's ResourceOverride.GetActions into
// our discovery (options applied) and definitions with mergeBuiltinActions, and, with default options,
// loading exactly as the value conformance/actions_test.go builds by hand from the embedded files.
func genAssertOurs(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options) {
	t.Helper()
	genAssertLoaded(t, ov, o, true)
}

// genAssertLoaded is genAssertOurs; exactActions false accepts an actions value with other bytes that
// Argo CD loads to the same scripts (one built by hand from the lua tree).
func genAssertLoaded(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options, exactActions bool) {
	t.Helper()
	want, err := generator.ConfigMapData(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range lua.Kinds() {
		script, selected := want[generator.HealthKey(k)]
		got, ok := ov[k.Key()]
		if !selected {
			if ok && strings.Contains(got.HealthLua, "analysis-health") {
				t.Errorf("%s: script present though the kind was not selected", k.Key())
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no override in Argo CD's settings", k.Key())
			continue
		}
		if got.HealthLua != script {
			t.Errorf("%s: Argo CD's script is not byte-identical to the generated one", k.Key())
		}
		if got.UseOpenLibs {
			t.Errorf("%s: useOpenLibs is on", k.Key())
		}
		if o.Inconclusive == "" {
			embedded, _ := lua.Health(k.Group, k.Kind)
			if got.HealthLua != embedded {
				t.Errorf("%s: default options, but the script differs from the embedded file", k.Key())
			}
		}
	}
	handBuilt := actionsConfigMapData(t)
	for _, k := range lua.ActionKinds() {
		value, selected := want[generator.ActionsKey(k)]
		got := ov[k.Key()]
		if !selected {
			if strings.Contains(got.Actions, "analysis-health") {
				t.Errorf("%s: actions present though not selected", k.Key())
			}
			continue
		}
		if exactActions && got.Actions != value {
			t.Errorf("%s: Argo CD's actions value is not byte-identical to the generated one", k.Key())
		}
		actions, err := got.GetActions()
		if err != nil {
			t.Errorf("%s: Argo CD cannot parse the actions value: %v", k.Key(), err)
			continue
		}
		discovery, defs, err := generator.Actions(k, o)
		if err != nil {
			t.Fatal(err)
		}
		if !actions.MergeBuiltinActions || actions.ActionDiscoveryLua != discovery || len(actions.Definitions) != len(defs) {
			t.Errorf("%s: Argo CD loaded %+v", k.Key(), actions)
			continue
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
	}
}

// genAssertActions runs Argo CD v2.14's API-server path (lua.VM with the loaded overrides) over every
// fixture of each kind with actions: discovery is ours first, then the built-in one; the merged result
// lists ours and the built-ins and equals the engine's on the same scripts; every action resolves to ours.
// On Rollouts it checks the guard: with it on, our blocked promote-full replaces the built-in entry
// wherever ours returns one (and on the failed-analysis fixture); with it off, ours never returns
// promote-full and the built-in entry stands.
func genAssertActions(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options) {
	t.Helper()
	guard := o.BlockBypassOnFailedAnalysis == nil || *o.BlockBypassOnFailedAnalysis
	vm := argolua.VM{ResourceOverrides: ov}
	blocked, failedSeen := 0, false
	for _, k := range lua.ActionKinds() {
		discovery, defs, err := generator.Actions(k, o)
		if err != nil {
			t.Fatal(err)
		}
		builtin := builtinActions[k.Key()]
		checked := 0
		for _, fx := range fixtures(t) {
			obj := unstructuredFrom(t, fx.Raw)
			if obj.GroupVersionKind().Group != k.Group || obj.GetKind() != k.Kind {
				continue
			}
			checked++
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
			engineMerged, engineErr := engine.Engine{Profile: engine.V214}.Discover(obj.Object, scripts...)
			if errText(mergedErr) != errText(engineErr) {
				t.Errorf("%s: merged discovery error: argo-cd %s, engine %s", fx.Path, errText(mergedErr), errText(engineErr))
				continue
			}
			if mergedErr != nil {
				continue // Argo CD's built-in discovery fails on this object (docs/actions.md caveat); ours did not
			}
			if !reflect.DeepEqual(fromArgoActions(merged), engineMerged) {
				t.Errorf("%s: merged discovery: argo-cd %+v, engine %+v", fx.Path, fromArgoActions(merged), engineMerged)
			}
			byName := map[string]v1alpha1.ResourceAction{}
			for _, a := range merged {
				byName[a.Name] = a
			}
			for _, name := range append(defNames(defs), builtin...) {
				if _, ok := byName[name]; !ok {
					t.Errorf("%s: merged discovery lacks %s", fx.Path, name)
				}
			}
			if k.Kind == "Rollout" {
				builtinOnly, err := vm.ExecuteResourceActionDiscovery(obj.DeepCopy(), scripts[1:])
				if err != nil {
					t.Fatalf("%s: built-in discovery: %v", fx.Path, err)
				}
				var oursPromote, builtinPromote *v1alpha1.ResourceAction
				for i := range ours {
					if ours[i].Name == "promote-full" {
						oursPromote = &ours[i]
					}
				}
				for i := range builtinOnly {
					if builtinOnly[i].Name == "promote-full" {
						builtinPromote = &builtinOnly[i]
					}
				}
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
		if checked == 0 {
			t.Errorf("%s: no fixture", k.Key())
		}
	}
	if !failedSeen {
		t.Error("the failed-analysis fixture was not checked")
	}
	if guard && blocked == 0 {
		t.Error("no fixture blocked promote-full: the guard is not seen to reach Argo CD")
	}
}

// genAssertUnrelatedKept checks that a patched ConfigMap kept everything that was not ours.
func genAssertUnrelatedKept(t *testing.T, cm *corev1.ConfigMap, ov map[string]v1alpha1.ResourceOverride) {
	t.Helper()
	for k, v := range genUnrelated {
		if cm.Data[k] != v {
			t.Errorf("data %s = %q, want the base's %q kept", k, cm.Data[k], v)
		}
	}
	if len(ov["*/*"].IgnoreDifferences.JSONPointers) != 1 || ov["apps/Deployment"].HealthLua == "" {
		t.Errorf("unrelated overrides lost: */* %+v, apps/Deployment %+v", ov["*/*"], ov["apps/Deployment"])
	}
	if cm.Labels["app.kubernetes.io/part-of"] != "argocd" {
		t.Errorf("labels %v lost part-of: argocd", cm.Labels)
	}
}

// genAssertFixtures evaluates every bundled fixture through the controller's path (gitops-engine
// GetResourceHealth over the loaded overrides) and through our engine with the generated script: equal
// results. With Degraded, each kind must have a fixture whose health Argo CD now reports as Degraded
// where the default script did not, so the option is seen to reach Argo CD.
func genAssertFixtures(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options) {
	t.Helper()
	defaults := genSettingsOverrides(t, genConfigMap(t, generator.Options{}))
	changed := map[string]int{}
	checked := map[string]int{}
	for _, fx := range fixtures(t) {
		obj := unstructuredFrom(t, fx.Raw)
		k := lua.Kind{Group: obj.GroupVersionKind().Group, Kind: obj.GetKind()}
		script, err := generator.Script(k, o)
		if err != nil {
			continue // an object of a kind we ship no script for (a referenced object): nothing to compare
		}
		checked[k.Key()]++
		ours, err := recorded(engine.V214, obj.Object, script)
		if err != nil {
			t.Errorf("%s: engine: %v", fx.Path, err)
			continue
		}
		argo, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(ov))
		if err != nil || argo == nil {
			t.Errorf("%s: gitops-engine GetResourceHealth: %v, %v", fx.Path, argo, err)
			continue
		}
		if ours.Status != string(argo.Status) || ours.Message != argo.Message {
			t.Errorf("%s: engine %+v != Argo CD %+v", fx.Path, ours, *argo)
		}
		def, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(defaults))
		if err != nil || def == nil {
			t.Fatalf("%s: default script: %v, %v", fx.Path, def, err)
		}
		if *def != *argo {
			if o.Inconclusive != generator.InconclusiveDegraded || argo.Status != health.HealthStatusDegraded {
				t.Errorf("%s: options %+v changed Argo CD's health from %+v to %+v", fx.Path, o, *def, *argo)
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
	}
}

func genConfigMap(t *testing.T, o generator.Options) *corev1.ConfigMap {
	t.Helper()
	return genDecodeConfigMap(t, genFiles(t, generator.ConfigMap, o)[0].Data)
}

// The argocd-cm format, loaded as is.
func TestGeneratedConfigMapInArgoCD(t *testing.T) {
	sets := []struct {
		name string
		opts generator.Options
	}{
		genOptionSets[0],
		genOptionSets[1],
		genOptionSets[2],
		{"rollout-only", generator.Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "Rollout"}}, Namespace: "gitops"}},
		{"no-actions", generator.Options{Actions: new(false)}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			cm := genConfigMap(t, set.opts)
			ov := genSettingsOverrides(t, cm)
			genAssertOurs(t, ov, set.opts)
			if len(cm.Data) != len(mustData(t, set.opts)) {
				t.Errorf("ConfigMap has %d keys, want only ours", len(cm.Data))
			}
			if set.name != "rollout-only" {
				genAssertFixtures(t, ov, set.opts)
			}
			if set.opts.Actions == nil && set.name != "rollout-only" {
				genAssertActions(t, ov, set.opts)
			}
			// Actions keys exactly for the selected kinds with actions, unless actions are off.
			for _, k := range lua.ActionKinds() {
				want := set.opts.Actions == nil && (len(set.opts.Kinds) == 0 || slices.Contains(set.opts.Kinds, k))
				if _, ok := cm.Data[generator.ActionsKey(k)]; ok != want {
					t.Errorf("%s: actions key present %v, want %v", k.Key(), ok, want)
				}
			}
			// The label is what makes Argo CD see it: without it, none of our overrides load.
			unlabelled := cm.DeepCopy()
			delete(unlabelled.Labels, "app.kubernetes.io/part-of")
			if ov := genSettingsOverridesLenient(t, unlabelled); ov["argoproj.io/Rollout"].HealthLua != "" {
				t.Error("an unlabelled argocd-cm was read: the label check proves nothing")
			}
		})
	}
}

func mustData(t *testing.T, o generator.Options) map[string]string {
	t.Helper()
	d, err := generator.ConfigMapData(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// genSettingsOverridesLenient is genSettingsOverrides for a ConfigMap Argo CD may not find at all.
func genSettingsOverridesLenient(t *testing.T, cm *corev1.ConfigMap) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: cm.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}}
	ov, _ := settings.NewSettingsManager(ctx, fake.NewSimpleClientset(cm, secret), cm.Namespace).GetResourceOverrides()
	return ov
}

// The patch format, applied as `kubectl patch --type merge` does (RFC 7386 JSON merge patch) onto an
// argocd-cm with settings of its own.
func TestGeneratedPatchInArgoCD(t *testing.T) {
	for _, set := range genOptionSets {
		t.Run(set.name, func(t *testing.T) {
			patch, err := yaml.YAMLToJSON(genFiles(t, generator.Patch, set.opts)[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := yaml.Marshal(genBaseConfigMap())
			if err != nil {
				t.Fatal(err)
			}
			baseJSON, err := yaml.YAMLToJSON(base)
			if err != nil {
				t.Fatal(err)
			}
			merged, err := jsonpatch.MergePatch(baseJSON, patch)
			if err != nil {
				t.Fatal(err)
			}
			cm := genDecodeConfigMap(t, merged)
			ov := genSettingsOverrides(t, cm)
			genAssertOurs(t, ov, set.opts)
			genAssertUnrelatedKept(t, cm, ov)
			genAssertFixtures(t, ov, set.opts)
			genAssertActions(t, ov, set.opts)
		})
	}
}

// The helm format, rendered with the real argo-helm argo-cd chart by Helm's own library, the steps of
// `helm template` (pkg/engine, without pkg/action's registry and storage dependencies).
func TestGeneratedHelmValuesInArgoCD(t *testing.T) {
	chartDir := genChartCopy(t)
	for _, set := range genOptionSets {
		t.Run(set.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues(genFiles(t, generator.Helm, set.opts)[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			chrt, err := loader.Load(chartDir)
			if err != nil {
				t.Fatal(err)
			}
			// What `helm template` (install with DryRun, ClientOnly) does before rendering: resolve
			// dependencies, coalesce values over the chart's defaults, validate them against the schema.
			if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
				t.Fatal(err)
			}
			top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals,
				chartutil.ReleaseOptions{Name: "argocd", Namespace: "argocd", Revision: 1, IsInstall: true},
				chartutil.DefaultCapabilities.Copy(), false)
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := helmengine.Render(chrt, top)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			var cm *corev1.ConfigMap
			for name, content := range rendered {
				if !strings.HasSuffix(name, ".yaml") {
					continue
				}
				for _, doc := range releaseutil.SplitManifests(content) {
					var obj corev1.ConfigMap
					if err := yaml.Unmarshal([]byte(doc), &obj); err == nil && obj.Kind == "ConfigMap" && obj.Name == "argocd-cm" {
						if cm != nil {
							t.Fatalf("the chart rendered argocd-cm twice (%s)", name)
						}
						cm = &obj
					}
				}
			}
			if cm == nil {
				t.Fatal("the chart rendered no argocd-cm")
			}
			if cm.Namespace == "" {
				cm.Namespace = "argocd" // helm template leaves namespace to the client when the chart does not set it
			}
			ov := genSettingsOverrides(t, cm)
			genAssertOurs(t, ov, set.opts)
			if cm.Data["url"] == "" {
				t.Error("the chart's own argocd-cm settings (url preset) are missing: was the real chart rendered?")
			}
			genAssertFixtures(t, ov, set.opts)
			genAssertActions(t, ov, set.opts)
		})
	}
}

// genChartCopy copies the read-only chart to a temporary folder without its optional redis-ha
// dependency, which is not vendored (and disabled by default: redis-ha.enabled false).
func genChartCopy(t *testing.T) string {
	t.Helper()
	argoHelmChart := upstream.Vendored(t, argoHelmChartRel)
	if _, err := os.Stat(filepath.Join(argoHelmChart, "Chart.yaml")); err != nil {
		t.Fatalf("the vendored argo-helm chart at %s is incomplete: %v", argoHelmChart, err)
	}
	dst := filepath.Join(t.TempDir(), "argo-cd")
	err := filepath.WalkDir(argoHelmChart, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(argoHelmChart, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if rel == "Chart.lock" {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "Chart.yaml" {
			var meta map[string]any
			if err := yaml.Unmarshal(raw, &meta); err != nil {
				return err
			}
			delete(meta, "dependencies")
			if raw, err = yaml.Marshal(meta); err != nil {
				return err
			}
		}
		return os.WriteFile(target, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The kustomize format, built by kustomize's own library (krusty) over an argocd-cm with settings of its
// own, in the shapes an Argo CD kustomization takes.
func TestGeneratedKustomizeInArgoCD(t *testing.T) {
	base, err := yaml.Marshal(genBaseConfigMap())
	if err != nil {
		t.Fatal(err)
	}
	namespaceless := strings.Replace(string(base), "  namespace: argocd\n", "", 1)
	if namespaceless == string(base) {
		t.Fatal("could not drop the namespace from the base")
	}
	layouts := []struct {
		name    string
		files   map[string]string // the build runs in app/; the component is generated into analysis-health/
		inApp   bool              // generate the component into app/analysis-health instead
		wantErr string
	}{
		{
			// Argo CD's documented kustomize install: upstream manifests carry no namespace; the
			// kustomization sets it (after the component's patch has matched by name).
			name: "namespace set by the kustomization",
			files: map[string]string{
				"app/argocd-cm.yaml":     namespaceless,
				"app/kustomization.yaml": "namespace: argocd\nresources:\n- argocd-cm.yaml\ncomponents:\n- ../analysis-health\n",
			},
		},
		{
			name: "namespace set by a base kustomization",
			files: map[string]string{
				"base/argocd-cm.yaml":     namespaceless,
				"base/kustomization.yaml": "namespace: argocd\nresources:\n- argocd-cm.yaml\n",
				"app/kustomization.yaml":  "resources:\n- ../base\ncomponents:\n- ../analysis-health\n",
			},
		},
		{
			// A base that spells out the namespace does not match a namespace-less patch: kustomize fails
			// the build rather than patching nothing (docs/install.md gives the fix below).
			name: "literal namespace fails loudly",
			files: map[string]string{
				"app/argocd-cm.yaml":     string(base),
				"app/kustomization.yaml": "resources:\n- argocd-cm.yaml\ncomponents:\n- ../analysis-health\n",
			},
			wantErr: "no resource matches strategic merge patch",
		},
		{
			name:  "literal namespace with the patch targeted by name",
			inApp: true,
			files: map[string]string{
				"app/argocd-cm.yaml":     string(base),
				"app/kustomization.yaml": "resources:\n- argocd-cm.yaml\npatches:\n- path: analysis-health/argocd-cm-patch.yaml\n  target:\n    kind: ConfigMap\n    name: argocd-cm\n",
			},
		},
	}
	for _, set := range genOptionSets {
		for _, l := range layouts {
			t.Run(set.name+"/"+l.name, func(t *testing.T) {
				root := t.TempDir()
				for name, content := range l.files {
					p := filepath.Join(root, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				component := filepath.Join(root, "analysis-health")
				if l.inApp {
					// a patch file must lie inside the kustomization's root (kustomize's load restrictor)
					component = filepath.Join(root, "app", "analysis-health")
				}
				if err := generator.WriteDir(component, genFiles(t, generator.Kustomize, set.opts)); err != nil {
					t.Fatal(err)
				}
				resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "app"))
				if l.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), l.wantErr) {
						t.Fatalf("kustomize build: error %v, want one containing %q", err, l.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("kustomize build: %v", err)
				}
				out, err := resMap.AsYaml()
				if err != nil {
					t.Fatal(err)
				}
				docs := strings.Split(string(out), "\n---\n")
				if len(docs) != 1 {
					t.Fatalf("kustomize built %d objects, want the one argocd-cm", len(docs))
				}
				cm := genDecodeConfigMap(t, []byte(docs[0]))
				if cm.Namespace != "argocd" {
					t.Errorf("namespace %q, want argocd", cm.Namespace)
				}
				ov := genSettingsOverrides(t, cm)
				genAssertOurs(t, ov, set.opts)
				genAssertUnrelatedKept(t, cm, ov)
			})
		}
	}
}

// The lua format's derived expectations (--inconclusive degraded re-evaluates the bundled health suites,
// --block-bypass-on-failed-analysis=false the action discovery suites) are what Argo CD itself reports for
// the tree's scripts, loaded through argocd-cm: health through the controller's path, discovery and actions
// through the API server's (lua.VM with the overrides; discovery results are our script's alone, which is
// what the suites describe).
func TestGeneratedLuaTreeExpectationsInArgoCD(t *testing.T) {
	for _, set := range genOptionSets {
		t.Run(set.name, func(t *testing.T) {
			tree := map[string][]byte{}
			for _, f := range genFiles(t, generator.Lua, set.opts) {
				tree[f.Path] = f.Data
			}
			data := map[string]string{}
			for _, k := range lua.Kinds() {
				data[generator.HealthKey(k)] = string(tree[path.Join(k.Key(), "health.lua")])
			}
			for _, k := range lua.ActionKinds() {
				data[generator.ActionsKey(k)] = genTreeActionsValue(t, tree, k)
			}
			cm := genBaseConfigMap()
			cm.Data = data
			ov := genSettingsOverrides(t, cm)
			genAssertLoaded(t, ov, set.opts, false)
			cases := 0
			for _, k := range lua.Kinds() {
				dir := k.Key()
				var suite verify.HealthSuite
				if err := yaml.UnmarshalStrict(tree[path.Join(dir, "health_test.yaml")], &suite); err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				for i, tc := range suite.Tests {
					obj := genTreeObject(t, tree, path.Join(dir, tc.InputPath))
					got, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides(ov))
					if obj.GetDeletionTimestamp() != nil {
						// A suite describes the script (Argo CD's TestLuaHealthScript runs ExecuteHealthLua),
						// while v2.14's controller records "Pending deletion" without running it (proven in
						// TestFixturesMatchArgoCD): compare with the script Argo CD resolves, in its VM.
						vm := argolua.VM{ResourceOverrides: ov}
						script, open, rerr := vm.GetHealthScript(obj)
						if rerr != nil || script == "" {
							t.Fatalf("%s tests[%d]: no script resolved: %v", dir, i, rerr)
						}
						vm.UseOpenLibs = open
						got, err = vm.ExecuteHealthLua(obj, script)
					}
					if err != nil || got == nil {
						t.Fatalf("%s tests[%d]: %v, %v", dir, i, got, err)
					}
					if string(got.Status) != tc.HealthStatus.Status || got.Message != tc.HealthStatus.Message {
						t.Errorf("%s tests[%d] (%s): generated expectation %+v, Argo CD says %+v", dir, i, tc.InputPath, tc.HealthStatus, *got)
					}
					cases++
				}
			}
			vm := argolua.VM{ResourceOverrides: ov}
			actionCases := 0
			for _, k := range lua.ActionKinds() {
				dir := path.Join(k.Key(), "actions")
				var suite verify.ActionSuite
				if err := yaml.UnmarshalStrict(tree[path.Join(dir, "action_test.yaml")], &suite); err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				for i, tc := range suite.DiscoveryTests {
					obj := genTreeObject(t, tree, path.Join(dir, tc.InputPath))
					scripts, err := vm.GetResourceActionDiscovery(obj)
					if err != nil || len(scripts) == 0 || scripts[0] != string(tree[path.Join(dir, "discovery.lua")]) {
						t.Fatalf("%s discoveryTests[%d]: Argo CD did not resolve the tree's discovery first (%v)", dir, i, err)
					}
					got, err := vm.ExecuteResourceActionDiscovery(obj, scripts[:1])
					if err != nil {
						t.Fatalf("%s discoveryTests[%d]: %v", dir, i, err)
					}
					want := append([]engine.Action(nil), tc.Result...)
					sort.Slice(want, func(i, j int) bool { return want[i].Name < want[j].Name })
					if !reflect.DeepEqual(fromArgoActions(got), want) {
						t.Errorf("%s discoveryTests[%d] (%s): generated expectation %+v, Argo CD says %+v", dir, i, tc.InputPath, want, fromArgoActions(got))
					}
					actionCases++
				}
				for i, tc := range suite.ActionTests {
					obj := genTreeObject(t, tree, path.Join(dir, tc.InputPath))
					def, err := vm.GetResourceAction(obj, tc.Action)
					if err != nil || def.ActionLua != string(tree[path.Join(dir, tc.Action, "action.lua")]) {
						t.Fatalf("%s actionTests[%d]: Argo CD did not resolve the tree's %s (%v)", dir, i, tc.Action, err)
					}
					got, err := runArgoAction(obj, def.ActionLua)
					if tc.ExpectedErrorMessage != "" {
						if err == nil || verify.WithoutTraceback(err.Error()) != tc.ExpectedErrorMessage {
							t.Errorf("%s actionTests[%d]: want error %q, Argo CD: %v", dir, i, tc.ExpectedErrorMessage, err)
						}
					} else {
						want := genTreeObject(t, tree, path.Join(dir, tc.ExpectedOutputPath))
						if err != nil || len(got) != 1 || !reflect.DeepEqual(verify.Normalize(got[0].UnstructuredObj.Object), verify.Normalize(want.Object)) {
							t.Errorf("%s actionTests[%d] (%s %s): Argo CD's output differs from %s (%v)", dir, i, tc.Action, tc.InputPath, tc.ExpectedOutputPath, err)
						}
					}
					actionCases++
				}
			}
			if cases == 0 || actionCases == 0 {
				t.Fatalf("%d health and %d action cases in the generated tree", cases, actionCases)
			}
		})
	}
}

func genTreeObject(t *testing.T, tree map[string][]byte, p string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(tree[p], &obj); err != nil || obj == nil {
		t.Fatalf("fixture %s: %v", p, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// genTreeActionsValue builds a kind's argocd-cm actions value from the tree's files, the way someone
// installing a reviewed tree by hand would, independently of the generator's own YAML.
func genTreeActionsValue(t *testing.T, tree map[string][]byte, k lua.Kind) string {
	t.Helper()
	dir := path.Join(k.Key(), "actions")
	discovery, ok := tree[path.Join(dir, "discovery.lua")]
	if !ok {
		t.Fatalf("%s: no discovery.lua in the tree", dir)
	}
	value := v1alpha1.ResourceActions{ActionDiscoveryLua: string(discovery), MergeBuiltinActions: true}
	var names []string
	for p := range tree {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok && strings.HasSuffix(rest, "/action.lua") && strings.Count(rest, "/") == 1 {
			names = append(names, path.Dir(rest))
		}
	}
	sort.Strings(names)
	for _, name := range names {
		value.Definitions = append(value.Definitions, v1alpha1.ResourceActionDefinition{Name: name, ActionLua: string(tree[path.Join(dir, name, "action.lua")])})
	}
	raw, err := yaml.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// recorded is what the engine says Argo CD records for obj (ResourceHealth), for a kind with a script.
func recorded(p engine.Profile, obj map[string]any, script string) (engine.Health, error) {
	h, err := engine.Engine{Profile: p}.ResourceHealth(obj, script)
	if err == nil && h == nil {
		err = fmt.Errorf("no health")
	}
	if h == nil {
		return engine.Health{}, err
	}
	return *h, err
}
