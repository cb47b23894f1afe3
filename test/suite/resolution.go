package suite

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/probe"
)

// BuiltinList: the list of built-in scripts the `scripts` verb knows for the release line is the
// release's embedded tree; a release that adds or drops a script makes this fail until the list is
// regenerated (-update).
func BuiltinList(t *testing.T, r Release) {
	var paths []string
	err := fs.WalkDir(r.Builtins(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".lua" && !strings.Contains(p, "/testdata/") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("Argo CD %s embeds no resource_customizations scripts", r.Version())
	}
	golden.File(t, RepoFile(t, "internal/install/argocdcm/builtin/"+string(r.Profile())+".txt"), []byte(builtin.List(r.Version(), paths)))
}

// ScriptResolution: what `scripts --argocd-version <line>` says Argo CD uses is what the release's
// util/lua resolves: GetHealthScript (script and open libraries; else gitops-engine's Go check or
// nothing), GetResourceActionDiscovery (the discovery scripts, in order) and GetResourceAction for every
// action name it lists, and for one it does not; built-in wildcard folders included where the release
// has them.
func ScriptResolution(t *testing.T, r Release) {
	ix, err := builtin.For(string(r.Profile()))
	if err != nil {
		t.Fatal(err)
	}
	embedded := func(t *testing.T, p string) string {
		b, err := fs.ReadFile(r.Builtins(), p)
		if err != nil {
			t.Fatalf("built-in %s: %v", p, err)
		}
		return string(b)
	}
	source := func(t *testing.T, ref argocdcm.ScriptRef) string {
		if ref.Source == argocdcm.Builtin || ref.Source == argocdcm.BuiltinWildcard {
			return embedded(t, ref.Key)
		}
		return ref.Script
	}
	sawBuiltinWildcard := false
	for _, tc := range probe.ResolutionCases {
		argo := Load(t, r, tc.Data)
		ours, err := argocdcm.Parse(tc.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, gvk := range probe.ResolutionKinds {
			t.Run(tc.Name+"/"+gvk.Kind, func(t *testing.T) {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				obj := u.Object
				res, err := ours.Resolve(gvk.Group, gvk.Kind, ix, engine.GoHealthCheck(gvk.Group, gvk.Kind))
				if err != nil {
					t.Fatal(err)
				}
				wantScript, wantOpen, err := argo.HealthScript(obj)
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
					if embedded(t, h.Key) != wantScript || !wantOpen {
						t.Errorf("health: ours %s %s, Argo CD another script (open %v)", h.Source, h.Key, wantOpen)
					}
				default:
					goCheck := r.GoHealthCheck(gvk)
					if wantScript != "" || goCheck != (h.Source == argocdcm.GoCheck) {
						t.Errorf("health: ours %s, Argo CD script %q, Go check %v", h.Source, wantScript, goCheck)
					}
				}
				wantDiscovery, err := argo.DiscoveryScripts(obj)
				if err != nil {
					t.Fatal(err)
				}
				var gotDiscovery []string
				for _, d := range res.Actions.Discovery {
					gotDiscovery = append(gotDiscovery, source(t, d))
				}
				if strings.Join(gotDiscovery, "\x00") != strings.Join(wantDiscovery, "\x00") {
					t.Errorf("discovery: ours %+v, Argo CD %d scripts", res.Actions.Discovery, len(wantDiscovery))
				}
				for _, name := range append(append([]string{"no-such-action"}, res.Actions.Custom...), res.Actions.Builtin...) {
					script, argoErr := argo.ActionScript(obj, name)
					ref, ok, err := ours.Action(gvk.Group, gvk.Kind, name, ix)
					if err != nil {
						t.Fatal(err)
					}
					if ok != (argoErr == nil) {
						t.Errorf("action %s: ours found %v, Argo CD error %v", name, ok, argoErr)
						continue
					}
					if ok && source(t, ref) != script {
						t.Errorf("action %s: ours %s %s, Argo CD another script", name, ref.Source, ref.Key)
					}
				}
			})
		}
	}
	if r.Capabilities().BuiltinWildcards && !sawBuiltinWildcard {
		t.Error("no case resolved to a built-in wildcard folder")
	}
}
