package cli_test

import (
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
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
