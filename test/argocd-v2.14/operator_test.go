package conformance

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/argocdoperator"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The argocd-operator ArgoCD CRD is not in a Go module: vendored (internal/upstream).
const argocdCRDRel = "argocd-operator/argoproj.io_argocds.yaml"

// crdVersion validates objects as the API server does for one served version of a CRD: the structural
// schema (which must itself be structural), pruning of unknown fields (reported, not silently dropped),
// OpenAPI validation and the x-kubernetes-validations CEL rules.
type crdVersion struct {
	name       string
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func loadArgoCDCRD(t *testing.T) []crdVersion {
	t.Helper()
	raw, err := os.ReadFile(upstream.Vendored(t, argocdCRDRel))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatalf("%s: %v", argocdCRDRel, err)
	}
	var out []crdVersion
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			t.Fatalf("%s %s: %v", argocdCRDRel, v.Name, err)
		}
		s, err := structuralschema.NewStructural(&internal)
		if err != nil {
			t.Fatalf("%s %s: %v", argocdCRDRel, v.Name, err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("schema"), s); len(errs) > 0 {
			t.Fatalf("%s %s is not structural: %v", argocdCRDRel, v.Name, errs.ToAggregate())
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, crdVersion{v.Name, s, validator, cel.NewValidator(s, true, celconfig.PerCallLimit)})
	}
	var names []string
	for _, v := range out {
		names = append(names, v.name)
	}
	if strings.Join(names, ",") != "v1alpha1,v1beta1" {
		t.Fatalf("served versions %v, want v1alpha1 and v1beta1", names)
	}
	return out
}

// validate reports every way the API server would reject or alter obj (JSON) as version v.
func (v crdVersion) validate(t *testing.T, obj []byte) field.ErrorList {
	t.Helper()
	var u map[string]any
	if err := yaml.Unmarshal(obj, &u); err != nil {
		t.Fatal(err)
	}
	u["apiVersion"] = "argoproj.io/" + v.name
	var errs field.ErrorList
	pruned := structuralpruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range pruned {
		errs = append(errs, field.Invalid(field.NewPath(p), nil, "unknown field, pruned by the API server"))
	}
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, v.validator)...)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, u, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

const (
	minimalArgoCD    = argocdoperator.MinimalArgoCD
	customizedArgoCD = argocdoperator.CustomizedArgoCD
)

