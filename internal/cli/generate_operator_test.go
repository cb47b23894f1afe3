package cli_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
)

// --argocd-name and --namespace reach the operator formats.
func TestGenerateOperatorStdout(t *testing.T) {
	tests := []struct {
		args   []string
		format generator.Format
		opts   generator.Options
	}{
		{[]string{"--format", "operator"}, generator.Operator, generator.Options{}},
		{[]string{"--format", "operator-json6902", "--argocd-name", "openshift-gitops", "--namespace", "openshift-gitops"},
			generator.OperatorJSON6902, generator.Options{ArgoCDName: "openshift-gitops", Namespace: "openshift-gitops"}},
		{[]string{"--format", "operator", "--argocd-name", "gitops.example", "--actions=false"},
			generator.Operator, generator.Options{ArgoCDName: "gitops.example", Actions: new(false)}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := run(append([]string{"generate"}, tc.args...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if want := rendered(t, tc.format, tc.opts)[0].Data; out != string(want) {
				t.Errorf("stdout differs from generator.Generate(%s, %+v)", tc.format, tc.opts)
			}
			name := tc.opts.ArgoCDName
			if name == "" {
				name = generator.DefaultArgoCDName
			}
			if !strings.Contains(out, "kubectl patch argocd "+name+" -n ") {
				t.Errorf("the usage hint does not name the ArgoCD resource %s", name)
			}
		})
	}
}

// A name Kubernetes would refuse is a usage error: exit 2, nothing on stdout.
func TestGenerateOperatorBadName(t *testing.T) {
	for _, name := range []string{"", "Argo", "argo_cd", "-argocd", "argocd-", "a..b", strings.Repeat("a", 254)} {
		for _, format := range []string{"operator", "operator-json6902"} {
			code, out, errOut := run("generate", "--format", format, "--argocd-name", name)
			if code != 2 || out != "" || !strings.Contains(errOut, "argocd-name") && !strings.Contains(errOut, "ArgoCD name") {
				t.Errorf("%s --argocd-name %q: exit %d, stdout %d bytes, stderr %q", format, name, code, len(out), errOut)
			}
		}
	}
}

// --from: the JSON patch computed against the live ArgoCD resource, from a file or standard input; what it
// cannot do right is an error naming the file (exit 1, nothing on stdout), --from with another format a
// usage error.
func TestGenerateOperatorFrom(t *testing.T) {
	const live = "testdata/argocd-operator-live.yaml"
	gitops := strings.NewReplacer("name: argocd\n", "name: openshift-gitops\n", "namespace: argocd\n", "namespace: openshift-gitops\n").Replace(readTestdata(t, live))
	for _, tc := range []struct {
		name    string
		args    []string
		stdin   string
		code    int
		wantOut []string
		wantErr string
	}{
		{name: "health checks without resourceActions", args: []string{"--from", live}, wantOut: []string{
			"--argocd-name argocd --namespace argocd --actions=true",
			" --from " + live + "\n",
			"- op: test\n  path: /metadata/annotations\n  value: null\n- op: add\n  path: /metadata/annotations\n  value:\n    analysis-health/operator-entries: ",
			"- op: add\n  path: /spec/resourceHealthChecks/-\n",
			"- op: test\n  path: /spec/resourceActions\n  value: null\n- op: add\n  path: /spec/resourceActions\n  value:\n    - group: argoproj.io\n",
		}},
		{name: "standard input names the resource", args: []string{"--from", "-"}, stdin: gitops, wantOut: []string{
			"kubectl patch argocd openshift-gitops -n openshift-gitops --type json", "computed against the resource read from standard input",
		}},
		{name: "flags that agree", args: []string{"--from", "-", "--argocd-name", "openshift-gitops"}, stdin: gitops, wantOut: []string{"- op: test\n  path: /metadata/name\n  value: openshift-gitops\n"}},
		{name: "flags that do not", args: []string{"--from", live, "--namespace", "openshift-gitops"}, code: 1,
			wantErr: "Error: " + live + ": the ArgoCD resource is argocd/argocd, but the patch is for openshift-gitops/argocd"},
		{name: "installed already", args: []string{"--from", "-"}, stdin: strings.Replace(readTestdata(t, live), "  resourceVersion:", "  annotations:\n    analysis-health/operator-entries: x\n  resourceVersion:", 1), code: 1,
			wantErr: "Error: -: the annotation analysis-health/operator-entries is set"},
		{name: "not an ArgoCD", args: []string{"--from", "testdata/argocd-cm-custom.yaml"}, code: 1,
			wantErr: "Error: testdata/argocd-cm-custom.yaml: not an ArgoCD resource: want apiVersion argoproj.io/*, kind ArgoCD, got v1 ConfigMap"},
		{name: "missing file", args: []string{"--from", "testdata/nope.yaml"}, code: 1, wantErr: "Error: --from testdata/nope.yaml: no such file or directory"},
		{name: "malformed", args: []string{"--from", "-"}, stdin: "spec: [\n", code: 1, wantErr: "Error: -: "},
		{name: "another format", args: []string{"--from", live}, code: 2, wantErr: "--from only applies to --format operator-json6902"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			format := "operator-json6902"
			if tc.name == "another format" {
				format = "operator"
			}
			var out, errOut bytes.Buffer
			code := cli.Run(append([]string{"generate", "--format", format}, tc.args...), &cli.Options{In: strings.NewReader(tc.stdin), Out: &out, ErrOut: &errOut})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errOut.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if tc.code != 0 && out.Len() > 0 {
				t.Errorf("stdout on error:\n%s", out.String())
			}
			if !strings.Contains(errOut.String(), tc.wantErr) || strings.Contains(errOut.String(), "panic") {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.wantErr)
			}
		})
	}
}

func readTestdata(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
