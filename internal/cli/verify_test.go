package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVerifyBadInput(t *testing.T) {
	for _, tc := range []struct {
		dir, want string
	}{
		{"bad-yaml", "Error: testdata/verify/bad-yaml/g/K/health_test.yaml:4: error converting YAML to JSON: yaml: line 4: did not find expected ',' or ']'\n"},
		{"missing-input", "Error: testdata/verify/missing-input/g/K/health_test.yaml:2: tests[0]: g/K/testdata/missing.yaml: no such file\n"},
		{"syntax", "Error: testdata/verify/syntax/g/K/health.lua:4: <string> at EOF:   syntax error\n"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			code, out, errOut := run(t, "", "verify", "testdata/verify/"+tc.dir, "--fuzz", "--timeout", "30s")
			if code != 1 || out != "" || errOut != tc.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

func TestVerifyLintFuzzBench(t *testing.T) {
	const buggy = "../../verify/testdata/buggy"
	out := filepath.Join(t.TempDir(), "crashers")
	code, stdout, errOut := run(t, "", "verify", buggy, "--fuzz", "--fuzz-out", out, "--timeout", "30s")
	if code != 1 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{
		"LINT " + buggy + "/example.com/Gadget/health.lua:1: global: assignment to global hs: declare it local",
		"LINT " + buggy + "/example.com/Gadget/health.lua:4: stdlib: string.find: no string, math, os or io library without resource.customizations.useOpenLibs for this kind",
		"LINT " + buggy + `/example.com/Gadget/health.lua:7: status: status "Pending" is not one of Argo CD's six`,
		"FUZZ " + buggy + "/example.com/Gadget/health.lua: lua-error: <string>:",
		"FUZZ ", "FUZZ ",
		"3 lint findings",
		"3 fuzz findings in 20 evaluations (seed 1)",
		"1 passed, 0 failed",
	}
	if len(lines) != len(want) {
		t.Fatalf("stdout:\n%s", stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
	files, _ := os.ReadDir(out)
	if len(files) != 3 {
		t.Errorf("--fuzz-out holds %d files, want 3", len(files))
	}
	for _, l := range lines[3:6] {
		if !strings.Contains(l, " -> "+filepath.ToSlash(out)+"/") {
			t.Errorf("finding without its file: %q", l)
		}
	}

	// --lint=false drops the lint lines; a clean tree passes with fuzzing and benchmarks.
	code, stdout, _ = run(t, "", "verify", buggy, "--lint=false")
	if code != 0 || stdout != "1 passed, 0 failed\n" {
		t.Errorf("--lint=false: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "", "verify", "../../verify/testdata/example", "--fuzz=10", "--bench", "--bench-n", "3", "--timeout", "30s")
	if code != 0 || !strings.HasSuffix(stdout, "0 lint findings\n0 fuzz findings in 120 evaluations (seed 1)\n5 passed, 0 failed\n") {
		t.Errorf("clean tree: exit %d\n%s", code, stdout)
	}
	if n := strings.Count(stdout, "BENCH "); n != 3 || !strings.Contains(stdout, "ns/op") || !strings.Contains(stdout, "VM floor") {
		t.Errorf("want 3 BENCH lines:\n%s", stdout)
	}
}

// Our own scripts report nothing under --fuzz --lint, in both profiles.
func TestVerifyBundledFuzzLint(t *testing.T) {
	for _, v := range []string{"v2", "v3"} {
		code, stdout, errOut := run(t, "", "verify", "--fuzz=3", "--argocd-version", v, "--timeout", "30s")
		if code != 0 || !strings.Contains(stdout, "0 lint findings\n0 fuzz findings in ") || strings.Contains(stdout, "FUZZ") || errOut != "" {
			t.Errorf("%s: exit %d\n%s%s", v, code, stdout, errOut)
		}
	}
}

func TestVerifyFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"verify", "--fuzz-out", "x"},
		{"verify", "--fuzz=-1"},
		{"verify", "--fuzz", "--timeout", "0s"},
	} {
		code, out, errOut := run(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--") {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errOut)
		}
	}
}

// "--fuzz 200" reads 200 as a DIR (a bare --fuzz has a default); the error says how to write the count.
func TestVerifyFuzzCountAfterSpace(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "--fuzz", "200"}, 2, "Error: 200: no such directory; to give --fuzz a count, write --fuzz=200 (after a space, 200 is read as a DIR to verify)\n"},
		{[]string{"verify", "testdata/verify/syntax", "--fuzz", "7"}, 2, "write --fuzz=7"},
		// A missing folder that is not a number keeps the plain error.
		{[]string{"verify", "nope"}, 1, "Error: nope: no such file or directory\n"},
	} {
		code, out, errOut := run(t, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

// TestVerifyFuzzProgress: on a terminal, verify --fuzz draws its progress on one line of stderr and
// erases it when done; anywhere else (a pipe, a file, a CI log) it prints none.
func TestVerifyFuzzProgress(t *testing.T) {
	const tree = "../../verify/testdata/buggy"
	for _, terminal := range []bool{true, false} {
		saved, savedEvery := isTerminal, progressEvery
		isTerminal, progressEvery = func(io.Writer) bool { return terminal }, time.Microsecond
		_, stdout, errOut := run(t, "", "verify", tree, "--fuzz=200", "--timeout", "30s")
		isTerminal, progressEvery = saved, savedEvery
		if !strings.Contains(stdout, "fuzz findings in ") {
			t.Fatalf("terminal %v: no fuzz summary:\n%s", terminal, stdout)
		}
		if !terminal {
			if errOut != "" {
				t.Errorf("not a terminal: stderr %q, want none", errOut)
			}
			continue
		}
		if !strings.HasSuffix(errOut, "\r\x1b[K") || !strings.HasPrefix(errOut, "\rfuzzing "+tree+": ") || !strings.Contains(errOut, " mutations\x1b[K") {
			t.Errorf("terminal: stderr %q, want progress lines ending erased", errOut)
		}
	}
}
