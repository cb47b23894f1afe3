package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/verify"
)

// Users' own argocd-cm scripts, probing v3.6's two changes: `return nil` is "no health", and scripts run
// for objects being deleted, where a deletionMessage replaces "Pending deletion".
var userScripts = []struct{ name, script string }{
	{"nil", `return nil`},
	{"no return", `local x = 1`},
	{"empty table", `return {}`},
	{"verdict", `return {status = "Degraded", message = "m"}`},
	{"deletion aware", `if obj.metadata.deletionTimestamp ~= nil then
  return {status = "Progressing", message = "m", deletionMessage = "Waiting for " .. tostring(#(obj.metadata.finalizers or {})) .. " finalizers"}
end
return {status = "Healthy", message = "running"}`},
	{"degraded while deleting", `return {status = "Degraded", message = "m", deletionMessage = "stuck"}`},
	{"deletionMessage without status", `return {deletionMessage = "d"}`},
	{"deletionMessage not a string", `return {status = "Healthy", deletionMessage = 42}`},
	{"empty deletionMessage", `return {status = "Suspended", message = "m", deletionMessage = ""}`},
	{"nil while deleting", `if obj.metadata.deletionTimestamp ~= nil then return nil end return {status = "Healthy"}`},
	{"error", `error("boom", 0)`},
	{"runtime error", `return {status = obj.status.phase}`},
}

var userObjects = []struct {
	name string
	meta map[string]any
}{
	{"live", map[string]any{}},
	{"deleting", map[string]any{"deletionTimestamp": "2026-11-30T10:00:00Z"}},
	{"deleting with finalizers", map[string]any{"deletionTimestamp": "2026-11-30T10:00:00Z", "finalizers": []any{"foregroundDeletion", "example.com/x"}}},
	{"deleting hook", map[string]any{"deletionTimestamp": "2026-11-30T10:00:00Z", "finalizers": []any{"argocd.argoproj.io/hook-finalizer"},
		"annotations": map[string]any{"argocd.argoproj.io/hook": "PostSync"}}},
	{"unparseable deletionTimestamp", map[string]any{"deletionTimestamp": "yesterday"}},
}

func userObject(meta map[string]any) map[string]any {
	m := map[string]any{"name": "r", "namespace": "shop"}
	for k, v := range meta {
		m[k] = v
	}
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": m, "spec": map[string]any{}}
}

// UserScripts: the engine's ResourceHealth and Execute equal the release's GetResourceHealth (argocd-cm
// through util/settings) and ExecuteHealthLua, for every user script and object.
func UserScripts(t *testing.T, r Release) {
	e := engine.Engine{Profile: r.Profile()}
	n := 0
	for _, s := range userScripts {
		argo := Load(t, r, map[string]string{"resource.customizations.health.argoproj.io_Rollout": s.script})
		for _, o := range userObjects {
			t.Run(s.name+"/"+o.name, func(t *testing.T) {
				obj := userObject(o.meta)
				want, wantErr := argo.ResourceHealth(obj)
				got, gotErr := e.ResourceHealth(obj, s.script)
				if ErrText(wantErr) != ErrText(gotErr) {
					t.Fatalf("error:\n argo-cd %s: %s\n engine: %s", r.Version(), ErrText(wantErr), ErrText(gotErr))
				}
				if !SameRecorded(got, want) {
					t.Errorf("recorded: argo-cd %s %s, engine %s", r.Version(), Show(want), Show(got))
				}
				vm, vmErr := argo.ExecuteHealth(obj, s.script, false)
				ex, exErr := e.Execute(obj, s.script)
				if ErrText(vmErr) != ErrText(exErr) || vmErr == nil && !Same(ex, vm) {
					t.Errorf("ExecuteHealthLua: argo-cd %s %s %v, engine %s %v", r.Version(), Show(vm), vmErr, Show(ex), exErr)
				}
				n++
			})
		}
	}
	t.Logf("Argo CD %s: %d user script × object cases", r.Version(), n)
}

