package v36

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/argocdcm"
	"github.com/analysis-health/analysis-health/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/conformance/probe"
	"github.com/analysis-health/analysis-health/engine"
)

// What `scripts --argocd-version v3.6` says Argo CD uses is what Argo CD v3.6's util/lua resolves,
// built-in wildcard folders included: GetHealthScript, GetResourceActionDiscovery, GetResourceAction.
func TestScriptResolutionMatchesArgoCDv36(t *testing.T) {
	ix, err := builtin.For("v3.6")
	if err != nil {
		t.Fatal(err)
	}
	embedded := func(p string) string {
		b, err := resource_customizations.Embedded.ReadFile(p)
		if err != nil {
			t.Fatalf("built-in %s: %v", p, err)
		}
		return string(b)
	}
	source := func(r argocdcm.ScriptRef) string {
		if r.Source == argocdcm.Builtin || r.Source == argocdcm.BuiltinWildcard {
			return embedded(r.Key)
		}
		return r.Script
	}
	sawBuiltinWildcard := false
	for _, tc := range probe.ResolutionCases {
		argoOverrides := overrides(t, tc.Data)
		ours, err := argocdcm.Parse(tc.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, gvk := range probe.ResolutionKinds {
			t.Run(tc.Name+"/"+gvk.Kind, func(t *testing.T) {
				obj := &unstructured.Unstructured{}
				obj.SetGroupVersionKind(gvk)
				vm := argolua.VM{ResourceOverrides: argoOverrides}
				res, err := ours.Resolve(gvk.Group, gvk.Kind, ix, engine.GoHealthCheck(gvk.Group, gvk.Kind))
				if err != nil {
					t.Fatal(err)
				}
				wantScript, wantOpen, err := vm.GetHealthScript(obj)
				if err != nil {
					t.Fatal(err)
				}
				h := res.Health
				switch h.Source {
				case argocdcm.ExactKey, argocdcm.Wildcard:
					if h.Script != wantScript || h.OpenLibs != wantOpen {
						t.Errorf("health: ours %s %s (open %v), Argo CD %q (open %v)", h.Source, h.Key, h.OpenLibs, wantScript, wantOpen)
					}
				case argocdcm.Builtin, argocdcm.BuiltinWildcard:
					sawBuiltinWildcard = sawBuiltinWildcard || h.Source == argocdcm.BuiltinWildcard
					if embedded(h.Key) != wantScript || !wantOpen {
						t.Errorf("health: ours %s %s, Argo CD another script (open %v)", h.Source, h.Key, wantOpen)
					}
				default:
					goCheck := health.GetHealthCheckFunc(gvk) != nil
					if wantScript != "" || goCheck != (h.Source == argocdcm.GoCheck) {
						t.Errorf("health: ours %s, Argo CD script %q, Go check %v", h.Source, wantScript, goCheck)
					}
				}
				wantDiscovery, err := vm.GetResourceActionDiscovery(obj)
				if err != nil {
					t.Fatal(err)
				}
				var gotDiscovery []string
				for _, d := range res.Actions.Discovery {
					gotDiscovery = append(gotDiscovery, source(d))
				}
				if strings.Join(gotDiscovery, "\x00") != strings.Join(wantDiscovery, "\x00") {
					t.Errorf("discovery: ours %+v, Argo CD %d scripts", res.Actions.Discovery, len(wantDiscovery))
				}
				for _, name := range append(append([]string{"no-such-action"}, res.Actions.Custom...), res.Actions.Builtin...) {
					def, argoErr := vm.GetResourceAction(obj, name)
					ref, ok, err := ours.Action(gvk.Group, gvk.Kind, name, ix)
					if err != nil {
						t.Fatal(err)
					}
					if ok != (argoErr == nil) {
						t.Errorf("action %s: ours found %v, Argo CD error %v", name, ok, argoErr)
						continue
					}
					if ok && source(ref) != def.ActionLua {
						t.Errorf("action %s: ours %s %s, Argo CD another script", name, ref.Source, ref.Key)
					}
				}
			})
		}
	}
	if !sawBuiltinWildcard {
		t.Error("no case resolved to a built-in wildcard folder")
	}
}
