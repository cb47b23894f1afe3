package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgoCDCMPatch: --argocd-cm reads the argocd-cm ConfigMap and the merge patch `generate --format
// patch` writes alike (the patch README has kubectl users write), for health and scripts; anything else
// is an error naming the file and saying what --argocd-cm reads.
func TestArgoCDCMPatch(t *testing.T) {
	dir := t.TempDir()
	cm, patch := filepath.Join(dir, "argocd-cm.yaml"), filepath.Join(dir, "patch.yaml")
	for _, g := range [][]string{{"--format", "argocd-cm", "--out", cm}, {"--format", "patch", "--out", patch}} {
		if code, _, stderr := run(t, "", append([]string{"generate"}, g...)...); code != 0 {
			t.Fatalf("generate %v: %d %s", g, code, stderr)
		}
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	custom := write("custom-patch.yaml", "data:\n  resource.customizations.health.argoproj.io_AnalysisRun: |\n    return {status = \"Degraded\", message = \"custom \" .. obj.metadata.name}\n")
	customJSON := write("custom-patch.json", `{"data": {"resource.customizations.health.argoproj.io_AnalysisRun": "return {status = \"Suspended\", message = \"json\"}"}}`)
	remove := filepath.Join(dir, "remove.yaml")
	if code, _, stderr := run(t, "", "generate", "--format", "patch", "--remove", "--out", remove); code != 0 {
		t.Fatalf("generate --remove: %d %s", code, stderr)
	}
	expected := "--argocd-cm reads the argocd-cm ConfigMap (apiVersion v1, kind ConfigMap, name argocd-cm) or the merge patch `generate --format patch` writes"

	const objects = "testdata/list.yaml"
	_, withCM, _ := run(t, "", "health", "-f", objects, "--argocd-cm", cm, "-o", "json")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		wantOut string // substring of stdout
		wantErr string // substring of stderr
	}{
		{"the ConfigMap", []string{"health", "-f", objects, "--argocd-cm", cm, "-o", "json"}, 0, `"script": "argocd-cm"`, ""},
		{"the generated patch", []string{"health", "-f", objects, "--argocd-cm", patch, "-o", "json"}, 0, `"script": "argocd-cm"`, ""},
		{"a patch's own script", []string{"health", "-f", objects, "--argocd-cm", custom}, 0, "custom run-1", ""},
		{"a JSON patch file", []string{"health", "-f", objects, "--argocd-cm", customJSON}, 0, "Suspended", ""},
		{"scripts reads the patch", []string{"scripts", "--argocd-cm", patch}, 0, "argocd-cm argoproj.io/Rollout", ""},
		{"scripts reads the ConfigMap", []string{"scripts", "--argocd-cm", cm}, 0, "argocd-cm argoproj.io/Rollout", ""},
		{"neither object nor patch", []string{"health", "-f", objects, "--argocd-cm", write("foo.yaml", "foo: bar\n")}, 1, "",
			"foo.yaml: not an argocd-cm: the document has no apiVersion and kind, and no data; " + expected},
		{"a list", []string{"health", "-f", objects, "--argocd-cm", write("list.yaml", "- a\n")}, 1, "",
			"list.yaml: not an argocd-cm: the document is not a map; " + expected},
		{"a patch of something else", []string{"health", "-f", objects, "--argocd-cm", write("spec.yaml", "data: {a: b}\nspec: {}\n")}, 1, "",
			`spec.yaml: not an argocd-cm merge patch: unexpected top-level key "spec"; ` + expected},
		{"data not a map", []string{"health", "-f", objects, "--argocd-cm", write("datalist.yaml", "data: [a]\n")}, 1, "",
			"datalist.yaml: not an argocd-cm merge patch: data is not a map; " + expected},
		{"the uninstall patch", []string{"health", "-f", objects, "--argocd-cm", remove}, 1, "",
			"is null: this merge patch deletes keys (generate --format patch --remove)"},
		{"two objects", []string{"health", "-f", objects, "--argocd-cm", objects}, 1, "",
			"testdata/list.yaml: want exactly one argocd-cm ConfigMap (or the merge patch `generate --format patch` writes), found 2 objects"},
		{"a whole chart render", []string{"health", "-f", objects, "--argocd-cm", write("render.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: argocd-server}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: argocd-server}\n")}, 1, "",
			"render.yaml: want exactly one argocd-cm ConfigMap (or the merge patch `generate --format patch` writes), found 3 objects, among them the ConfigMap argocd-cm " +
				"(" + filepath.Join(dir, "render.yaml") + " (document 2)): pass it alone, e.g. helm template argo-cd argo/argo-cd -f VALUES --show-only templates/argocd-configs/argocd-cm.yaml"},
		{"a Deployment", []string{"health", "-f", objects, "--argocd-cm", write("dep.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")}, 1, "",
			"dep.yaml (document 1): not an argocd-cm: want apiVersion v1, kind ConfigMap, got apps/v1 Deployment; " + expected},
		{"two documents", []string{"health", "-f", objects, "--argocd-cm", write("two.yaml", "data: {}\n---\ndata: {}\n")}, 1, "",
			"two.yaml (document 1): not a Kubernetes object"},
		{"empty", []string{"health", "-f", objects, "--argocd-cm", write("empty.yaml", "")}, 1, "",
			"empty.yaml: want exactly one argocd-cm ConfigMap (or the merge patch `generate --format patch` writes), found 0 objects"},
		// Given twice, a single-file flag would keep the last file silently: a usage error instead.
		{"health: --argocd-cm twice", []string{"health", "-f", objects, "--argocd-cm", cm, "--argocd-cm", patch}, 2, "",
			`invalid argument "` + patch + `" for "--argocd-cm" flag: given twice (first "` + cm + `"): it takes one argocd-cm`},
		{"scripts: --argocd-cm twice", []string{"scripts", "--argocd-cm", cm, "--argocd-cm", patch}, 2, "", `for "--argocd-cm" flag: given twice`},
		{"scripts: neither", []string{"scripts", "--argocd-cm", filepath.Join(dir, "foo.yaml")}, 1, "", "foo.yaml: not an argocd-cm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.wantOut) || (tc.wantErr != "" && !strings.Contains(errOut, tc.wantErr)) {
				t.Errorf("stdout %q (want %q)\nstderr %q (want %q)", out, tc.wantOut, errOut, tc.wantErr)
			}
			if tc.code != 0 && out != "" {
				t.Errorf("stdout should be empty on error, got:\n%s", out)
			}
		})
	}
	// The generated patch and the generated ConfigMap are the same scripts: the same rows.
	if _, withPatch, _ := run(t, "", "health", "-f", objects, "--argocd-cm", patch, "-o", "json"); withPatch != withCM || withCM == "" {
		t.Errorf("the patch and the ConfigMap disagree:\n%s\n%s", withPatch, withCM)
	}
}
