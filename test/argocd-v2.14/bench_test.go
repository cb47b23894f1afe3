package conformance

import (
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/bench/costcases"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/suite"
)

// BenchmarkHealth measures one health evaluation per op, cycling over every bundled fixture, in Argo CD
// v2.14's real controller path (gitops-engine GetResourceHealth):
//   - ours: our scripts from argocd-cm (no open libraries, as Argo CD runs them);
//   - builtin: Argo CD's built-in scripts (no override; Argo CD opens every library for them per call);
//   - floor: a one-line argocd-cm script, the cost of the VM itself;
//   - engine: our scripts on our own engine (what the CLI does).
//
// Target: ours at most half of builtin (`make bench` prints ns/op side by side).
func BenchmarkHealth(b *testing.B) {
	byKind := map[string][]*unstructured.Unstructured{}
	var all []*unstructured.Unstructured
	var builtinErrors []string
	for _, fx := range fixtures(b) {
		obj := unstructuredFrom(b, fx.Raw)
		// The same objects for every variant: those Argo CD's built-in scripts evaluate without a Lua
		// error (some action fixtures lack metadata.generation, on which the built-in Rollout script fails).
		if _, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides{}); err != nil {
			builtinErrors = append(builtinErrors, fx.Path)
			continue
		}
		byKind[obj.GetKind()] = append(byKind[obj.GetKind()], obj)
		all = append(all, obj)
	}
	if len(builtinErrors) > 0 {
		b.Logf("left out %d fixtures on which Argo CD's built-in script raises an error: %v", len(builtinErrors), builtinErrors)
	}
	floor := map[string]string{}
	for _, k := range lua.Kinds() {
		floor["resource.customizations.health."+k.ConfigMapSuffix()] = `return {status="Healthy"}`
	}
	oursOv, err := overridesFromConfigMap(b, suite.HealthData(b))
	if err != nil {
		b.Fatal(err)
	}
	floorOv, err := overridesFromConfigMap(b, floor)
	if err != nil {
		b.Fatal(err)
	}
	sets := []struct {
		name string
		objs []*unstructured.Unstructured
	}{{"all", all}, {"Rollout-steady", costcases.SteadyOf(byKind["Rollout"])}}
	for _, k := range lua.Kinds() {
		sets = append(sets, struct {
			name string
			objs []*unstructured.Unstructured
		}{k.Kind, byKind[k.Kind]})
	}
	for _, set := range sets {
		for _, bc := range []struct {
			name string
			ov   argolua.ResourceHealthOverrides
		}{
			{"ours", argolua.ResourceHealthOverrides(oursOv)},
			{"builtin", argolua.ResourceHealthOverrides{}},
			{"floor", argolua.ResourceHealthOverrides(floorOv)},
		} {
			b.Run(set.name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := health.GetResourceHealth(set.objs[i%len(set.objs)], bc.ov); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(set.name+"/engine", func(b *testing.B) {
			scripts := map[string]string{}
			for _, k := range lua.Kinds() {
				scripts[k.Kind], _ = lua.Health(k.Group, k.Kind)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				obj := set.objs[i%len(set.objs)]
				if _, err := (engine.Engine{Profile: engine.V214}).Health(obj.Object, scripts[obj.GetKind()]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
