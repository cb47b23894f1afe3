package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name -> content under dir and returns dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// argocdCM is an argocd-cm whose data holds the given keys: a value of several lines as a literal block.
func argocdCM(data map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n")
	for k, v := range data {
		if !strings.Contains(v, "\n") {
			fmt.Fprintf(&b, "  %s: %q\n", k, v)
			continue
		}
		fmt.Fprintf(&b, "  %s: |\n", k)
		for _, line := range strings.Split(strings.TrimRight(v, "\n"), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

const rolloutYAML = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: %s
  namespace: shop
`

// Issue 44 #4: an argocd-cm under review asking for open libraries does not get them without
// --open-libs: its os.execute does not run, and the error names the key and the flag.
func TestHealthRefusesOpenLibsWithoutFlag(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	script := fmt.Sprintf("os.execute(\"touch %s\")\nreturn {status = \"Healthy\", message = \"ran\"}\n", marker)
	for _, tc := range []struct {
		name, cm, key string
	}{
		{"split key", argocdCM(map[string]string{
			"resource.customizations.health.argoproj.io_Rollout":      script,
			"resource.customizations.useOpenLibs.argoproj.io_Rollout": "true",
		}), "resource.customizations.useOpenLibs.argoproj.io_Rollout"},
		{"legacy key", argocdCM(map[string]string{
			"resource.customizations": "argoproj.io/Rollout:\n  health.lua.useOpenLibs: true\n  health.lua: |\n" +
				"    " + strings.ReplaceAll(strings.TrimRight(script, "\n"), "\n", "\n    ") + "\n",
		}), "resource.customizations (argoproj.io/Rollout: health.lua.useOpenLibs)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			writeFiles(t, dir, map[string]string{"cm.yaml": tc.cm, "rollout.yaml": fmt.Sprintf(rolloutYAML, "checkout")})
			cm, obj := filepath.Join(dir, "cm.yaml"), filepath.Join(dir, "rollout.yaml")

			code, out, errOut := run(t, "", "health", "-f", obj, "--argocd-cm", cm)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("os.execute ran without --open-libs")
			}
			if code != 1 || out != "" || !strings.Contains(errOut, tc.key) || !strings.Contains(errOut, "--open-libs") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no output and one line naming %s and --open-libs", code, out, errOut, tc.key)
			}

			code, out, errOut = run(t, "", "health", "-f", obj, "--argocd-cm", cm, "--open-libs")
			if _, err := os.Stat(marker); err != nil || code != 0 || !strings.Contains(out, "Healthy") {
				t.Errorf("with --open-libs: marker %v, exit %d, stdout %q, stderr %q; want the script run as Argo CD runs it", err, code, out, errOut)
			}
		})
	}
}

// Issue 44 #5: one argocd-cm script that leaves metatables on strings and booleans, three Rollouts:
// Argo CD evaluates each in a fresh VM, so all three are Healthy.
func TestHealthReusedStatesDoNotLeak(t *testing.T) {
	const leak = `if getmetatable("") ~= nil or getmetatable(true) ~= nil then
  return {status = "Degraded", message = "state left behind by an earlier evaluation"}
end
setmetatable("", {__index = function() return "leaked" end})
setmetatable(true, {})
return {status = "Healthy", message = "fresh state"}`
	dir := writeFiles(t, t.TempDir(), map[string]string{
		"cm.yaml": argocdCM(map[string]string{"resource.customizations.health.argoproj.io_Rollout": leak}),
		"rollouts.yaml": fmt.Sprintf(rolloutYAML, "a") + "---\n" + fmt.Sprintf(rolloutYAML, "b") + "---\n" +
			fmt.Sprintf(rolloutYAML, "c"),
	})
	code, out, errOut := run(t, "", "health", "-f", filepath.Join(dir, "rollouts.yaml"), "--argocd-cm", filepath.Join(dir, "cm.yaml"), "-o", "json")
	if code != 0 || strings.Count(out, `"status": "Healthy"`) != 3 {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant three Healthy rows", code, errOut, out)
	}
}

// Issue 44 #6: a health script returning a table too deep or too large for the encoder is a one-line
// error and exit 1, never a crash. 1,000,000 tables take the VM more than Argo CD's 1 s to build on a
// loaded machine, so that one runs through verify and its --timeout.
func TestReturnedTableTooLarge(t *testing.T) {
	deep := func(n int) string { return fmt.Sprintf("local t = {} for i = 2, %d do t = {t} end return t", n) }
	const wide = `local s = "x" for i = 1, 20 do s = s .. s end local t = {} for i = 1, 100 do t[i] = s end return t`
	for _, tc := range []struct{ name, script, want string }{
		{"1001 deep", deep(1001), "the returned table nests deeper than 1000 tables"},
		{"100 MiB wide", wide, "the returned table is too large to encode"},
	} {
		t.Run("health/"+tc.name, func(t *testing.T) {
			dir := writeFiles(t, t.TempDir(), map[string]string{
				"cm.yaml":      argocdCM(map[string]string{"resource.customizations.health.argoproj.io_Rollout": tc.script}),
				"rollout.yaml": fmt.Sprintf(rolloutYAML, "checkout"),
			})
			code, out, errOut := run(t, "", "health", "-f", filepath.Join(dir, "rollout.yaml"), "--argocd-cm", filepath.Join(dir, "cm.yaml"))
			if code != 1 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", code, out, errOut, tc.want)
			}
		})
	}
	t.Run("verify/1,000,000 deep", func(t *testing.T) {
		dir := writeFiles(t, t.TempDir(), map[string]string{
			"example.com/Deep/health.lua":        deep(1000000),
			"example.com/Deep/health_test.yaml":  "tests:\n- healthStatus:\n    status: Healthy\n  inputPath: testdata/obj.yaml\n",
			"example.com/Deep/testdata/obj.yaml": "apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: d\n",
		})
		code, out, errOut := run(t, "", "verify", dir, "--lint=false", "--timeout", "2m")
		if code != 1 || !strings.Contains(out, "the returned table nests deeper than 1000 tables") {
			t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
		}
	})
}
