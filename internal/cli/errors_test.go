package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errReader is a standard input that cannot be read (closed).
type errReader struct{}

func (errReader) Read([]byte) (int, error) {
	return 0, &os.PathError{Op: "read", Path: "/dev/stdin", Err: os.ErrClosed}
}

// Errors name the flag or the file and what to do, never a Go type or a bare system call.
func TestErrorsNameFlagOrFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	folder := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	rollout, err := os.ReadFile("../../testdata/charts/canary-checkout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "chart.yaml"), rollout, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(folder, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	values := write("values.yaml", "configs:\n  cm:\n    resource.customizations: \"\"\nserver:\n  replicas: 2\n")
	spec := write("spec.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec: \"x\"\n")

	for _, tc := range []struct {
		name  string
		args  []string
		stdin bool // a standard input that cannot be read
		code  int
		want  []string
		never []string
		out   string // in stdout: the rest was evaluated
	}{
		{name: "missing --argocd-cm file", args: []string{"scripts", "--argocd-cm", filepath.Join(dir, "nope.yaml")}, code: 1,
			want: []string{"--argocd-cm " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"}, never: []string{"stat "}},
		{name: "dangling symlink in a folder", args: []string{"health", "-f", folder}, code: 1,
			want: []string{filepath.Join(folder, "dangling.yaml") + ": cannot read the file"}, out: "checkout"},
		{name: "unreadable standard input", args: []string{"scripts", "--argocd-cm", "-"}, stdin: true, code: 1,
			want: []string{"-: cannot read standard input"}},
		{name: "inspect spec of the wrong type", args: []string{"inspect", "-f", spec}, code: 1,
			want: []string{"Rollout r: spec: want an object, got a string"}, never: []string{"Go value", "inspect.rolloutSpec"}},
		{name: "Helm values as --argocd-cm", args: []string{"scripts", "--argocd-cm", values}, code: 1,
			want: []string{"Helm values of the argo-cd chart", "helm template", "kubectl get configmap argocd-cm"}},
		{name: "health FILE without -f", args: []string{"health", spec}, code: 2,
			want: []string{"did you mean -f " + spec + "?"}},
		{name: "inspect FILE without -f", args: []string{"inspect", spec}, code: 2,
			want: []string{"did you mean -f " + spec + "?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var out, errOut string
			if tc.stdin {
				var o, e strings.Builder
				code = Run(tc.args, &Options{In: errReader{}, Out: &o, ErrOut: &e})
				out, errOut = o.String(), e.String()
			} else {
				code, out, errOut = run(t, "", tc.args...)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, n := range append(tc.never, "Go value of type") {
				if strings.Contains(errOut, n) {
					t.Errorf("stderr has %q:\n%s", n, errOut)
				}
			}
			if tc.out != "" && !strings.Contains(out, tc.out) {
				t.Errorf("the rest was not evaluated: stdout %q", out)
			}
		})
	}
}
