package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 57 #5: a pull request's argocd-cm evaluated in CI printed DB_PASSWORD from the runner's .env: its
// health script dofile'd it. Without --open-libs an argocd-cm's script reads no file: dofile, loadfile and
// require of a file are one error line naming the function and the flag, exit 1, nothing on stdout, no
// byte of the file anywhere; a FIFO does not hold the command. With --open-libs it runs as in Argo CD's
// controller, which opens the base library's file functions on every script.
func TestHealthScriptReadsNoFiles(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{
		".env":         "DB_PASSWORD=\"hunter2-from-env\"\n", // a .env is often valid Lua
		"helper.lua":   `return {status = "Degraded", message = "DB_PASSWORD=hunter2-from-module"}`,
		"rollout.yaml": fmt.Sprintf(rolloutYAML, "checkout"),
	})
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, script, fn string
	}{
		{"dofile .env", fmt.Sprintf("return dofile(%q)", filepath.Join(dir, ".env")), "dofile"},
		{"dofile .env, then its variable", fmt.Sprintf("dofile(%q)\nreturn {status = \"Healthy\", message = \"DB_PASSWORD=\" .. DB_PASSWORD}", filepath.Join(dir, ".env")), "dofile"},
		{"loadfile .env", fmt.Sprintf("return loadfile(%q)()", filepath.Join(dir, ".env")), "loadfile"},
		{"loadfile FIFO", fmt.Sprintf("return loadfile(%q)()", fifo), "loadfile"},
		{"require a local module", fmt.Sprintf("package.path = %q\nreturn require(\"helper\")", dir+"/?.lua"), "require"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFiles(t, dir, map[string]string{"cm.yaml": argocdCM(map[string]string{"resource.customizations.health.argoproj.io_Rollout": tc.script})})
			type result struct {
				code     int
				out, err string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := run(t, "", "health", "-f", filepath.Join(dir, "rollout.yaml"), "--argocd-cm", filepath.Join(dir, "cm.yaml"))
				done <- result{code, out, errOut}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("health still runs 10 s later: the script opened the FIFO")
			}
			if strings.Contains(r.out+r.err, "hunter2") {
				t.Errorf("a file's content was printed: stdout %q, stderr %q", r.out, r.err)
			}
			if r.code != 1 || r.out != "" || !strings.Contains(r.err, tc.fn) || !strings.Contains(r.err, "--open-libs") || strings.Count(r.err, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no output and one line naming %s and --open-libs", r.code, r.out, r.err, tc.fn)
			}
		})
	}
	t.Run("with --open-libs", func(t *testing.T) {
		writeFiles(t, dir, map[string]string{"cm.yaml": argocdCM(map[string]string{"resource.customizations.health.argoproj.io_Rollout": fmt.Sprintf("return dofile(%q)", filepath.Join(dir, "helper.lua"))})})
		code, out, errOut := run(t, "", "health", "-f", filepath.Join(dir, "rollout.yaml"), "--argocd-cm", filepath.Join(dir, "cm.yaml"), "--open-libs")
		if code != 0 || !strings.Contains(out, "Degraded") || !strings.Contains(out, "hunter2-from-module") {
			t.Errorf("exit %d, stdout %q, stderr %q; want the module's health, as Argo CD's controller computes it", code, out, errOut)
		}
	})
}

// verify runs a pull request's resource_customizations tree: its scripts read no file either.
func TestVerifyScriptReadsNoFiles(t *testing.T) {
	dir := writeFiles(t, t.TempDir(), map[string]string{".env": "DB_PASSWORD=hunter2-from-env\n"})
	tree := writeFiles(t, filepath.Join(dir, "tree"), map[string]string{
		"argoproj.io/Rollout/health.lua":       fmt.Sprintf("return dofile(%q)", filepath.Join(dir, ".env")),
		"argoproj.io/Rollout/health_test.yaml": "tests:\n- healthStatus:\n    status: Healthy\n  inputPath: testdata/r.yaml\n",
		"argoproj.io/Rollout/testdata/r.yaml":  fmt.Sprintf(rolloutYAML, "checkout"),
	})
	code, out, errOut := run(t, "", "verify", tree)
	if code == 0 || strings.Contains(out+errOut, "hunter2") || !strings.Contains(out+errOut, "dofile") || !strings.Contains(out+errOut, "--open-libs") {
		t.Errorf("exit %d, stdout %q, stderr %q; want a failure naming dofile and --open-libs, without the file's content", code, out, errOut)
	}
}
