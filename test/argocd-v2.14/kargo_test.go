package conformance

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	rollouts "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutsconfig "github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	plugintypes "github.com/argoproj/argo-rollouts/utils/plugin/types"
	rolloutstemplate "github.com/argoproj/argo-rollouts/utils/template"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/formats"
)

// kargoSets are the kargo artifacts every proof runs on.
var kargoSets = []generator.KargoOptions{
	{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop", PluginLocation: "https://example.com/rollouts-plugin-metric-analysis-health",
		PluginSHA256: strings.Repeat("ab", 32)},
	{PluginLocation: "file:///plugins/rollouts-plugin-metric-analysis-health"},
	{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop", PluginLocation: "http://plugins.internal/p", PluginSHA256: strings.Repeat("0", 64),
		KubeconfigSecret: "workload", KubeconfigKey: "config"},
	{Project: "kargo-shop", PluginLocation: "file:///plugins/rollouts-plugin-metric-analysis-health", ImageRepo: "ghcr.io/shop/checkout"},
	{Project: "kargo-shop", PluginLocation: "file:///analysis-health/rollouts-plugin-metric-analysis-health",
		PluginImage: "registry.example.internal/analysis-health/rollouts-plugin-metric-analysis-health@sha256:" + strings.Repeat("ef", 32)},
}

// freightImage is what Kargo makes of generator.KargoImageExpression for a Freight of that image.
const freightImage = "ghcr.io/shop/checkout:1.1.0"

func kargoFiles(t *testing.T, o generator.KargoOptions) map[string][]byte {
	t.Helper()
	files, err := generator.GenerateKargo(o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	return out
}

// crdSchema is what the API server validates and prunes a custom resource with (apiextensions-apiserver
// validation.NewSchemaValidator, schema.NewStructural), for the CRD's served version.
type crdSchema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
	sub        func(path ...string) *apiextensions.JSONSchemaProps
}

func loadCRD(t *testing.T, path string) crdSchema {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("%s: expected one served version with a schema", path)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &props, nil); err != nil {
		t.Fatal(err)
	}
	v, _, err := validation.NewSchemaValidator(&props)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&props)
	if err != nil {
		t.Fatal(err)
	}
	return crdSchema{validator: v, structural: s}
}

