package verify_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/analysis-health/analysis-health/verify"
)

// callerChild is set in the environment of the test binary TestFailuresPointAtTheCaller starts.
const callerChild = "VERIFY_CALLER_CHILD"

// TestFailuresPointAtTheCaller: a failing verify.Test reports the file and line of the user's call to
// verify.Test, for a failed case, a lint finding, a fuzz finding (all in subtests) and a tree it cannot
// run (on the test itself), not a line of package verify. It runs TestVerifyCallerChild in a child test
// binary, whose failures are the point, and reads its output.
func TestFailuresPointAtTheCaller(t *testing.T) {
	if os.Getenv(callerChild) != "" {
		t.Skip("the child runs TestVerifyCallerChild only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVerifyCallerChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), callerChild+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed; it should fail:\n%s", out)
	}
	calls := map[string]string{} // case -> "file:line" of its call to verify.Test
	for _, m := range regexp.MustCompile(`(?m)^CALL (\S+) (\S+)$`).FindAllStringSubmatch(string(out), -1) {
		calls[m[1]] = m[2]
	}
	for _, name := range []string{"case", "lint", "fuzz", "nothing"} {
		call := calls[name]
		if call == "" {
			t.Fatalf("the child did not run %s:\n%s", name, out)
		}
		// testing prints "    file:line: message", indented under the (sub)test that failed.
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(call) + `: `).MatchString(section(string(out), name)) {
			t.Errorf("%s: no failure reported at %s:\n%s", name, call, section(string(out), name))
		}
	}
	if m := regexp.MustCompile(`(?m)^\s+(gotest|verify|fuzz|lint|actions|tree)\.go:\d+: .*$`).FindString(string(out)); m != "" {
		t.Errorf("a failure points into package verify: %s", strings.TrimSpace(m))
	}
}

// section is the child's output from its "CALL name" line to the next CALL line.
func section(out, name string) string {
	_, rest, ok := strings.Cut(out, "CALL "+name+" ")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, "\nCALL ")
	return rest
}

// TestVerifyCallerChild fails on purpose, in the child test binary only.
func TestVerifyCallerChild(t *testing.T) {
	if os.Getenv(callerChild) == "" {
		t.Skip("run by TestFailuresPointAtTheCaller in a child test binary")
	}
	wrong := fstest.MapFS{
		"example.com/W/health.lua":            {Data: []byte(`return {status = "Healthy"}`)},
		"example.com/W/health_test.yaml":      {Data: []byte("tests:\n- inputPath: testdata/w.yaml\n  healthStatus: {status: Degraded}\n")},
		"example.com/W/testdata/w.yaml":       {Data: []byte("apiVersion: example.com/v1\nkind: W\nmetadata: {name: w}\n")},
		"example.com/W/actions/discovery.lua": {Data: []byte(`return {}`)},
	}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		opts verify.Options
	}{
		{"case", wrong, verify.Options{SkipLint: true}},
		{"lint", nil, verify.Options{}},
		{"fuzz", nil, verify.Options{SkipLint: true, Fuzz: 20, Seed: 1}},
		{"nothing", fstest.MapFS{"README": {Data: []byte("no suites")}}, verify.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fsys = os.DirFS("testdata/buggy")
			if tc.fsys != nil {
				fsys = tc.fsys
			}
			_, file, line, _ := runtime.Caller(0)
			fmt.Printf("CALL %s %s:%d\n", tc.name, file[strings.LastIndex(file, "/")+1:], line+2)
			verify.Test(t, fsys, tc.opts)
		})
	}
}
