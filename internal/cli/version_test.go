package cli

import (
	"strings"
	"testing"
)

// TestVersionVerb: `version` prints exactly what --version prints; arguments are a usage error.
func TestVersionVerb(t *testing.T) {
	_, flag, _ := run(t, "", "--version")
	if flag == "" {
		t.Fatal("--version printed nothing")
	}
	for _, tc := range []struct {
		args    []string
		code    int
		out     string
		errPart string
	}{
		{[]string{"version"}, 0, flag, ""},
		{[]string{"version", "--help"}, 0, "", ""},
		{[]string{"version", "extra"}, 2, "", `version takes no arguments, got ["extra"]`},
	} {
		code, out, errOut := run(t, "", tc.args...)
		if code != tc.code || (tc.out != "" && out != tc.out) || (tc.errPart != "" && !strings.Contains(errOut, tc.errPart)) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q", tc.args, code, out, errOut, tc.code, tc.out, tc.errPart)
		}
	}
}
