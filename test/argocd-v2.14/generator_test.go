package conformance

import (
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/suite"
	"github.com/analysis-health/analysis-health/verify"
)

// The generated formats in Argo CD v2.14 are test/suite's (suite_test.go); here what only v2.14's
// module proves: the lua format's derived expectations.

// genSettingsOverrides loads cm through v2.14's util/settings (namespace argocd where it has none); Argo
// CD refusing it fails the test.
func genSettingsOverrides(t *testing.T, cm *corev1.ConfigMap) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	if cm.Namespace == "" {
		cm = cm.DeepCopy()
		cm.Namespace = "argocd"
	}
	ov, err := loadOverrides(t, cm)
	if err != nil {
		t.Fatalf("Argo CD rejects the ConfigMap: %v", err)
	}
	return ov
}

// The lua format's derived expectations (--inconclusive degraded re-evaluates the bundled health suites,
// --block-bypass-on-failed-analysis=false the action discovery suites) are what Argo CD itself reports for
// the tree's scripts, loaded through argocd-cm: health through the controller's path, discovery and actions
// through the API server's (lua.VM with the overrides; discovery results are our script's alone, which is
// what the suites describe).
func TestGeneratedLuaTreeExpectationsInArgoCD(t *testing.T) {
	for _, set := range suite.OptionSets {
		t.Run(set.Name, func(t *testing.T) {
			tree := map[string][]byte{}
			for _, f := range suite.Generated(t, generator.Lua, set.Opts) {
				tree[f.Path] = f.Data
			}
			data := map[string]string{}
			for _, k := range lua.Kinds() {
				data[generator.HealthKey(k)] = string(tree[path.Join(k.Key(), "health.lua")])
			}
			for _, k := range lua.ActionKinds() {
				data[generator.ActionsKey(k)] = genTreeActionsValue(t, tree, k)
			}
			cm := formats.Base()
			cm.Data = data
			ov := genSettingsOverrides(t, cm)
			suite.AssertLoaded(t, release, settings214(ov), set.Opts, false)
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
					got, err := settings214(ov).RunAction(obj.Object, def.ActionLua, nil)
					if tc.ExpectedErrorMessage != "" {
						if err == nil || verify.WithoutTraceback(err.Error()) != tc.ExpectedErrorMessage {
							t.Errorf("%s actionTests[%d]: want error %q, Argo CD: %v", dir, i, tc.ExpectedErrorMessage, err)
						}
					} else {
						want := genTreeObject(t, tree, path.Join(dir, tc.ExpectedOutputPath))
						if err != nil || len(got) != 1 || !reflect.DeepEqual(verify.Normalize(got[0].Object), verify.Normalize(want.Object)) {
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
