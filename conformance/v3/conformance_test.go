package v3

import (
	"context"
	"fmt"
	"path"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/conformance/probe"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// overrides loads argocd-cm data through v3.2's SettingsManager, as the application controller does.
func overrides(t *testing.T, data map[string]string) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	labels := map[string]string{"app.kubernetes.io/part-of": "argocd"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd", Labels: labels}, Data: data}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: "argocd", Labels: labels},
		Data: map[string][]byte{"server.secretkey": []byte("test")}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ov, err := settings.NewSettingsManager(ctx, fake.NewClientset(cm, secret), "argocd").GetResourceOverrides()
	if err != nil {
		t.Fatal(err)
	}
	return ov
}

func object(t *testing.T, raw []byte) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestFixturesMatchArgoCDv3(t *testing.T) {
	data := map[string]string{}
	for _, k := range lua.Kinds() {
		s, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.health."+k.ConfigMapSuffix()] = s
	}
	ov := overrides(t, data)
	fx, err := lua.Fixtures()
	if err != nil || len(fx) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range fx {
		t.Run(f.Path, func(t *testing.T) {
			obj := object(t, f.Raw)
			script, err := lua.Health(obj.GroupVersionKind().Group, obj.GetKind())
			if err != nil {
				t.Fatal(err)
			}
			ours, err := engine.Engine{Profile: engine.V32}.Health(obj.Object, script)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(obj.DeepCopy(), script)
			if err != nil {
				t.Fatal(err)
			}
			ctrl, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(ov))
			if err != nil || ctrl == nil {
				t.Fatalf("controller path: %v, %v", ctrl, err)
			}
			if ours.Status != string(vm.Status) || ours.Message != vm.Message {
				t.Errorf("engine %+v != argo-cd v3 VM %+v", ours, *vm)
			}
			rec, err := engine.Engine{Profile: engine.V32}.ResourceHealth(obj.Object, script)
			if err != nil || rec == nil {
				t.Fatalf("engine ResourceHealth: %v, %v", rec, err)
			}
			if rec.Status != string(ctrl.Status) || rec.Message != ctrl.Message {
				t.Errorf("engine %+v != v3 controller path %+v", *rec, *ctrl)
			}
		})
	}
}

func TestSandboxMatchesArgoCDv3(t *testing.T) {
	for _, openLibs := range []bool{false, true} {
		for _, tc := range probe.Cases {
			t.Run(fmt.Sprintf("openLibs=%v/%s", openLibs, tc.Name), func(t *testing.T) {
				want, wantErr := argolua.VM{UseOpenLibs: openLibs}.ExecuteHealthLua(&unstructured.Unstructured{Object: probe.Object()}, tc.Script)
				got, gotErr := engine.Engine{Profile: engine.V32, OpenLibs: openLibs}.Health(probe.Object(), tc.Script)
				if probe.ErrText(wantErr) != probe.ErrText(gotErr) {
					t.Fatalf("error:\n argo-cd v3: %s\n engine:     %s", probe.ErrText(wantErr), probe.ErrText(gotErr))
				}
				if wantErr == nil && (string(want.Status) != got.Status || want.Message != got.Message) {
					t.Errorf("argo-cd v3 %+v, engine %+v", *want, got)
				}
			})
		}
	}
}

// Argo CD v3.2's own suites for these kinds, against our scripts: the same deviations as v2.14's, no more.
func TestArgoCDv3BuiltinSuites(t *testing.T) {
	total, passed, deviations := 0, 0, 0
	defer func() {
		probe.CheckSuiteCounts(t, "../../docs/argocd-versions.md", "v3.2.12", total, passed, deviations)
	}()
	for _, k := range lua.Kinds() {
		dir := path.Join(k.Group, k.Kind)
		raw, err := resource_customizations.Embedded.ReadFile(path.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var suite verify.HealthSuite
		if err := yaml.Unmarshal(raw, &suite); err != nil {
			t.Fatal(err)
		}
		script, _ := lua.Health(k.Group, k.Kind)
		for _, tc := range suite.Tests {
			id := k.Kind + "/" + tc.InputPath
			t.Run(id, func(t *testing.T) {
				input, err := resource_customizations.Embedded.ReadFile(path.Join(dir, tc.InputPath))
				if err != nil {
					t.Fatal(err)
				}
				got, err := argolua.VM{}.ExecuteHealthLua(object(t, input), script)
				if err != nil {
					t.Fatal(err)
				}
				dev, listed := probe.BuiltinDeviations[id]
				differs := string(got.Status) != string(tc.HealthStatus.Status) || got.Message != tc.HealthStatus.Message
				total++
				switch {
				case !differs && !listed:
					passed++
				case differs && listed:
					deviations++
				}
				switch {
				case differs && !listed:
					t.Errorf("unlisted deviation: built-in %+v, ours %+v", tc.HealthStatus, *got)
				case !differs && listed:
					t.Errorf("listed deviation (%s) no longer differs", dev.Why)
				case listed && (string(got.Status) != tc.HealthStatus.Status) != dev.StatusDiffers:
					t.Errorf("status difference not as listed: built-in %+v, ours %+v", tc.HealthStatus, *got)
				}
			})
		}
	}
}

// recorded is what the engine says Argo CD v3.2 records for obj (ResourceHealth), for a kind with a script.
func recorded(obj map[string]any, script string) (engine.Health, error) {
	h, err := engine.Engine{Profile: engine.V32}.ResourceHealth(obj, script)
	if err == nil && h == nil {
		err = fmt.Errorf("no health")
	}
	if h == nil {
		return engine.Health{}, err
	}
	return *h, err
}
