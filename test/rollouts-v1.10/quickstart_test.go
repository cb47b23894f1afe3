package v110

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

const kargoDoc = "../../docs/kargo.md"

// block is the fenced block after the marker `<!-- quickstart: NAME -->` in docs/kargo.md, unindented
// as the user copies it.
func block(t *testing.T, doc, name string) string {
	t.Helper()
	marker := "<!-- quickstart: " + name + " -->"
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("%s: no %s", kargoDoc, marker)
	}
	m := regexp.MustCompile("(?s)\\n( *)```[a-z]*\\n(.*?)\\n *```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatalf("%s: no fenced block after %s", kargoDoc, marker)
	}
	var lines []string
	for _, l := range strings.Split(m[2], "\n") {
		lines = append(lines, strings.TrimPrefix(l, m[1]))
	}
	return strings.Join(lines, "\n") + "\n"
}

// commands are the block's shell commands, continuation lines joined, split into words (the quick start
// quotes nothing).
func commands(sh string) [][]string {
	var out [][]string
	for _, c := range strings.Split(strings.ReplaceAll(sh, "\\\n", " "), "\n") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// staticELF is the header of a statically linked Linux executable (one PT_LOAD, no PT_INTERP): the build
// step 1 makes, as far as `generate --plugin-file` looks.
func staticELF() []byte {
	le := binary.LittleEndian
	b := make([]byte, 64+56)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(b[16:], 2)
	le.PutUint16(b[18:], 62)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], 64)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	le.PutUint16(b[58:], 64)
	le.PutUint32(b[64:], 1)
	return b
}

