package cli

import (
	"strings"
	"testing"
)

// What health prints by profile for an object being deleted and for a script that returns nil; the
// values themselves are proven in each release's code (test/argocd-v2.14/, v3, v36).
func TestHealthByProfile(t *testing.T) {
	const deleting = `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r", "namespace": "ns",
		"deletionTimestamp": "2026-11-30T10:00:00Z", "finalizers": ["example.com/keep"]}, "status": {"phase": "Failed"}}`
	const live = `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r"}, "status": {"phase": "Bogus"}}`
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"default is v3.6: finalizers named", deleting, nil, "Pending deletion; blocked by finalizers: example.com/keep"},
		{"v3 is v3.6", deleting, []string{"--argocd-version", "v3"}, "Pending deletion; blocked by finalizers: example.com/keep"},
		{"v3.2 short-circuits", deleting, []string{"--argocd-version", "v3.2"}, "Progressing  Pending deletion\n"},
		{"v2 short-circuits", deleting, []string{"--argocd-version", "v2"}, "Progressing  Pending deletion\n"},
		{"a live object is evaluated", live, nil, "Analysis run phase Bogus is not recognised"},
		{"nil is no health under v3.6", live, []string{"--argocd-cm", "testdata/argocd-cm-nil.yaml"}, "-       no health: the script returned nil"},
		{"nil is an empty status under v3.2", live, []string{"--argocd-cm", "testdata/argocd-cm-nil.yaml", "--argocd-version", "v3.2"}, "r     -       \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.stdin, append([]string{"health", "-f", "-"}, tc.args...)...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, stdout %q (want it to contain %q), stderr %q", code, out, tc.want, errOut)
			}
		})
	}
}
