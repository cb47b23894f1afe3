package conformance

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/argocdcm"
	"github.com/analysis-health/analysis-health/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/conformance/probe"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/golden"
)

// The list of built-in scripts the `scripts` verb knows for v2.14 is Argo CD v2.14.21's embedded tree.
func TestBuiltinListV214(t *testing.T) {
	var paths []string
	err := fs.WalkDir(resource_customizations.Embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".lua" && !strings.Contains(p, "/testdata/") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, "../argocdcm/builtin/v2.14.txt", []byte(builtin.List("v2.14.21", paths)))
}

// What `scripts` says Argo CD uses is what Argo CD v2.14's util/lua resolves: GetHealthScript (script and
// open libraries; else gitops-engine's Go check or nothing), GetResourceActionDiscovery (the discovery
// scripts, in order) and GetResourceAction for every action name it lists, and for one it does not.
func TestScriptResolutionMatchesArgoCD(t *testing.T) {
	ix, err := builtin.For("v2.14")
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
	for _, tc := range probe.ResolutionCases {
		argoOverrides, err := overridesFromConfigMap(t, tc.Data)
		if err != nil {
			t.Fatal(err)
		}
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
}
