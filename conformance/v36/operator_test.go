package v36

import (
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"

	"github.com/analysis-health/analysis-health/conformance/argocdoperator"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

// The operator formats in Argo CD v3.6.1: the argocd-cm the Argo CD Operator derives from the patched ArgoCD
// resource (the merge patch on a minimal resource, the JSON patch on one with entries of its own) loads
// through v3.6's util/settings with our scripts byte for byte, every fixture's health through v3.6's
// controller path equals the engine's v3 profile, and the actions load as assertGeneratedActions requires.
// The schema validation of the patched resource is in the main module (conformance/operator_test.go).
func TestOperatorPatchesInArgoCDv36(t *testing.T) {
	cases := []struct {
		name      string
		format    generator.Format
		patchType string
		cr        string
	}{
		{"merge on minimal", generator.Operator, argocdoperator.Merge, argocdoperator.MinimalArgoCD},
		{"json6902 on customized", generator.OperatorJSON6902, argocdoperator.JSON, argocdoperator.CustomizedArgoCD},
	}
	sets := []struct {
		name string
		opts generator.Options
	}{
		{"default", generator.Options{}},
		{"degraded", generator.Options{Inconclusive: generator.InconclusiveDegraded}},
		{"no-block-bypass", generator.Options{BlockBypassOnFailedAnalysis: new(false)}},
		{"no-actions", generator.Options{Actions: new(false)}},
	}
	fixtures, err := lua.Fixtures()
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, tc := range cases {
		for _, set := range sets {
			t.Run(tc.name+"/"+set.name, func(t *testing.T) {
				files, err := generator.Generate(tc.format, set.opts)
				if err != nil || len(files) != 1 {
					t.Fatalf("generate: %v (%d files)", err, len(files))
				}
				patched, err := argocdoperator.Apply(tc.patchType, files[0].Data, []byte(tc.cr))
				if err != nil {
					t.Fatalf("patch refused: %v", err)
				}
				data, err := argocdoperator.ConfigMapData(patched)
				if err != nil {
					t.Fatal(err)
				}
				ov := overrides(t, data)
				for _, k := range lua.Kinds() {
					want, err := generator.Script(k, set.opts)
					if err != nil {
						t.Fatal(err)
					}
					if o, ok := ov[k.Key()]; !ok || o.HealthLua != want || o.UseOpenLibs {
						t.Fatalf("%s: override missing, altered or with open libs", k.Key())
					}
				}
				degraded := 0
				for _, f := range fixtures {
					obj := object(t, f.Raw)
					script, err := generator.Script(lua.Kind{Group: obj.GroupVersionKind().Group, Kind: obj.GetKind()}, set.opts)
					if err != nil {
						t.Fatal(err)
					}
					ours, err := recorded(obj.Object, script)
					if err != nil {
						t.Fatal(err)
					}
					got, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides(ov))
					if err != nil || got == nil {
						t.Fatalf("%s: %v %v", f.Path, got, err)
					}
					if string(got.Status) != ours.Status || got.Message != ours.Message {
						t.Errorf("%s: argo-cd v3.6 %+v, engine %+v", f.Path, *got, ours)
					}
					if ours.Status == engine.Degraded {
						degraded++
					}
				}
				if degraded == 0 {
					t.Error("no fixture is Degraded: the comparison proves nothing")
				}
				assertGeneratedActions(t, ov, set.opts)
				if tc.cr == argocdoperator.CustomizedArgoCD && ov["cert-manager.io/Certificate"].HealthLua == "" {
					t.Error("the resource's own health check was lost")
				}
			})
		}
	}
}
