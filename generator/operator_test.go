package generator

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"
)

// Our name check is Kubernetes' own rule for object names.
func TestValidDNS1123SubdomainMatchesKubernetes(t *testing.T) {
	names := []string{"argocd", "openshift-gitops", "a", "a.b", "a-b.c-d", "0", "9abc", "", "A", "a_b", "-a", "a-", "a.", ".a",
		"a..b", "a.-b", "a b", "ä", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "ab"}
	for _, n := range names {
		if got, want := validDNS1123Subdomain(n), len(validation.IsDNS1123Subdomain(n)) == 0; got != want {
			t.Errorf("%q: ours %v, Kubernetes %v", n, got, want)
		}
	}
}

// The patches carry exactly the argocd-cm values, for the kinds selected, and are guarded by name,
// namespace and (JSON patch) the marker.
func TestOperatorFormats(t *testing.T) {
	type entry struct{ Group, Kind, Check, Action string }
	for _, o := range []Options{{}, {Actions: new(false)}, {ArgoCDName: "openshift-gitops", Namespace: "openshift-gitops", Inconclusive: InconclusiveDegraded}} {
		data, err := ConfigMapData(o)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := o.resolve()
		merge := mustGenerate(t, Operator, o)
		var mp struct {
			Metadata struct {
				Name, Namespace string
				Annotations     map[string]string
			}
			Spec struct {
				ResourceHealthChecks []entry `json:"resourceHealthChecks"`
				ResourceActions      []entry `json:"resourceActions"`
			}
		}
		if err := sigsyaml.UnmarshalStrict(merge, &mp); err != nil {
			t.Fatal(err)
		}
		if mp.Metadata.Name != r.argocdName || mp.Metadata.Namespace != r.namespace || mp.Metadata.Annotations[OperatorMarker] == "" {
			t.Errorf("merge patch metadata %+v", mp.Metadata)
		}
		got := map[string]string{}
		for _, e := range mp.Spec.ResourceHealthChecks {
			got["resource.customizations.health."+e.Group+"_"+e.Kind] = e.Check
		}
		for _, e := range mp.Spec.ResourceActions {
			got["resource.customizations.actions."+e.Group+"_"+e.Kind] = e.Action
		}
		if len(got) != len(data) {
			t.Errorf("merge patch has %d entries, argocd-cm data %d", len(got), len(data))
		}
		for k, v := range data {
			if got[k] != v {
				t.Errorf("merge patch: %s differs from the argocd-cm value", k)
			}
		}

		var ops []struct {
			Op, Path string
			Value    any
		}
		if err := sigsyaml.UnmarshalStrict(mustGenerate(t, OperatorJSON6902, o), &ops); err != nil {
			t.Fatal(err)
		}
		if len(ops) != 4+len(data) {
			t.Fatalf("%d ops for %d entries", len(ops), len(data))
		}
		want := []string{"test /metadata/name " + r.argocdName, "test /metadata/namespace " + r.namespace,
			"test /metadata/annotations/analysis-health~1operator-entries <nil>", "add /metadata/annotations/analysis-health~1operator-entries " + r.markerValue()}
		for i, w := range want {
			if g := ops[i].Op + " " + ops[i].Path + " " + fmtValue(ops[i].Value); g != w {
				t.Errorf("op %d = %s, want %s", i, g, w)
			}
		}
		for _, op := range ops[4:] {
			if op.Op != "add" || op.Path != "/spec/resourceHealthChecks/-" && op.Path != "/spec/resourceActions/-" {
				t.Errorf("unexpected op %s %s", op.Op, op.Path)
			}
		}
	}
}

func fmtValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return "<nil>"
	}
	return "?"
}

func mustGenerate(t *testing.T, f Format, o Options) []byte {
	t.Helper()
	files, err := Generate(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	return files[0].Data
}