// TestKargoQuickStart walks docs/kargo.md's quick start as a user pastes it: step 3's generate command as
// written, step 4's kubectl objects and step 5's whole Stage, applied to the real API server (the program
// of test/kube-apiserver-v1.34, as the recorder starts it) with Kargo v1.11.2's nine CRDs and Argo
// Rollouts' installed. The API server's strict field validation refuses an unknown or misplaced field,
// which the schema alone would prune without a word.
func TestKargoQuickStart(t *testing.T) {
	raw, err := os.ReadFile(kargoDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)

	// Step 3, run as written in a folder holding step 1's build, after the release's values are saved as
	// helm get values prints them: here a release with a metric plugin of its own, which the generated
	// values must keep (test/formats TestKargoQuickStartKeepsPlatformValues renders the chart with them).
	work := t.TempDir()
	gen := commands(block(t, doc, "generate"))
	var releaseValues string
	for len(gen) > 1 && strings.HasPrefix(strings.Join(gen[0], " "), "helm get values argo-rollouts -n argo-rollouts -o yaml > ") && len(gen[0]) == 10 {
		releaseValues = gen[0][9]
		platform := "controller:\n  metricProviderPlugins:\n  - name: argoproj-labs/sample-prometheus\n    location: https://plugins.example.internal/p\n"
		if err := os.WriteFile(filepath.Join(work, releaseValues), []byte(platform), 0o644); err != nil {
			t.Fatal(err)
		}
		gen = gen[1:]
	}
	if len(gen) != 1 || gen[0][0] != "analysis-health" || releaseValues == "" || !slices.Contains(gen[0], releaseValues) {
		t.Fatalf("step 3 is not helm get values of the release into a file, then one analysis-health command reading it: %v", gen)
	}
	args := gen[0][1:]
	for i, a := range args {
		switch {
		case a == "--plugin-file" && i+1 < len(args):
			p := filepath.Join(work, args[i+1])
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, staticELF(), 0o755); err != nil {
				t.Fatal(err)
			}
			args[i+1] = p
		}
	}
	run := exec.Command(buildCLI(t), args...)
	run.Dir = work
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("step 3: %v\n%s", err, out)
	}
	read := func(rel string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(work, rel))
		if err != nil {
			t.Fatalf("a file the quick start names: %v", err)
		}
		return b
	}

	// Step 4's Helm command layers the generated values after the release's, as the values file's header says.
	install := commands(block(t, doc, "install"))
	values := string(read("kargo/" + generator.KargoValuesFile))
	for _, c := range install {
		line := strings.Join(c, " ")
		if c[0] == "helm" && (!strings.Contains(line, "-f "+releaseValues+" -f kargo/"+generator.KargoValuesFile) ||
			!strings.Contains(values, "-f "+releaseValues+" -f "+generator.KargoValuesFile)) {
			t.Errorf("the Helm command and the values header disagree on keeping the release's values:\n%s\n%s", line, values)
		}
	}
	if !strings.Contains(values, "argoproj-labs/sample-prometheus") {
		t.Errorf("%s dropped the release's metric plugin:\n%s", generator.KargoValuesFile, values)
	}

	c, err := cluster.StartCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	installKargoCRDs(t, c)
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	ctx := context.Background()
	resource := func(u *unstructured.Unstructured) dynamic.ResourceInterface {
		t.Helper()
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		if m.Scope.Name() == "namespace" {
			return dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		return dyn.Resource(m.Resource)
	}
	create := func(what string, u *unstructured.Unstructured) {
		t.Helper()
		if _, err := resource(u).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Errorf("%s: %s %s/%s refused: %v", what, u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	// What Kargo and the user have made before: the Project (its namespace), the Rollout's namespace.
	for _, ns := range []string{"kargo-shop", "shop", "argo-rollouts"} {
		create("set-up", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}})
	}
	create("set-up", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Project", "metadata": map[string]any{"name": "kargo-shop"}}})

	applied := 0
	for _, cmd := range install {
		if cmd[0] != "kubectl" {
			continue
		}
		if len(cmd) < 2 || cmd[1] != "apply" {
			t.Fatalf("step 4: %v is not kubectl apply", cmd)
		}
		ns := ""
		var files []string
		for i := 2; i < len(cmd); i++ {
			switch cmd[i] {
			case "-n", "--namespace":
				i++
				ns = cmd[i]
			case "-f":
				i++
				files = append(files, cmd[i])
			default:
				t.Fatalf("step 4: unexpected %q in %v", cmd[i], cmd)
			}
		}
		for _, f := range files {
			for _, u := range objects(t, read(f)) {
				if u.GetNamespace() == "" && ns != "" {
					u.SetNamespace(ns)
				}
				if u.GetNamespace() == "" && u.GetKind() != "ClusterAnalysisTemplate" {
					u.SetNamespace("default")
				}
				create("step 4 "+f, u)
				applied++
			}
		}
	}
	if applied == 0 {
		t.Fatal("step 4 applied nothing")
	}

	// Step 5: the whole Stage, as the page shows it, and its verification as generated.
	stages := objects(t, []byte(block(t, doc, "stage.yaml")))
	if len(stages) != 1 || stages[0].GetKind() != "Stage" {
		t.Fatalf("step 5 is not one Stage: %v", stages)
	}
	stage := stages[0]
	create("step 5", stage)
	snippet := objects(t, read("kargo/"+generator.KargoStageFile))[0].Object["spec"]
	gotV, _, _ := unstructured.NestedFieldCopy(stage.Object, "spec", "verification")
	if wantV := snippet.(map[string]any)["verification"]; !reflect.DeepEqual(gotV, wantV) {
		t.Errorf("the page's Stage has another verification than %s:\n%v\n%v", generator.KargoStageFile, gotV, wantV)
	}
	vars, _, _ := unstructured.NestedSlice(stage.Object, "spec", "vars")
	for _, ref := range regexp.MustCompile(`vars\.(\w+)`).FindAllStringSubmatch(fmt.Sprint(gotV), -1) {
		found := false
		for _, v := range vars {
			found = found || v.(map[string]any)["name"] == ref[1]
		}
		if !found {
			t.Errorf("the verification reads vars.%s, which the Stage's vars lack", ref[1])
		}
	}

	// The Stage's runs read the Rollout as the plugin's policy lets them: one of another namespace only with
	// the admin's pair in the chart values (docs/security.md), else the verification ends in Error.
	rolloutNS := ""
	vargs, _, _ := unstructured.NestedSlice(stage.Object, "spec", "verification", "args")
	for _, a := range vargs {
		if m := a.(map[string]any); m["name"] == "rollout-namespace" {
			rolloutNS, _ = m["value"].(string)
		}
	}
	for _, v := range vars {
		if m := v.(map[string]any); rolloutNS == "${{ vars."+fmt.Sprint(m["name"])+" }}" {
			rolloutNS, _ = m["value"].(string)
		}
	}
	if rolloutNS == "" {
		t.Fatalf("the page's Stage names no rollout-namespace in its verification: %v", gotV)
	}
	if rolloutNS != stage.GetNamespace() {
		var vals struct {
			Controller struct {
				MetricProviderPlugins []struct {
					Name string   `json:"name"`
					Args []string `json:"args"`
				} `json:"metricProviderPlugins"`
			} `json:"controller"`
		}
		if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
			t.Fatalf("%s: %v", generator.KargoValuesFile, err)
		}
		pair := "--" + generator.KargoAllowNamespacePairFlag + "=" + stage.GetNamespace() + "=" + rolloutNS
		var got []string
		for _, p := range vals.Controller.MetricProviderPlugins {
			got = append(got, p.Args...)
		}
		if !slices.Contains(got, pair) {
			t.Errorf("the Stage's runs in %s read the Rollout in %s, but the plugin's args in %s are %v, without %s: the verification would end in Error",
				stage.GetNamespace(), rolloutNS, generator.KargoValuesFile, got, pair)
		}
	}

	// Or the file applied as it is, a merge patch of a Stage without verification (the page's kubectl
	// patch); pasted under spec.verification it would nest twice.
	bare := stage.DeepCopy()
	bare.SetName("bare")
	unstructured.RemoveNestedField(bare.Object, "spec", "verification")
	create("a Stage without verification", bare)
	patch, err := yaml.YAMLToJSON(read("kargo/" + generator.KargoStageFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "kubectl patch stage prod -n kargo-shop --type merge --patch-file\n   kargo/"+generator.KargoStageFile) {
		t.Errorf("step 5 no longer says how to apply %s as a merge patch", generator.KargoStageFile)
	}
	got, err := resource(bare).Patch(ctx, "bare", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("%s as a merge patch: %v", generator.KargoStageFile, err)
	}
	if v, _, _ := unstructured.NestedFieldCopy(got.Object, "spec", "verification"); !reflect.DeepEqual(v, gotV) {
		t.Errorf("patched verification %v, want %v", v, gotV)
	}

	// The check can fail: the snippet pasted under spec.verification, as the old page said, is refused.
	nested := stage.DeepCopy()
	nested.SetName("nested")
	_ = unstructured.SetNestedField(nested.Object, snippet.(map[string]any), "spec", "verification", "spec")
	if _, err := resource(nested).Create(ctx, nested, metav1.CreateOptions{FieldValidation: "Strict"}); err == nil {
		t.Error("a Stage with spec.verification.spec was accepted: strict validation is not in effect")
	}
}

// buildCLI builds the CLI of this checkout, as `go install` would.
func buildCLI(t *testing.T) string {
	t.Helper()
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "analysis-health")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/analysis-health")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func objects(t *testing.T, raw []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatal(err)
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// installKargoCRDs creates Kargo v1.11.2's CRDs (its chart's resources/crds, vendored) and waits until
// they are Established.
func installKargoCRDs(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	dir := upstream.Vendored(t, "kargo/v1.11.2/charts/kargo/resources/crds")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != 9 {
		t.Fatalf("%s: want Kargo's nine CRDs, found %d (%v)", dir, len(files), err)
	}
	if err := c.InstallCRDs(files...); err != nil {
		t.Fatal(err)
	}
}
