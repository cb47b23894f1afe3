package v36

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
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

// overrides loads argocd-cm data through v3.6's SettingsManager, as the application controller does.
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

func TestFixturesMatchArgoCDv36(t *testing.T) {
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
	var compared atomic.Int64
	for _, f := range fx {
		t.Run(f.Path, func(t *testing.T) {
			obj := object(t, f.Raw)
			script, err := lua.Health(obj.GroupVersionKind().Group, obj.GetKind())
			if err != nil {
				t.Fatal(err)
			}
			ours, err := engine.Engine{Profile: engine.V36}.Execute(obj.Object, script)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := argolua.VM{}.ExecuteHealthLua(obj.DeepCopy(), script)
			if err != nil {
				t.Fatal(err)
			}
			if ours == nil || vm == nil {
				t.Fatalf("a script returned nil: engine %v, argo-cd %v", ours, vm)
			}
			ctrl, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(ov))
			if err != nil || ctrl == nil {
				t.Fatalf("controller path: %v, %v", ctrl, err)
			}
			if !sameHealth(ours, vm) {
				t.Errorf("engine %+v != argo-cd v3.6 VM %+v", *ours, *vm)
			}
			rec, err := engine.Engine{Profile: engine.V36}.ResourceHealth(obj.Object, script)
			if err != nil || rec == nil {
				t.Fatalf("engine ResourceHealth: %v, %v", rec, err)
			}
			if !sameHealth(rec, ctrl) {
				t.Errorf("engine %+v != v3.6 controller path %+v", *rec, *ctrl)
			}
			compared.Add(1)
		})
	}
	reportCount(t, "fixtures compared (util/lua and GetResourceHealth)", int(compared.Load()), len(fx))
}

func TestSandboxMatchesArgoCDv36(t *testing.T) {
	for _, openLibs := range []bool{false, true} {
		for _, tc := range probe.Cases {
			t.Run(fmt.Sprintf("openLibs=%v/%s", openLibs, tc.Name), func(t *testing.T) {
				want, wantErr := argolua.VM{UseOpenLibs: openLibs}.ExecuteHealthLua(&unstructured.Unstructured{Object: probe.Object()}, tc.Script)
				got, gotErr := engine.Engine{Profile: engine.V36, OpenLibs: openLibs}.Execute(probe.Object(), tc.Script)
				if probe.ErrText(wantErr) != probe.ErrText(gotErr) {
					t.Fatalf("error:\n argo-cd v3.6: %s\n engine:       %s", probe.ErrText(wantErr), probe.ErrText(gotErr))
				}
				if wantErr == nil && !sameHealth(got, want) {
					t.Errorf("argo-cd v3.6 %s, engine %s", showArgo(want), show(got))
				}
			})
		}
	}
}

// Argo CD v3.6.1's own suites for these kinds, against our scripts, as v3.6.1's TestLuaHealthScript
// compares them (ExecuteHealthLua's pointer result, deletionMessage included): the same deviations as
// v2.14's, no more; the engine gives what v3.6.1's VM gives on every input.
func TestArgoCDv36BuiltinSuites(t *testing.T) {
	var passed, deviations, total atomic.Int64
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
			total.Add(1)
			t.Run(id, func(t *testing.T) {
				input, err := resource_customizations.Embedded.ReadFile(path.Join(dir, tc.InputPath))
				if err != nil {
					t.Fatal(err)
				}
				got, err := argolua.VM{}.ExecuteHealthLua(object(t, input), script)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := engine.Engine{Profile: engine.V36}.Execute(object(t, input).Object, script)
				if err != nil || !sameHealth(ours, got) {
					t.Fatalf("engine %s, %v; argo-cd v3.6 VM %s", show(ours), err, showArgo(got))
				}
				dev, listed := probe.BuiltinDeviations[id]
				want := &health.HealthStatus{Status: health.HealthStatusCode(tc.HealthStatus.Status), Message: tc.HealthStatus.Message, DeletionMessage: tc.HealthStatus.DeletionMessage}
				if tc.NoHealth {
					want = nil
				}
				differs := !reflect.DeepEqual(want, got) // v3.6.1's assert.Equal(t, test.HealthStatus, result)
				switch {
				case differs && !listed:
					t.Errorf("unlisted deviation: built-in %s, ours %s", showArgo(want), showArgo(got))
				case !differs && listed:
					t.Errorf("listed deviation (%s) no longer differs", dev.Why)
				case listed && (want == nil || got == nil || want.Status != got.Status) != dev.StatusDiffers:
					t.Errorf("status difference not as listed: built-in %s, ours %s", showArgo(want), showArgo(got))
				case listed:
					deviations.Add(1)
				default:
					passed.Add(1)
				}
			})
		}
	}
	t.Logf("Argo CD v3.6.1 built-in health suites: %d cases, %d passed, %d listed deviations", total.Load(), passed.Load(), deviations.Load())
	if passed.Load()+deviations.Load() != total.Load() {
		t.Errorf("%d cases, %d passed and %d deviations", total.Load(), passed.Load(), deviations.Load())
	}
	probe.CheckSuiteCounts(t, "../../docs/argocd-versions.md", "v3.6.1", int(total.Load()), int(passed.Load()), int(deviations.Load()))
}

// recorded is what the engine says Argo CD v3.6.1 records for obj (ResourceHealth), for a kind with a script.
func recorded(obj map[string]any, script string) (engine.Health, error) {
	h, err := engine.Engine{Profile: engine.V36}.ResourceHealth(obj, script)
	if err == nil && h == nil {
		err = fmt.Errorf("no health")
	}
	if h == nil {
		return engine.Health{}, err
	}
	return *h, err
}

// sameHealth compares what the engine and Argo CD v3.6 return, "no health" (nil) and deletionMessage
// included.
func sameHealth(ours *engine.Health, argo *health.HealthStatus) bool {
	if ours == nil || argo == nil {
		return ours == nil && argo == nil
	}
	return ours.Status == string(argo.Status) && ours.Message == argo.Message && ours.DeletionMessage == argo.DeletionMessage
}

func show(h *engine.Health) string {
	if h == nil {
		return "<no health>"
	}
	return fmt.Sprintf("%+v", *h)
}

func showArgo(h *health.HealthStatus) string {
	if h == nil {
		return "<no health>"
	}
	return fmt.Sprintf("%+v", *h)
}

// reportCount logs a count for the closing notes and fails when nothing was compared.
func reportCount(t *testing.T, what string, n, want int) {
	t.Helper()
	t.Logf("Argo CD v3.6.1: %d %s", n, what)
	if n == 0 || n != want {
		t.Errorf("%d %s, want %d", n, what, want)
	}
}
