package v3

import (
	"testing"

	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

// The generated argocd-cm, loaded through Argo CD v3.2's util/settings, carries our scripts byte for byte,
// and every fixture evaluated through v3.2's controller path with those overrides equals the engine's v3
// profile on the same generated script — with default options and with inconclusive=Degraded.
func TestGeneratedConfigMapInArgoCDv3(t *testing.T) {
	for _, inconclusive := range []string{generator.InconclusiveSuspended, generator.InconclusiveDegraded} {
		t.Run(inconclusive, func(t *testing.T) {
			opts := generator.Options{Inconclusive: inconclusive}
			files, err := generator.Generate(generator.ConfigMap, opts)
			if err != nil || len(files) != 1 {
				t.Fatalf("generate: %v (%d files)", err, len(files))
			}
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict(files[0].Data, &cm); err != nil {
				t.Fatal(err)
			}
			if cm.Labels["app.kubernetes.io/part-of"] != "argocd" || cm.Name != "argocd-cm" {
				t.Fatalf("not a loadable argocd-cm: %s %v", cm.Name, cm.Labels)
			}
			ov := overrides(t, cm.Data)
			fixtures, err := lua.Fixtures()
			if err != nil {
				t.Fatal(err)
			}
			degraded := 0
			for _, k := range lua.Kinds() {
				want, err := generator.Script(k, opts)
				if err != nil {
					t.Fatal(err)
				}
				o, ok := ov[k.Key()]
				if !ok || o.HealthLua != want || o.UseOpenLibs {
					t.Fatalf("%s: override missing, altered or with open libs", k.Key())
				}
			}
			for _, f := range fixtures {
				obj := object(t, f.Raw)
				script, err := generator.Script(lua.Kind{Group: obj.GroupVersionKind().Group, Kind: obj.GetKind()}, opts)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := engine.Engine{Profile: engine.V3}.Health(obj.Object, script)
				if err != nil {
					t.Fatal(err)
				}
				got, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides(ov))
				if err != nil || got == nil {
					t.Fatalf("%s: %v %v", f.Path, got, err)
				}
				if string(got.Status) != ours.Status || got.Message != ours.Message {
					t.Errorf("%s: argo-cd v3 %+v, engine %+v", f.Path, *got, ours)
				}
				if ours.Status == engine.Degraded {
					degraded++
				}
			}
			if degraded == 0 {
				t.Error("no fixture is Degraded: the comparison proves nothing")
			}
		})
	}
}