// check validates obj as the API server would on create, and reports fields the schema would prune
// (silently dropped fields are as wrong as invalid ones).
func (c crdSchema) check(t *testing.T, what string, obj map[string]any) {
	t.Helper()
	if errs := validation.ValidateCustomResource(field.NewPath(""), obj, c.validator); len(errs) > 0 {
		t.Errorf("%s does not validate against the CRD schema: %v", what, errs.ToAggregate())
	}
	clone := map[string]any{}
	raw, _ := json.Marshal(obj)
	_ = json.Unmarshal(raw, &clone)
	if pruned := pruning.PruneWithOptions(clone, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(pruned) > 0 {
		t.Errorf("%s has fields the CRD schema prunes: %v", what, pruned)
	}
}

func yamlDocs(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range releaseutil.SplitManifests(string(raw)) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// The template decodes strictly into Argo Rollouts' own AnalysisTemplate/ClusterAnalysisTemplate types,
// validates against their CRDs (manifests/crds of argo-rollouts v1.8.5, the main module's version), and
// once Rollouts has substituted the arguments (utils/template.ResolveArgs, as analysis/analysis.go
// resolveArgs does) its plugin config is one the plugin accepts, naming the Rollout the Stage gave.
func TestKargoTemplateInRollouts(t *testing.T) {
	crds := filepath.Join(upstream.ModuleDir(t, "github.com/argoproj/argo-rollouts"), "manifests", "crds")
	schemas := map[string]crdSchema{
		"AnalysisTemplate":        loadCRD(t, filepath.Join(crds, "analysis-template-crd.yaml")),
		"ClusterAnalysisTemplate": loadCRD(t, filepath.Join(crds, "cluster-analysis-template-crd.yaml")),
	}
	if generator.KargoPluginName != rolloutplugin.Name {
		t.Fatalf("generator names the plugin %q, the plugin calls itself %q", generator.KargoPluginName, rolloutplugin.Name)
	}
	for _, o := range kargoSets {
		files := kargoFiles(t, o)
		docs := yamlDocs(t, files[generator.KargoTemplateFile])
		if len(docs) != 1 {
			t.Fatalf("%d documents in the template file", len(docs))
		}
		obj := docs[0]
		kind, _ := obj["kind"].(string)
		schema, ok := schemas[kind]
		if !ok {
			t.Fatalf("template kind %q", kind)
		}
		schema.check(t, kind, obj)
		raw, _ := json.Marshal(obj)
		var spec rollouts.AnalysisTemplateSpec
		var md struct {
			Namespace string `json:"namespace"`
		}
		if kind == "AnalysisTemplate" {
			var at rollouts.AnalysisTemplate
			strictJSON(t, raw, &at)
			spec, md.Namespace = at.Spec, at.Namespace
		} else {
			var cat rollouts.ClusterAnalysisTemplate
			strictJSON(t, raw, &cat)
			spec, md.Namespace = cat.Spec, cat.Namespace
		}
		if md.Namespace != o.Project {
			t.Errorf("template namespace %q, want the Project %q", md.Namespace, o.Project)
		}
		if len(spec.Metrics) != 1 || len(spec.Metrics[0].Provider.Plugin) != 1 {
			t.Fatalf("want one metric with one plugin provider: %+v", spec.Metrics)
		}
		// Kargo fills the args the Stage gives (the template declares them); revision keeps its default.
		args := []rollouts.Argument{}
		for _, a := range spec.Args {
			switch a.Name {
			case generator.KargoArgRollout:
				a.Value = new("checkout")
			case generator.KargoArgNamespace:
				a.Value = new("shop")
			case generator.KargoArgImage:
				if o.ImageRepo != "" {
					a.Value = new(freightImage)
				}
			}
			if a.Value == nil {
				t.Fatalf("argument %s has no value once the Stage's args are merged", a.Name)
			}
			args = append(args, a)
		}
		metric, _ := json.Marshal(spec.Metrics[0])
		resolved, err := rolloutstemplate.ResolveArgs(string(metric), args)
		if err != nil {
			t.Fatal(err)
		}
		var m rollouts.Metric
		if err := json.Unmarshal([]byte(resolved), &m); err != nil {
			t.Fatal(err)
		}
		cfg, err := rolloutplugin.ParseConfig(m.Provider.Plugin[rolloutplugin.Name])
		if err != nil {
			t.Fatalf("the plugin rejects the template's config: %v", err)
		}
		if cfg.Name != "checkout" || cfg.Namespace != "shop" || cfg.Revision != "" {
			t.Errorf("config %+v", cfg)
		}
		if want := map[bool]string{true: freightImage}[o.ImageRepo != ""]; cfg.Image != want {
			t.Errorf("config image %q, want %q", cfg.Image, want)
		}
		if (o.KubeconfigSecret != "") != (cfg.KubeconfigSecret != nil) {
			t.Errorf("kubeconfig Secret %+v, want %q", cfg.KubeconfigSecret, o.KubeconfigSecret)
		}
	}
}

func strictJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		t.Fatalf("does not decode strictly into %T: %v", v, err)
	}
}

// The Stage snippet, merged into a Stage (with the requestedFreight every Stage has), validates against
// Kargo v1.11.2's Stage CRD and loses no field to pruning; its args are exactly the template's.
func TestKargoStageSnippetInKargo(t *testing.T) {
	schema := loadCRD(t, upstream.Vendored(t, "kargo/kargo.akuity.io_stages.yaml"))
	for _, o := range kargoSets {
		files := kargoFiles(t, o)
		docs := yamlDocs(t, files[generator.KargoStageFile])
		if len(docs) != 1 {
			t.Fatalf("%d documents", len(docs))
		}
		spec, _ := docs[0]["spec"].(map[string]any)
		if len(docs[0]) != 1 || spec == nil || len(spec) != 1 || spec["verification"] == nil {
			t.Fatalf("the snippet is not just spec.verification: %v", docs[0])
		}
		spec["requestedFreight"] = []any{map[string]any{
			"origin":  map[string]any{"kind": "Warehouse", "name": "shop"},
			"sources": map[string]any{"direct": true},
		}}
		stage := map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
			"metadata": map[string]any{"name": "prod", "namespace": "kargo-shop"}, "spec": spec}
		schema.check(t, "Stage", stage)
		v := spec["verification"].(map[string]any)
		var names []string
		values := map[string]string{}
		for _, a := range v["args"].([]any) {
			name := a.(map[string]any)["name"].(string)
			names = append(names, name)
			values[name], _ = a.(map[string]any)["value"].(string)
		}
		want := generator.KargoArgRollout + "," + generator.KargoArgNamespace
		if o.ImageRepo != "" {
			want += "," + generator.KargoArgImage
			if values[generator.KargoArgImage] != generator.KargoImageExpression(o.ImageRepo) {
				t.Errorf("image arg %q", values[generator.KargoArgImage])
			}
		}
		if strings.Join(names, ",") != want {
			t.Errorf("args %v, want %s", names, want)
		}
		ref := v["analysisTemplates"].([]any)[0].(map[string]any)
		if wantCluster := o.Project == ""; (ref["kind"] == "ClusterAnalysisTemplate") != wantCluster {
			t.Errorf("template reference %v for project %q", ref, o.Project)
		}
	}
	// The schema check can fail: a misspelt field is pruned.
	bad := map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{"requestedFreight": []any{}, "verification": map[string]any{"analysisTemplate": []any{}}}}
	probe := &testing.T{}
	schema.check(probe, "probe", bad)
	if !probe.Failed() {
		t.Error("the Stage schema check accepted a misspelt field")
	}
}

