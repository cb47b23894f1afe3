package conformance

import (
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	jsonpatch "github.com/evanphx/json-patch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/suite"
)

// TestUninstallPatchInArgoCD is the uninstall of docs/install.md: on an argocd-cm with settings of its own,
// the install patch, then `generate --format patch --remove` with the same options, applied as kubectl
// applies a merge patch, leave exactly the original data; Argo CD's util/settings then reads no override of
// ours, and its Lua VM resolves every kind's health script and action discovery to its built-in ones again.
func TestUninstallPatchInArgoCD(t *testing.T) {
	base := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
		Data: formats.Unrelated,
	}
	for _, set := range suite.OptionSets {
		t.Run(set.Name, func(t *testing.T) {
			raw, err := yaml.Marshal(base)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := yaml.YAMLToJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			remove := set.Opts
			remove.Remove = true
			for _, o := range []generator.Options{set.Opts, remove} {
				patch, err := yaml.YAMLToJSON(suite.Generated(t, generator.Patch, o)[0].Data)
				if err != nil {
					t.Fatal(err)
				}
				if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
					t.Fatal(err)
				}
				if !o.Remove {
					if ov := genSettingsOverrides(t, suite.DecodeConfigMap(t, doc)); len(ov) <= len(genSettingsOverrides(t, base)) {
						t.Fatal("the install patch added no override")
					}
				}
			}
			cm := suite.DecodeConfigMap(t, doc)
			if len(cm.Data) != len(formats.Unrelated) {
				t.Errorf("data after uninstall: %d keys, want the %d it had", len(cm.Data), len(formats.Unrelated))
			}
			for k, v := range formats.Unrelated {
				if cm.Data[k] != v {
					t.Errorf("%s changed by install + uninstall", k)
				}
			}
			ov := genSettingsOverrides(t, cm)
			vm := argolua.VM{ResourceOverrides: ov}
			for _, k := range lua.Kinds() {
				obj := &unstructured.Unstructured{}
				obj.SetAPIVersion(k.Group + "/v1alpha1")
				obj.SetKind(k.Kind)
				if _, ok := ov[argolua.GetConfigMapKey(obj.GroupVersionKind())]; ok {
					t.Errorf("%s: an override is left", k.Key())
				}
				script, openLibs, err := vm.GetHealthScript(obj)
				builtin, _, berr := argolua.VM{}.GetHealthScript(obj)
				if err != nil || berr != nil || script != builtin || (script != "" && !openLibs) {
					t.Errorf("%s: health script after uninstall is not Argo CD's built-in (err %v)", k.Key(), err)
				}
				got, err := vm.GetResourceActionDiscovery(obj)
				want, werr := argolua.VM{}.GetResourceActionDiscovery(obj)
				if err != nil || werr != nil || len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) {
					t.Errorf("%s: action discovery after uninstall is not Argo CD's built-in (err %v)", k.Key(), err)
				}
			}
		})
	}
}
