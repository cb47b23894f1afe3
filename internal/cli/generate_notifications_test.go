package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
)

// The folder holds exactly what the generator renders for the flags; the flags of other formats are
// refused rather than dropped, since a user passing --kinds would expect the trigger to follow it.
func TestGenerateNotifications(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		opts  generator.NotificationsOptions
	}{
		{nil, generator.NotificationsOptions{Inconclusive: generator.InconclusiveSuspended}},
		{[]string{"--inconclusive", "degraded", "--namespace", "gitops"},
			generator.NotificationsOptions{Inconclusive: generator.InconclusiveDegraded, Namespace: "gitops"}},
	} {
		dir := filepath.Join(t.TempDir(), "n")
		code, stdout, stderr := run(append([]string{"generate", "--format", "notifications", "--out", dir}, tc.flags...)...)
		if code != 0 || stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", tc.flags, code, stdout, stderr)
		}
		tc.opts.Version = cli.Version
		want, err := generator.GenerateNotifications(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		wantTree := []string{"."}
		for _, f := range want {
			wantTree = append(wantTree, f.Path)
		}
		if got := tree(t, dir); strings.Join(got, " ") != strings.Join(wantTree, " ") {
			t.Errorf("%v: wrote %v, want %v", tc.flags, got, wantTree)
		}
		for _, f := range want {
			raw, err := os.ReadFile(filepath.Join(dir, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != string(f.Data) {
				t.Errorf("%v: %s differs from the generator's", tc.flags, f.Path)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--out DIR"},
		{[]string{"--kinds", "Rollout"}, "--kinds only applies to"},
		{[]string{"--actions=false"}, "--actions only applies to"},
		{[]string{"--argocd-version", "v2.14"}, "--argocd-version only applies to"},
		{[]string{"--project", "shop"}, "--project only applies to --format kargo"},
		{[]string{"--namespace", "Argo_CD"}, "not a valid Kubernetes namespace"},
	} {
		args := append([]string{"generate", "--format", "notifications"}, tc.args...)
		if tc.args != nil {
			args = append(args, "--out", filepath.Join(t.TempDir(), "n"))
		}
		code, stdout, stderr := run(args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d %q %q, want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