// The values, rendered with the vendored argo-helm argo-rollouts chart by Helm's library (the steps of
// helm template), yield an argo-rollouts-config that the Rollouts controller's own config code
// (utils/config.InitializeConfig, which also runs ValidateConfig's name check) accepts, with the plugin
// at the generated location and checksum.
func TestKargoValuesInArgoRolloutsChart(t *testing.T) {
	for _, o := range kargoSets {
		files := kargoFiles(t, o)
		cm, controller := renderRolloutsChart(t, files[generator.KargoValuesFile])
		if o.PluginImage != "" {
			checkPluginInitContainer(t, o, controller)
		}
		if cm == nil {
			t.Fatalf("the chart rendered no %s", defaults.DefaultRolloutsConfigMapName)
		}
		t.Setenv("POD_NAMESPACE", cm.Namespace)
		cfg, err := rolloutsconfig.InitializeConfig(fake.NewSimpleClientset(cm), defaults.DefaultRolloutsConfigMapName)
		if err != nil {
			t.Fatalf("the Rollouts controller rejects the rendered config: %v", err)
		}
		p := cfg.GetPlugin(rolloutplugin.Name, plugintypes.PluginTypeMetricProvider)
		if p == nil {
			t.Fatalf("no metric provider plugin %s in %v", rolloutplugin.Name, cfg.GetAllPlugins())
		}
		if p.Location != o.PluginLocation || p.Sha256 != o.PluginSHA256 || len(cfg.GetAllPlugins()) != 1 {
			t.Errorf("plugin %+v, want location %s sha256 %q", *p, o.PluginLocation, o.PluginSHA256)
		}
		rolloutsconfig.UnInitializeConfig()
	}
}

// renderRolloutsChart renders the vendored argo-helm argo-rollouts chart with the values as helm template
// does, and returns the argo-rollouts-config ConfigMap and the controller Deployment it renders.
func renderRolloutsChart(t *testing.T, values []byte) (*corev1.ConfigMap, *appsv1.Deployment) {
	t.Helper()
	var cm *corev1.ConfigMap
	var controller *appsv1.Deployment
	for _, m := range formats.Render(t, upstream.Vendored(t, "argo-helm/charts/argo-rollouts"), values, "argo-rollouts", "argo-rollouts") {
		var obj corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(m.Doc), &obj); err == nil && obj.Kind == "ConfigMap" && obj.Name == defaults.DefaultRolloutsConfigMapName {
			cm = &obj
		}
		if strings.Contains(m.Doc, "kind: Deployment") {
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict([]byte(m.Doc), &d); err != nil {
				t.Fatalf("%s: %v", m.Template, err)
			}
			controller = &d
		}
	}
	return cm, controller
}

