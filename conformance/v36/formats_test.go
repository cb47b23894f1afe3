package v36

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	jsonpatch "github.com/evanphx/json-patch"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/lua"
)

// formatSets are the options the patch, Helm and kustomize formats are proven with in v3.6.1: the source
// as written, and the form `generate` emits by default (--argocd-version v3.6), with and without options.
var formatSets = []struct {
	name string
	opts generator.Options
}{
	{"source", generator.Options{}},
	{"v3.6 form", generator.Options{ArgoCDVersion: "v3.6"}},
	{"v3.6 form degraded", generator.Options{ArgoCDVersion: "v3.6", Inconclusive: generator.InconclusiveDegraded}},
	{"v3.6 form no-block-bypass", generator.Options{ArgoCDVersion: "v3.6", BlockBypassOnFailedAnalysis: new(false)}},
}

// formatBase is an argocd-cm as a running Argo CD has it: settings of its own, an unrelated customization,
// and an older Rollout script ours must replace.
func formatBase() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
		Data: map[string]string{
			"url": "https://argocd.example.com",
			"resource.customizations.health.apps_Deployment":     "return {status = \"Healthy\"}\n",
			"resource.customizations.health.argoproj.io_Rollout": "return {status = \"Healthy\", message = \"old\"}\n",
		},
	}
}

func generated(t *testing.T, f generator.Format, o generator.Options) []generator.File {
	t.Helper()
	files, err := generator.Generate(f, o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func decodeConfigMap(t *testing.T, raw []byte) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "argocd-cm" || cm.Labels["app.kubernetes.io/part-of"] != "argocd" {
		t.Fatalf("not an argocd-cm Argo CD reads: %s %s %v", cm.Kind, cm.Name, cm.Labels)
	}
	return &cm
}

// assertInV36 loads cm through v3.6.1's util/settings and checks our scripts byte for byte, every
// fixture's recorded health against the engine's, the actions through the API server's path, and (with
// keepBase) that the base's own settings survived.
func assertInV36(t *testing.T, cm *corev1.ConfigMap, o generator.Options, keepBase bool) {
	t.Helper()
	ov := overrides(t, cm.Data)
	for _, k := range lua.Kinds() {
		want, err := generator.Script(k, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := ov[k.Key()]; got.HealthLua != want || got.UseOpenLibs {
			t.Fatalf("%s: Argo CD's script is not the generated one, or has open libraries", k.Key())
		}
	}
	if keepBase && (cm.Data["url"] != "https://argocd.example.com" || ov["apps/Deployment"].HealthLua == "") {
		t.Errorf("the base's own settings were lost: %v", cm.Data["url"])
	}
	fixtures, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		obj := object(t, f.Raw)
		script, err := generator.Script(lua.Kind{Group: obj.GroupVersionKind().Group, Kind: obj.GetKind()}, o)
		if err != nil {
			continue // a kind we ship no script for
		}
		ours, err := engine.Engine{Profile: engine.V36}.ResourceHealth(obj.Object, script)
		if err != nil {
			t.Fatalf("%s: engine: %v", f.Path, err)
		}
		got, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(ov))
		if err != nil || !sameRecorded(ours, got) {
			t.Errorf("%s: argo-cd v3.6 %s %v, engine %s", f.Path, showArgo(got), err, show(ours))
		}
	}
	assertGeneratedActions(t, ov, o)
}

// The patch format, applied as `kubectl patch --type merge` does (RFC 7386) onto a running argocd-cm.
func TestGeneratedPatchInArgoCDv36(t *testing.T) {
	for _, set := range formatSets {
		t.Run(set.name, func(t *testing.T) {
			patch, err := yaml.YAMLToJSON(generated(t, generator.Patch, set.opts)[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := yaml.Marshal(formatBase())
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
			assertInV36(t, decodeConfigMap(t, merged), set.opts, true)
		})
	}
}

// The helm format, rendered with the vendored argo-helm argo-cd chart by Helm's own library, the steps
// of `helm template`.
func TestGeneratedHelmValuesInArgoCDv36(t *testing.T) {
	chartDir := chartCopy(t)
	for _, set := range formatSets {
		t.Run(set.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues(generated(t, generator.Helm, set.opts)[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			chrt, err := loader.Load(chartDir)
			if err != nil {
				t.Fatal(err)
			}
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
			if cm.Data["url"] == "" {
				t.Error("the chart's own argocd-cm settings (url preset) are missing: was the real chart rendered?")
			}
			assertInV36(t, cm, set.opts, false)
		})
	}
}

// chartCopy copies the read-only chart without its optional redis-ha dependency, which is not vendored.
func chartCopy(t *testing.T) string {
	t.Helper()
	src := upstream.Vendored(t, "argo-helm/charts/argo-cd")
	dst := filepath.Join(t.TempDir(), "argo-cd")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
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

// The kustomize format, built by kustomize's own library over a namespace-less upstream argocd-cm, the
// namespace set by the kustomization (Argo CD's documented kustomize install).
func TestGeneratedKustomizeInArgoCDv36(t *testing.T) {
	base, err := yaml.Marshal(formatBase())
	if err != nil {
		t.Fatal(err)
	}
	namespaceless := strings.Replace(string(base), "  namespace: argocd\n", "", 1)
	for _, set := range formatSets {
		t.Run(set.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "app/argocd-cm.yaml"), namespaceless)
			writeFile(t, filepath.Join(root, "app/kustomization.yaml"), "namespace: argocd\nresources:\n- argocd-cm.yaml\ncomponents:\n- ../analysis-health\n")
			if err := generator.WriteDir(filepath.Join(root, "analysis-health"), generated(t, generator.Kustomize, set.opts)); err != nil {
				t.Fatal(err)
			}
			resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "app"))
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			out, err := resMap.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			if docs := strings.Split(string(out), "\n---\n"); len(docs) != 1 {
				t.Fatalf("kustomize built %d objects, want the one argocd-cm", len(docs))
			}
			cm := decodeConfigMap(t, out)
			if cm.Namespace != "argocd" {
				t.Errorf("namespace %q, want argocd", cm.Namespace)
			}
			assertInV36(t, cm, set.opts, true)
		})
	}
}
