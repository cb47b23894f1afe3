// Package formats proves the generator's patch, Helm values and kustomize component formats in a
// release (test/suite's Release): each rendered by the tool a user runs, as a library (JSON merge
// patch, Helm's engine over the vendored argo-helm chart, kustomize's krusty), then loaded by the
// release's util/settings. A package of its own, so that modules that do not run them need no Helm or
// kustomize.
package formats

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The argo-helm argo-cd chart is not a Go module: it is vendored in third_party/argo-helm and read from
// the upstream tree (internal/upstream VendorDir: bin/upstream after `make upstream`).
const argoHelmChartRel = "argo-helm/charts/argo-cd"

// Base is an argocd-cm as a running Argo CD has it: settings of its own, an unrelated
// customization, and an older health script and actions for Rollout that ours must replace.
func Base() *corev1.ConfigMap {
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
			"resource.customizations.actions.argoproj.io_Rollout": oldActions,
		},
	}
}

// oldActions is a Rollout actions value from before analysis-health: it hides Argo CD's built-ins.
const oldActions = "discovery.lua: |\n  return {old = {}}\ndefinitions:\n- name: old\n  action.lua: |\n    return obj\n"

// Unrelated is what genBaseConfigMap carries besides the Rollout script and actions.
var Unrelated = map[string]string{
	"url": "https://argocd.example.com",
	"resource.customizations.ignoreDifferences.all":  "jsonPointers:\n- /status\n",
	"resource.customizations.health.apps_Deployment": "return {status = \"Healthy\"}\n",
}

// assertUnrelatedKept checks that a patched ConfigMap kept everything that was not ours, and that the
// release loads the unrelated overrides from it as from the base alone (v3 adds its own /status pointer).
func assertUnrelatedKept(t *testing.T, r suite.Release, cm *corev1.ConfigMap, s suite.Settings) {
	t.Helper()
	for k, v := range Unrelated {
		if cm.Data[k] != v {
			t.Errorf("data %s = %q, want the base's %q kept", k, cm.Data[k], v)
		}
	}
	base := suite.LoadOnce(t, r, "formats base", Base)
	for _, key := range []string{"*/*", "apps/Deployment"} {
		got, _ := s.Override(key)
		want, _ := base.Override(key)
		if !reflect.DeepEqual(got, want) || len(want.IgnoreJSONPointers)+len(want.HealthLua) == 0 {
			t.Errorf("unrelated override %s: %+v, from the base alone %+v", key, got, want)
		}
	}
	if cm.Labels["app.kubernetes.io/part-of"] != "argocd" {
		t.Errorf("labels %v lost part-of: argocd", cm.Labels)
	}
}

// The patch format, applied as `kubectl patch --type merge` does (RFC 7386 JSON merge patch) onto an
// argocd-cm with settings of its own.
func Patch(t *testing.T, r suite.Release, sets []suite.OptionSet) {
	for _, set := range sets {
		t.Run(set.Name, func(t *testing.T) {
			patch, err := yaml.YAMLToJSON(suite.Generated(t, generator.Patch, set.Opts)[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := yaml.Marshal(Base())
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
			cm := suite.DecodeConfigMap(t, merged)
			s := suite.LoadCM(t, r, cm)
			suite.AssertLoaded(t, r, s, set.Opts, true)
			assertUnrelatedKept(t, r, cm, s)
			suite.AssertGeneratedHealth(t, r, s, set.Opts)
			suite.AssertGeneratedActions(t, r, s, set.Opts)
		})
	}
}

// Manifest is one document a chart rendered, and the template that rendered it.
type Manifest struct{ Template, Doc string }

// Render renders the chart at chartDir with the values as `helm template` (install with DryRun,
// ClientOnly) does: dependencies resolved, values coalesced over the chart's defaults and validated against
// its schema, then every template rendered. It returns the YAML documents of the rendered manifests.
func Render(t *testing.T, chartDir string, values []byte, release, namespace string) []Manifest {
	t.Helper()
	vals, err := chartutil.ReadValues(values)
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
		chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true},
		chartutil.DefaultCapabilities.Copy(), false)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := helmengine.Render(chrt, top)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	var out []Manifest
	for name, content := range rendered {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			out = append(out, Manifest{name, doc})
		}
	}
	return out
}

// HelmValues: the helm format, rendered with the real argo-helm argo-cd chart by Helm's own library, the
// steps of `helm template` (pkg/engine, without pkg/action's registry and storage dependencies).
func HelmValues(t *testing.T, r suite.Release, sets []suite.OptionSet) {
	chartDir := ChartCopy(t)
	for _, set := range sets {
		t.Run(set.Name, func(t *testing.T) {
			var cm *corev1.ConfigMap
			for _, m := range Render(t, chartDir, suite.Generated(t, generator.Helm, set.Opts)[0].Data, "argocd", "argocd") {
				var obj corev1.ConfigMap
				if err := yaml.Unmarshal([]byte(m.Doc), &obj); err == nil && obj.Kind == "ConfigMap" && obj.Name == "argocd-cm" {
					if cm != nil {
						t.Fatalf("the chart rendered argocd-cm twice (%s)", m.Template)
					}
					cm = &obj
				}
			}
			if cm == nil {
				t.Fatal("the chart rendered no argocd-cm")
			}
			if cm.Namespace == "" {
				cm.Namespace = "argocd" // helm template leaves namespace to the client when the chart does not set it
			}
			s := suite.LoadCM(t, r, cm)
			suite.AssertLoaded(t, r, s, set.Opts, true)
			if cm.Data["url"] == "" {
				t.Error("the chart's own argocd-cm settings (url preset) are missing: was the real chart rendered?")
			}
			suite.AssertGeneratedHealth(t, r, s, set.Opts)
			suite.AssertGeneratedActions(t, r, s, set.Opts)
		})
	}
}

// ChartCopy copies the read-only chart to a temporary folder without its optional redis-ha
// dependency, which is not vendored (and disabled by default: redis-ha.enabled false).
func ChartCopy(t *testing.T) string {
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
func Kustomize(t *testing.T, r suite.Release, sets []suite.OptionSet) {
	base, err := yaml.Marshal(Base())
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
		// installed: the health, fixture and actions checks too, on the layout Argo CD documents (the
		// others differ in kustomize's build only, which AssertLoaded and the kept settings show)
		installed bool
	}{
		{
			// Argo CD's documented kustomize install: upstream manifests carry no namespace; the
			// kustomization sets it (after the component's patch has matched by name).
			name:      "namespace set by the kustomization",
			installed: true,
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
	for _, set := range sets {
		for _, l := range layouts {
			t.Run(set.Name+"/"+l.name, func(t *testing.T) {
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
				if err := generator.WriteDir(component, suite.Generated(t, generator.Kustomize, set.Opts)); err != nil {
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
				cm := suite.DecodeConfigMap(t, []byte(docs[0]))
				if cm.Namespace != "argocd" {
					t.Errorf("namespace %q, want argocd", cm.Namespace)
				}
				s := suite.LoadCM(t, r, cm)
				suite.AssertLoaded(t, r, s, set.Opts, true)
				assertUnrelatedKept(t, r, cm, s)
				if l.installed {
					suite.AssertGeneratedHealth(t, r, s, set.Opts)
					suite.AssertGeneratedActions(t, r, s, set.Opts)
				}
			})
		}
	}
}