// TestKargoPluginUpgradeRestartsController: an upgraded plugin is a new sha256 in the values, and the
// chart's controller Deployment then carries another checksum/cm annotation on its pod template, so
// helm upgrade rolls the controller, which reads and downloads its plugins only at start
// (controller/controller.go, docs/install.md). The same values render the same annotation.
func TestKargoPluginUpgradeRestartsController(t *testing.T) {
	annotation := func(sha string) string {
		o := kargoSets[0]
		o.PluginSHA256 = sha
		_, d := renderRolloutsChart(t, kargoFiles(t, o)[generator.KargoValuesFile])
		if d == nil {
			t.Fatal("the chart rendered no controller Deployment")
		}
		v := d.Spec.Template.Annotations["checksum/cm"]
		if v == "" {
			t.Fatalf("no checksum/cm on the controller's pod template: %v", d.Spec.Template.Annotations)
		}
		return v
	}
	v1, again, v2 := annotation(strings.Repeat("ab", 32)), annotation(strings.Repeat("ab", 32)), annotation(strings.Repeat("cd", 32))
	if v1 != again {
		t.Errorf("the same values render checksum/cm %s and %s", v1, again)
	}
	if v1 == v2 {
		t.Errorf("a new plugin sha256 leaves the controller's pod template as it was (checksum/cm %s): helm upgrade would not restart it", v1)
	}
}

// checkPluginInitContainer: in the controller Deployment the chart rendered, an init container of the
// plugin image copies the binary to the file:// location, into an emptyDir that the controller container
// mounts at the location's folder, so the file is where the controller's plugin downloader reads it.
func checkPluginInitContainer(t *testing.T, o generator.KargoOptions, d *appsv1.Deployment) {
	t.Helper()
	if d == nil {
		t.Fatal("the chart rendered no controller Deployment")
	}
	file := strings.TrimPrefix(o.PluginLocation, "file://")
	spec := d.Spec.Template.Spec
	mounted := func(c corev1.Container) bool {
		for _, m := range c.VolumeMounts {
			if m.Name == generator.KargoPluginVolume && m.MountPath == path.Dir(file) {
				return true
			}
		}
		return false
	}
	var copied bool
	for _, c := range spec.InitContainers {
		if c.Image == o.PluginImage && strings.Join(c.Command, " ") == generator.PluginImageBinary+" --copy-to "+file && mounted(c) {
			copied = true
		}
	}
	var volume bool
	for _, v := range spec.Volumes {
		volume = volume || (v.Name == generator.KargoPluginVolume && v.EmptyDir != nil)
	}
	if !copied || !volume || len(spec.Containers) != 1 || !mounted(spec.Containers[0]) {
		t.Errorf("controller pod spec: init containers %+v, volumes %+v, controller mounts %+v", spec.InitContainers, spec.Volumes, spec.Containers[0].VolumeMounts)
	}
}

// The RBAC decodes strictly into the Kubernetes types and grants only reads of the three kinds.
func TestKargoRBAC(t *testing.T) {
	for _, o := range kargoSets {
		files := kargoFiles(t, o)
		var roles int
		for _, doc := range yamlDocs(t, files[generator.KargoRBACFile]) {
			raw, _ := json.Marshal(doc)
			switch doc["kind"] {
			case "Role":
				roles++
				var r rbacv1.Role
				strictJSON(t, raw, &r)
				for _, rule := range r.Rules {
					for _, v := range rule.Verbs {
						if v != "get" && v != "list" && v != "watch" {
							t.Errorf("Role grants %s", v)
						}
					}
					// Reads of the three kinds only; that each grant is needed and enough is measured against the
					// real API server's RBAC (test/rollouts/reliability TestReliability, least privilege).
					for _, res := range rule.Resources {
						if strings.Join(rule.APIGroups, ",") != "argoproj.io" || (res != "rollouts" && res != "analysisruns" && res != "experiments") {
							t.Errorf("Role rule %+v", rule)
						}
					}
				}
			case "RoleBinding":
				var b rbacv1.RoleBinding
				strictJSON(t, raw, &b)
				if b.RoleRef.Name != generator.KargoReaderRole || len(b.Subjects) != 1 {
					t.Errorf("RoleBinding %+v", b)
				}
			case "ServiceAccount":
				var sa corev1.ServiceAccount
				strictJSON(t, raw, &sa)
			case "Secret":
				var s corev1.Secret
				strictJSON(t, raw, &s)
				if s.Type != corev1.SecretTypeServiceAccountToken || len(s.Data) > 0 {
					t.Errorf("Secret %+v", s)
				}
			default:
				t.Errorf("unexpected %v", doc["kind"])
			}
		}
		if roles != 1 {
			t.Errorf("%d Roles", roles)
		}
	}
}