func toJSON(t *testing.T, y string) []byte {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func applyPatch(t *testing.T, f generator.Format, patch []byte, cr []byte) ([]byte, error) {
	t.Helper()
	if f == generator.Operator {
		return argocdoperator.Apply(argocdoperator.Merge, patch, cr)
	}
	return argocdoperator.Apply(argocdoperator.JSON, patch, cr)
}

func argoCDSpec(t *testing.T, cr []byte) (argocdoperator.Spec, map[string]string) {
	t.Helper()
	var obj struct {
		Metadata metav1.ObjectMeta   `json:"metadata"`
		Spec     argocdoperator.Spec `json:"spec"`
	}
	if err := yaml.Unmarshal(cr, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Spec, obj.Metadata.Annotations
}

func entryKeys(s argocdoperator.Spec) string {
	var keys []string
	for _, c := range s.ResourceHealthChecks {
		keys = append(keys, "health:"+c.Group+"/"+c.Kind)
	}
	for _, c := range s.ResourceActions {
		keys = append(keys, "actions:"+c.Group+"/"+c.Kind)
	}
	return strings.Join(keys, " ")
}

// Both operator formats, applied to a minimal ArgoCD resource and to one with entries of its own: the
// result is valid in both served versions of the real CRD, holds what each format promises, and the
// argocd-cm the operator derives from it gives, through Argo CD v2.14's util/settings, exactly our health
// on every fixture and our actions.
func TestOperatorPatchesInArgoCDOperator(t *testing.T) {
	versions := loadArgoCDCRD(t)
	ours := "health:argoproj.io/AnalysisRun health:argoproj.io/Experiment health:argoproj.io/Rollout " +
		"actions:argoproj.io/AnalysisRun actions:argoproj.io/Experiment actions:argoproj.io/Rollout"
	for _, base := range []struct{ name, cr string }{{"minimal", minimalArgoCD}, {"customized", customizedArgoCD}} {
		cr := toJSON(t, base.cr)
		for _, v := range versions {
			if errs := v.validate(t, cr); len(errs) > 0 {
				t.Fatalf("the %s test resource itself is invalid as %s: %v", base.name, v.name, errs.ToAggregate())
			}
		}
		for _, f := range []generator.Format{generator.Operator, generator.OperatorJSON6902} {
			for _, set := range suite.OptionSets {
				t.Run(base.name+"/"+string(f)+"/"+set.Name, func(t *testing.T) {
					patch := suite.Generated(t, f, set.Opts)[0].Data
					got, err := applyPatch(t, f, patch, cr)
					if f == generator.OperatorJSON6902 && base.name == "minimal" {
						// No annotations and no lists to append to: refused whole, never half-applied.
						if err == nil {
							t.Fatal("the JSON patch applied to a resource without lists; it must be refused")
						}
						return
					}
					if err != nil {
						t.Fatalf("patch refused: %v", err)
					}
					for _, v := range versions {
						if errs := v.validate(t, got); len(errs) > 0 {
							t.Errorf("patched resource invalid as %s: %v", v.name, errs.ToAggregate())
						}
					}
					spec, ann := argoCDSpec(t, got)
					want := ours
					if f == generator.OperatorJSON6902 {
						// Appended after the resource's own entries, which are kept.
						want = "health:cert-manager.io/Certificate health:argoproj.io/AnalysisRun health:argoproj.io/Experiment health:argoproj.io/Rollout " +
							"actions:apps/Deployment actions:argoproj.io/AnalysisRun actions:argoproj.io/Experiment actions:argoproj.io/Rollout"
					}
					if entryKeys(spec) != want {
						t.Errorf("entries after the patch:\n  %s\nwant\n  %s", entryKeys(spec), want)
					}
					if ann[generator.OperatorMarker] == "" {
						t.Errorf("marker annotation %s not set", generator.OperatorMarker)
					}
					if base.name == "customized" && ann["kubectl.kubernetes.io/last-applied-configuration"] != "{}" {
						t.Error("the resource's own annotations were not kept")
					}
					if !strings.Contains(string(got), `"route":{"enabled":true}`) && base.name == "customized" {
						t.Error("the resource's other settings were not kept")
					}
					data, err := argocdoperator.ConfigMapData(got)
					if err != nil {
						t.Fatal(err)
					}
					s := suite.Load(t, release, data)
					suite.AssertInstalled(t, release, s, set.Opts)
					if cert, _ := s.Override("cert-manager.io/Certificate"); base.name == "customized" && f == generator.OperatorJSON6902 && cert.HealthLua == "" {
						t.Error("the resource's own health check did not reach argocd-cm")
					}

					// Applying the JSON patch again is refused by its duplicate guard.
					if f == generator.OperatorJSON6902 {
						if _, err := applyPatch(t, f, patch, got); err == nil || !strings.Contains(err.Error(), "testing value") {
							t.Errorf("a second application was not refused by the test op: %v", err)
						}
					}
				})
			}
		}
	}
}

// The patches name the ArgoCD resource they were generated for; applied to another one, the API server
// refuses them: the JSON patch by its test ops, the merge patch because metadata.name and namespace are
// immutable (apimachinery ValidateObjectMetaUpdate, which the API server runs on every update).
func TestOperatorPatchesRefuseOtherResources(t *testing.T) {
	for _, other := range []struct{ name, namespace string }{{"other", "argocd"}, {"argocd", "openshift-gitops"}} {
		cr := strings.ReplaceAll(customizedArgoCD, "  name: argocd\n  namespace: argocd\n",
			"  name: "+other.name+"\n  namespace: "+other.namespace+"\n")
		old := unstructuredFrom(t, []byte(cr))
		for _, f := range []generator.Format{generator.Operator, generator.OperatorJSON6902} {
			got, err := applyPatch(t, f, suite.Generated(t, f, generator.Options{})[0].Data, toJSON(t, cr))
			if f == generator.OperatorJSON6902 {
				if err == nil {
					t.Errorf("%s applied to %s/%s", f, other.namespace, other.name)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			patched := unstructuredFrom(t, got)
			errs := metavalidation.ValidateObjectMetaAccessorUpdate(patched, old, field.NewPath("metadata"))
			if len(errs) == 0 {
				t.Errorf("%s applied to %s/%s passes the API server's metadata update validation", f, other.namespace, other.name)
			}
		}
	}
	// The generated names are what the flags say.
	files := suite.Generated(t, generator.OperatorJSON6902, generator.Options{ArgoCDName: "openshift-gitops", Namespace: "openshift-gitops"})
	cr := strings.ReplaceAll(customizedArgoCD, "  name: argocd\n  namespace: argocd\n", "  name: openshift-gitops\n  namespace: openshift-gitops\n")
	if _, err := applyPatch(t, generator.OperatorJSON6902, files[0].Data, toJSON(t, cr)); err != nil {
		t.Errorf("--argocd-name/--namespace openshift-gitops: %v", err)
	}
}

// The validation can fail: wrong types, unknown fields and CEL rules of the real CRD are reported.
func TestArgoCDCRDValidationRejects(t *testing.T) {
	for _, v := range loadArgoCDCRD(t) {
		for name, spec := range map[string]string{
			"wrong type":    `{"resourceHealthChecks": [{"group": 1, "kind": "Rollout", "check": "x"}]}`,
			"not a list":    `{"resourceActions": {"group": "argoproj.io"}}`,
			"unknown field": `{"resourceHealthChecks": [{"group": "argoproj.io", "kind": "Rollout", "script": "x"}]}`,
			"cel rule":      `{"server": {"route": {"enabled": true, "tls": {"termination": "passthrough", "insecureEdgeTerminationPolicy": "Allow"}}}}`,
		} {
			cr := `{"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD", "metadata": {"name": "a", "namespace": "b"}, "spec": ` + spec + `}`
			if errs := v.validate(t, []byte(cr)); len(errs) == 0 {
				t.Errorf("%s: %s accepted", v.name, name)
			}
		}
	}
}

// Shapes of a live ArgoCD resource the plain JSON patch cannot apply to (it appends with `add …/-` and
// tests the marker inside metadata.annotations), and the full one it can: `generate --format
// operator-json6902 --from` computes the patch against the resource read, creating what is missing.
var liveArgoCDShapes = []struct{ name, cr, own string }{
	{"health checks without resourceActions", `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: argocd
  namespace: argocd
  annotations:
    team: platform
spec:
  resourceHealthChecks:
  - group: cert-manager.io
    kind: Certificate
    check: |
      return {status = "Healthy"}
`, "health:cert-manager.io/Certificate"},
	{"no annotations", `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: argocd
  namespace: argocd
spec:
  resourceHealthChecks:
  - group: cert-manager.io
    kind: Certificate
    check: |
      return {status = "Healthy"}
  resourceActions:
  - group: apps
    kind: Deployment
    action: |
      discovery.lua: |
        return {}
`, "health:cert-manager.io/Certificate actions:apps/Deployment"},
	{"no spec", `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata:
  name: argocd
  namespace: argocd
`, ""},
	{"empty spec", minimalArgoCD, ""},
	{"full", customizedArgoCD, "health:cert-manager.io/Certificate actions:apps/Deployment"},
}

// The JSON patch computed with --from against each shape applies (through the JSON patch library the API
// server uses), keeps the resource's own entries and settings, validates against both served versions of
// the real CRD, gives through Argo CD v2.14's util/settings exactly our health and actions, and is refused
// by its own guards when applied twice or to the resource after its shape changed. The patch without
// --from is refused on all but the full shape, and the merge patch, which docs/install.md used to
// recommend then, drops the resource's own health checks.
func TestOperatorJSON6902FromLiveResource(t *testing.T) {
	versions := loadArgoCDCRD(t)
	full := toJSON(t, customizedArgoCD)
	for _, shape := range liveArgoCDShapes {
		cr := toJSON(t, shape.cr)
		for _, v := range versions {
			if errs := v.validate(t, cr); len(errs) > 0 {
				t.Fatalf("the %q test resource itself is invalid as %s: %v", shape.name, v.name, errs.ToAggregate())
			}
		}
		live, err := generator.ReadArgoCD(shape.name, []byte(shape.cr))
		if err != nil {
			t.Fatal(err)
		}
		if plain := suite.Generated(t, generator.OperatorJSON6902, generator.Options{})[0].Data; shape.name != "full" {
			if _, err := applyPatch(t, generator.OperatorJSON6902, plain, cr); err == nil {
				t.Errorf("%s: the patch without --from applied; the shape was meant to need --from", shape.name)
			}
			merged, err := applyPatch(t, generator.Operator, suite.Generated(t, generator.Operator, generator.Options{})[0].Data, cr)
			if err != nil {
				t.Fatal(err)
			}
			if spec, _ := argoCDSpec(t, merged); shape.own != "" && strings.Contains(entryKeys(spec), "cert-manager.io") {
				t.Errorf("%s: the merge patch kept the resource's own health check; this test's premise is wrong", shape.name)
			}
		}
		for _, set := range suite.OptionSets {
			t.Run(shape.name+"/"+set.Name, func(t *testing.T) {
				opts := set.Opts
				opts.From = live
				patch := suite.Generated(t, generator.OperatorJSON6902, opts)[0].Data
				got, err := applyPatch(t, generator.OperatorJSON6902, patch, cr)
				if err != nil {
					t.Fatalf("patch refused: %v\n%s", err, patch)
				}
				for _, v := range versions {
					if errs := v.validate(t, got); len(errs) > 0 {
						t.Errorf("patched resource invalid as %s: %v", v.name, errs.ToAggregate())
					}
				}
				spec, ann := argoCDSpec(t, got)
				// The resource's own entries first, kept; ours after them.
				want := ""
				for _, e := range strings.Fields(shape.own) {
					if strings.HasPrefix(e, "health:") {
						want += e + " "
					}
				}
				want += "health:argoproj.io/AnalysisRun health:argoproj.io/Experiment health:argoproj.io/Rollout "
				for _, e := range strings.Fields(shape.own) {
					if strings.HasPrefix(e, "actions:") {
						want += e + " "
					}
				}
				want += "actions:argoproj.io/AnalysisRun actions:argoproj.io/Experiment actions:argoproj.io/Rollout"
				if entryKeys(spec) != want {
					t.Errorf("entries after the patch:\n  %s\nwant\n  %s", entryKeys(spec), want)
				}
				if ann[generator.OperatorMarker] == "" {
					t.Errorf("marker annotation %s not set", generator.OperatorMarker)
				}
				if strings.Contains(shape.cr, "team: platform") && ann["team"] != "platform" {
					t.Error("the resource's own annotations were not kept")
				}
				data, err := argocdoperator.ConfigMapData(got)
				if err != nil {
					t.Fatal(err)
				}
				s := suite.Load(t, release, data)
				suite.AssertInstalled(t, release, s, set.Opts)

				// Its guards: a second application, and the resource after its shape changed (the full
				// one stands for lists and annotations created since), are refused whole.
				if _, err := applyPatch(t, generator.OperatorJSON6902, patch, got); err == nil {
					t.Error("a second application was not refused")
				}
				if shape.name != "full" {
					if _, err := applyPatch(t, generator.OperatorJSON6902, patch, full); err == nil {
						t.Error("the patch applied to a resource of another shape (whose lists it would replace)")
					}
				}
			})
		}
	}
}

// --from refuses what the patch could not do right: our entries already there, the marker set, another
// resource than --argocd-name/--namespace say, and input that is no ArgoCD resource.
func TestOperatorJSON6902FromRefuses(t *testing.T) {
	ours, err := generator.ReadArgoCD("ours.yaml", []byte(strings.Replace(customizedArgoCD, "  - group: apps\n", "  - group: argoproj.io\n    kind: Rollout\n    action: x\n  - group: apps\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	marked, err := generator.ReadArgoCD("marked.yaml", []byte(strings.Replace(customizedArgoCD, "  annotations:\n", "  annotations:\n    "+generator.OperatorMarker+": x\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	other, err := generator.ReadArgoCD("other.yaml", []byte(customizedArgoCD))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts generator.Options
		want string
	}{
		{"our actions entry", generator.Options{From: ours}, "ours.yaml: spec.resourceActions already has an entry for argoproj.io/Rollout"},
		{"marker", generator.Options{From: marked}, "marked.yaml: the annotation analysis-health/operator-entries is set"},
		{"another resource", generator.Options{From: other, ArgoCDName: "openshift-gitops"}, "other.yaml: the ArgoCD resource is argocd/argocd, but the patch is for argocd/openshift-gitops"},
	} {
		if _, err := generator.Generate(generator.OperatorJSON6902, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, bad := range []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n", "kind: List\nitems: []\n", "spec: [\n"} {
		if _, err := generator.ReadArgoCD("bad.yaml", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "bad.yaml: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
