package v36

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	builtins "github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/bench/costcases"
)

// The cost benchmarks in Argo CD v3.6.1's VM, the counterpart of conformance/cost_bench_test.go (v2.14):
// the same sets, variants and phases, from internal/bench/costcases (`make bench`; docs/performance.md is
// rendered from their output by internal/bench/benchdoc); this file holds the calls into v3.6.1. v3.6 compiles
// each script once into a process-wide cache (util/lua compiledScriptCache), so an evaluation is setup,
// conversion, run and result; parse and compile are measured as the one-time cost they are. One
// evaluation per op through v3.6.1's real controller path (gitops-engine GetResourceHealth → util/lua
// ResourceHealthOverrides), for ours (the form the generator emits for --argocd-version v3.6), builtin and
// floor.

// argoCD is Argo CD v3.6.1 as the cost benchmarks use it.
func argoCD(b *testing.B) costcases.VM {
	return costcases.VM{
		ArgoCDVersion: "v3.6",
		Profile:       engine.V36,
		Builtins:      builtins.Embedded,
		Evaluator: func(data map[string]string) (costcases.Eval, error) {
			ov := argolua.ResourceHealthOverrides{}
			if data != nil {
				loaded, err := overridesFromConfigMap(b, data)
				if err != nil {
					return nil, err
				}
				ov = argolua.ResourceHealthOverrides(loaded)
			}
			return func(obj *unstructured.Unstructured) error {
				_, err := health.GetResourceHealth(obj, ov)
				return err
			}, nil
		},
		// runLuaWithResourceActionParameters sets actionParams for health scripts too (empty: no
		// parameters).
		ExtraGlobals: func(L *lua.LState) { L.SetGlobal("actionParams", L.CreateTable(0, 0)) },
		DecodeHealth: func(raw []byte) error {
			var hs health.HealthStatus
			return json.Unmarshal(raw, &hs)
		},
	}
}

// BenchmarkCost is one evaluation of each variant per op, the variants taking turns, cycling over a set's
// objects, in Argo CD's own code.
func BenchmarkCost(b *testing.B) { costcases.Cost(b, argoCD(b)) }

// BenchmarkPhases splits an evaluation into the steps Argo CD v3.6.1's util/lua
// runLuaWithResourceActionParameters and ExecuteHealthLua take, each measured alone with the same
// gopher-lua calls: setup (lua.NewState, the four library openers Argo CD calls, the os preload, the 1 s
// context, the actionParams table, Close), convert (decodeValue), parse and compile (once per process in
// v3.6: cached), run, run-cached (run minus run-cached is the lazy compilation) and result.
func BenchmarkPhases(b *testing.B) { costcases.Phases(b, argoCD(b)) }

// BenchmarkWorstCase evaluates the largest objects a cluster plausibly holds (internal/bench/worstcase) through
// Argo CD's real path; the target is at most 10 ms each.
func BenchmarkWorstCase(b *testing.B) { costcases.WorstCase(b, argoCD(b)) }

// overridesFromConfigMap loads argocd-cm data through v3.6's SettingsManager, as the controller does.
func overridesFromConfigMap(b testing.TB, data map[string]string) (map[string]v1alpha1.ResourceOverride, error) {
	b.Helper()
	labels := map[string]string{"app.kubernetes.io/part-of": "argocd"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd", Labels: labels}, Data: data}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: "argocd", Labels: labels},
		Data: map[string][]byte{"server.secretkey": []byte("test")}}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return settings.NewSettingsManager(ctx, fake.NewClientset(cm, secret), "argocd").GetResourceOverrides()
}
