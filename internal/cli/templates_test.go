package cli_test

import (
	"strings"
	"testing"
)

// TestTemplateGrammar: inspect and hooks read a template on the command line one way
// (inspect.TemplateGrammar), including the KIND/NAME form inspect itself prints, and refuse anything else.
func TestTemplateGrammar(t *testing.T) {
	const in = "testdata/rollout-cluster-template.yaml"
	for _, tc := range []struct {
		known   string
		missing bool
	}{
		{"ClusterAnalysisTemplate/platform-checks", false}, // as inspect prints it
		{"platform-checks", false},
		{"AnalysisTemplate/platform-checks", true}, // another kind
		{"ClusterAnalysisTemplate/other", true},
	} {
		code, out, stderr := run("inspect", "-f", in, "--known-template", tc.known)
		if code != 0 || strings.Contains(out, "(missing)") != tc.missing {
			t.Errorf("--known-template %s: exit %d, missing %v, want %v\n%s%s", tc.known, code, !tc.missing, tc.missing, out, stderr)
		}
	}
	for _, bad := range []string{"bogus/x/y", "Bogus/x", "ClusterAnalysisTemplate/shop/x", "shop/", "UPPER"} {
		for _, args := range [][]string{
			{"inspect", "-f", in, "--known-template", bad},
			{"hooks", "-f", in, "--known-template", bad},
			{"hooks", "-f", in, "--mode", "analysisrun", "--template", bad},
		} {
			code, out, stderr := run(args...)
			if code != 2 || out != "" || !strings.Contains(stderr, "[AnalysisTemplate/|ClusterAnalysisTemplate/][NAMESPACE/]NAME") {
				t.Errorf("%v: exit %d %q %q, want a usage error with the grammar", args, code, out, stderr)
			}
		}
	}
}
