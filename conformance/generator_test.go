package conformance

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// The argo-helm argo-cd chart, vendored read-only beside the repository (../shared from the repo root).
const argoHelmChart = "../../shared/vendor/argo-helm/charts/argo-cd"

// genOptionSets are the options every consumer is proven with.
var genOptionSets = []struct {
	name string
	opts generator.Options
}{
	{"default", generator.Options{}},
	{"degraded", generator.Options{Inconclusive: generator.InconclusiveDegraded}},
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
// customization, and an older health script for Rollout that ours must replace.
func genBaseConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"},
		},
		Data: map[string]string{
			"url": "https://argocd.example.com",
			"resource.customizations.ignoreDifferences.all":      "jsonPointers:\n- /status\n",
			"resource.customizations.health.apps_Deployment":     "return {status = \"Healthy\"}\n",
			"resource.customizations.health.argoproj.io_Rollout": "return {status = \"Healthy\", message = \"old\"}\n",
		},
	}
}

// genUnrelated is what genBaseConfigMap carries besides the Rollout script.
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
// libraries, and no script of ours for kinds left out.
func genAssertOurs(t *testing.T, ov map[string]v1alpha1.ResourceOverride, o generator.Options) {
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
		ours, err := engine.Engine{Profile: engine.V2}.Health(obj.Object, script)
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
		{"rollout-only", generator.Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "Rollout"}}, Namespace: "gitops"}},
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
		})
	}
}

// genChartCopy copies the read-only chart to a temporary folder without its optional redis-ha
// dependency, which is not vendored (and disabled by default: redis-ha.enabled false).
func genChartCopy(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(argoHelmChart, "Chart.yaml")); err != nil {
		t.Fatalf("argo-helm chart not found at %s (expected ../shared/vendor/argo-helm/charts/argo-cd from the repository root): %v", argoHelmChart, err)
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

// The lua format's derived expectations (--inconclusive degraded re-evaluates the bundled suites) are
// what Argo CD itself reports for the tree's scripts, loaded through argocd-cm.
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
			cm := genBaseConfigMap()
			cm.Data = data
			ov := genSettingsOverrides(t, cm)
			genAssertOurs(t, ov, set.opts)
			cases := 0
			for _, k := range lua.Kinds() {
				dir := k.Key()
				var suite verify.HealthSuite
				if err := yaml.UnmarshalStrict(tree[path.Join(dir, "health_test.yaml")], &suite); err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				for i, tc := range suite.Tests {
					var obj map[string]any
					if err := yaml.Unmarshal(tree[path.Join(dir, tc.InputPath)], &obj); err != nil || obj == nil {
						t.Fatalf("%s tests[%d]: fixture %s: %v", dir, i, tc.InputPath, err)
					}
					got, err := health.GetResourceHealth(&unstructured.Unstructured{Object: obj}, argolua.ResourceHealthOverrides(ov))
					if err != nil || got == nil {
						t.Fatalf("%s tests[%d]: %v, %v", dir, i, got, err)
					}
					if string(got.Status) != tc.HealthStatus.Status || got.Message != tc.HealthStatus.Message {
						t.Errorf("%s tests[%d] (%s): generated expectation %+v, Argo CD says %+v", dir, i, tc.InputPath, tc.HealthStatus, *got)
					}
					cases++
				}
			}
			if cases == 0 {
				t.Fatal("no test cases in the generated tree")
			}
		})
	}
}
