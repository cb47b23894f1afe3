package conformance

import (
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
)

// Our reading of argocd-cm (used by `health --argocd-cm`) against Argo CD v2.14's util/settings on the
// same data: the same keys rejected, the same scripts found under the same override keys.
func TestConfigMapParsingMatchesArgoCD(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string]string
	}{
		{"split keys", map[string]string{
			"resource.customizations.health.argoproj.io_Rollout":      "return {status='Healthy'}",
			"resource.customizations.useOpenLibs.argoproj.io_Rollout": "true",
			"resource.customizations.actions.argoproj.io_Rollout":     "discovery.lua: return {}",
			"resource.customizations.health.PersistentVolumeClaim":    "return {}",
			"url": "https://argocd.example.com",
		}},
		{"legacy key with wildcard", map[string]string{
			"resource.customizations": "argoproj.io/*:\n  health.lua: |\n    return {status='Suspended'}\n  health.lua.useOpenLibs: true\n",
		}},
		{"split key overrides legacy", map[string]string{
			"resource.customizations":                            "argoproj.io/Rollout:\n  health.lua: return {status='Degraded'}\n",
			"resource.customizations.health.argoproj.io_Rollout": "return {status='Healthy'}",
		}},
		{"all", map[string]string{"resource.customizations.health.all": "return {status='Healthy'}"}},
		{"unsupported type", map[string]string{"resource.customizations.healthz.argoproj.io_Rollout": "x"}},
		{"bad useOpenLibs", map[string]string{"resource.customizations.useOpenLibs.argoproj.io_Rollout": "yes"}},
		{"bad group kind", map[string]string{"resource.customizations.health.argoproj.io_Roll_out": "x"}},
		{"short key ignored", map[string]string{"resource.customizations.health": "x"}},
		{"malformed legacy", map[string]string{"resource.customizations": "argoproj.io/Rollout: [\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := overridesFromConfigMap(t, tc.data)
			got, gotErr := argocdcm.Parse(tc.data)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("argo-cd error %v, ours %v", wantErr, gotErr)
			}
			if wantErr != nil {
				return
			}
			for key, w := range want {
				if w.HealthLua == "" && w.Actions == "" {
					continue // Argo CD's own status-ignore entries carry no script
				}
				g := got[key]
				if g.HealthLua != w.HealthLua || g.UseOpenLibs != w.UseOpenLibs || g.Actions != w.Actions {
					t.Errorf("%s: argo-cd %+v, ours %+v", key, w, g)
				}
			}
			// and the script each kind resolves to: exact key, then wildcard, as util/lua GetHealthScript
			for _, gk := range [][2]string{{"argoproj.io", "Rollout"}, {"argoproj.io", "AnalysisRun"}, {"", "PersistentVolumeClaim"}, {"apps", "Deployment"}} {
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gk[0] + "/v1", "kind": gk[1]}}
				if gk[0] == "" {
					obj.SetAPIVersion("v1")
				}
				wantScript, wantOpen, err := argolua.VM{ResourceOverrides: want}.GetHealthScript(obj)
				if err != nil {
					t.Fatal(err)
				}
				gotScript, gotOpen, ok := got.HealthScript(gk[0], gk[1])
				builtin := !ok && wantOpen // Argo CD falls back to its built-in scripts, which we do not bundle
				if !builtin && (gotScript != wantScript || gotOpen != wantOpen) {
					t.Errorf("%s/%s resolves to %q (open libs %v), Argo CD: %q (%v)", gk[0], gk[1], gotScript, gotOpen, wantScript, wantOpen)
				}
			}
			for key, g := range got {
				if g.HealthLua != "" && want[key].HealthLua != g.HealthLua {
					t.Errorf("%s: ours has a health script Argo CD does not", key)
				}
			}
		})
	}
}