// HealthCommand: `analysis-health health --argocd-cm` prints what the release records (its profile
// spelled out as the release line and as the release, and no flag where it is the default profile), and
// names "no health" where the release records none.
func HealthCommand(t *testing.T, r Release) {
	versions := [][]string{{"--argocd-version", string(r.Profile())}, {"--argocd-version", strings.TrimPrefix(r.Version(), "v")}}
	if r.Profile() == engine.Default {
		versions = append([][]string{nil}, versions...)
	}
	dir := t.TempDir()
	for i, s := range userScripts {
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd", "labels": map[string]any{"app.kubernetes.io/part-of": "argocd"}},
			"data":     map[string]any{"resource.customizations.health.argoproj.io_Rollout": s.script}}
		cmFile := writeYAML(t, dir, fmt.Sprintf("cm-%d.yaml", i), cm)
		argo := Load(t, r, map[string]string{"resource.customizations.health.argoproj.io_Rollout": s.script})
		for j, o := range userObjects {
			objFile := writeYAML(t, dir, fmt.Sprintf("obj-%d-%d.yaml", i, j), userObject(o.meta))
			want, wantErr := argo.ResourceHealth(userObject(o.meta))
			for _, version := range versions {
				t.Run(fmt.Sprintf("%s/%s/%v", s.name, o.name, version), func(t *testing.T) {
					var out, errOut bytes.Buffer
					args := append([]string{"health", "-f", objFile, "--argocd-cm", cmFile, "-o", "json"}, version...)
					code := cli.Run(args, &cli.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
					if wantErr != nil {
						if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), want.Message) {
							t.Fatalf("%s fails (%v); exit %d, stdout %q, stderr %q", r.Version(), wantErr, code, out.String(), errOut.String())
						}
						return
					}
					var rows []cli.HealthRow
					if code != 0 || json.Unmarshal(out.Bytes(), &rows) != nil || len(rows) != 1 {
						t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
					}
					switch {
					case want == nil && (rows[0].Status != "" || !strings.HasPrefix(rows[0].Message, "no health")):
						t.Errorf("%s records no health, the CLI prints %+v", r.Version(), rows[0])
					case want != nil && (rows[0].Status != string(want.Status) || rows[0].Message != want.Message):
						t.Errorf("%s records %s, the CLI prints %+v", r.Version(), Show(want), rows[0])
					}
				})
			}
		}
	}
}

// VerifyPointerSuites (a release with NoHealth): `analysis-health verify` (the release's profile) passes
// a suite exactly when the release's TestLuaHealthScript would: assert.Equal of the suite's
// *HealthStatus with ExecuteHealthLua's result. Each case is run with the release's own result as the
// expectation, and with a wrong one of each shape.
func VerifyPointerSuites(t *testing.T, r Release) {
	if !r.Capabilities().NoHealth {
		t.Fatalf("Argo CD %s's suites hold no pointer", r.Version())
	}
	// The release's IndividualTest (util/lua/health_test.go): healthStatus is a pointer to a HealthStatus,
	// whose fields and JSON names engine.Health has.
	type upstreamSuite struct {
		Tests []struct {
			InputPath    string         `json:"inputPath"`
			HealthStatus *engine.Health `json:"healthStatus"`
		} `json:"tests"`
	}
	argo := Defaults(r)
	n := 0
	for _, s := range userScripts {
		for _, o := range userObjects {
			result, err := argo.ExecuteHealth(userObject(o.meta), s.script, true)
			if err != nil {
				continue // a failing script fails either way; verify reports script errors (verify's own tests)
			}
			expectations := map[string]string{"none": "", "null": "  healthStatus: null\n", "empty": "  healthStatus: {}\n",
				"other": "  healthStatus: {status: Healthy, message: other}\n"}
			if result != nil {
				b, _ := json.Marshal(result)
				expectations["argo-cd's own"] = "  healthStatus: " + string(b) + "\n"
				if result.DeletionMessage != "" {
					expectations["without deletionMessage"] = fmt.Sprintf("  healthStatus: {status: %q, message: %q}\n", result.Status, result.Message)
				}
			}
			for name, exp := range expectations {
				t.Run(s.name+"/"+o.name+"/"+name, func(t *testing.T) {
					suite := "tests:\n- inputPath: testdata/obj.yaml\n" + exp
					var up upstreamSuite
					if err := yaml.Unmarshal([]byte(suite), &up); err != nil {
						t.Fatal(err)
					}
					upstreamPasses := reflect.DeepEqual(up.Tests[0].HealthStatus, result)
					root := t.TempDir()
					writeFile(t, filepath.Join(root, "argoproj.io/Rollout/health.lua"), s.script)
					writeFile(t, filepath.Join(root, "argoproj.io/Rollout/health_test.yaml"), suite)
					raw, _ := yaml.Marshal(userObject(o.meta))
					writeFile(t, filepath.Join(root, "argoproj.io/Rollout/testdata/obj.yaml"), string(raw))
					res, err := verify.Runner{Engine: verify.Engine{Profile: verify.Profile(r.Profile()), OpenLibs: true}}.Tree(os.DirFS(root), ".")
					if err != nil {
						t.Fatal(err)
					}
					if passed, failed := res.Counts(); passed+failed != 1 || (failed == 0) != upstreamPasses {
						t.Errorf("%s's TestLuaHealthScript passes: %v; verify: %d passed, %d failed %v", r.Version(), upstreamPasses, passed, failed, res.Failures())
					}
					var out, errOut bytes.Buffer
					code := cli.Run([]string{"verify", "--lint=false", "--open-libs", root}, &cli.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
					if (code == 0) != upstreamPasses {
						t.Errorf("%s's TestLuaHealthScript passes: %v; analysis-health verify exit %d: %s%s", r.Version(), upstreamPasses, code, out.String(), errOut.String())
					}
					n++
				})
			}
		}
	}
	t.Logf("Argo CD %s: %d verify cases", r.Version(), n)
}

func writeYAML(t testing.TB, dir, name string, v any) string {
	t.Helper()
	raw, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	writeFile(t, p, string(raw))
	return p
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
