package v36

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/verify"
)

// Users' own argocd-cm scripts under v3.6's two changes: `return nil` is "no health", and scripts run
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

// The engine's ResourceHealth and Execute equal v3.6.1's GetResourceHealth (argocd-cm through
// util/settings) and ExecuteHealthLua, for every script and object.
func TestUserScriptsMatchArgoCDv36(t *testing.T) {
	n := 0
	for _, s := range userScripts {
		ov := overrides(t, map[string]string{"resource.customizations.health.argoproj.io_Rollout": s.script})
		for _, o := range userObjects {
			t.Run(s.name+"/"+o.name, func(t *testing.T) {
				obj := userObject(o.meta)
				want, wantErr := health.GetResourceHealth(&unstructured.Unstructured{Object: userObject(o.meta)}, argolua.ResourceHealthOverrides(ov))
				got, gotErr := engine.Engine{Profile: engine.V36}.ResourceHealth(obj, s.script)
				if errText(wantErr) != errText(gotErr) {
					t.Fatalf("error:\n argo-cd v3.6: %s\n engine:       %s", errText(wantErr), errText(gotErr))
				}
				if !sameRecorded(got, want) {
					t.Errorf("recorded: argo-cd v3.6 %s, engine %s", showArgo(want), show(got))
				}
				vm, vmErr := argolua.VM{}.ExecuteHealthLua(&unstructured.Unstructured{Object: userObject(o.meta)}, s.script)
				ex, exErr := engine.Engine{Profile: engine.V36}.Execute(obj, s.script)
				if errText(vmErr) != errText(exErr) || vmErr == nil && !sameHealth(ex, vm) {
					t.Errorf("ExecuteHealthLua: argo-cd v3.6 %s %v, engine %s %v", showArgo(vm), vmErr, show(ex), exErr)
				}
				n++
			})
		}
	}
	t.Logf("Argo CD v3.6.1: %d user script × object cases", n)
}

// sameRecorded compares status and message (gitops-engine's result keeps the script's deletionMessage
// when it is not used; what Argo CD records is status and message).
func sameRecorded(ours *engine.Health, argo *health.HealthStatus) bool {
	if ours == nil || argo == nil {
		return ours == nil && argo == nil
	}
	return ours.Status == string(argo.Status) && ours.Message == argo.Message
}

// GoHealthCheck is gitops-engine v3.6.1's GetHealthCheckFunc != nil, which is what a nil result falls
// back to.
func TestGoHealthChecksMatchArgoCDv36(t *testing.T) {
	for _, gk := range []schema.GroupKind{
		{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "ReplicaSet"},
		{Group: "apps", Kind: "DaemonSet"}, {Group: "extensions", Kind: "Ingress"}, {Group: "networking.k8s.io", Kind: "Ingress"},
		{Group: "argoproj.io", Kind: "Workflow"}, {Group: "argoproj.io", Kind: "Rollout"}, {Group: "argoproj.io", Kind: "AnalysisRun"},
		{Group: "apiregistration.k8s.io", Kind: "APIService"}, {Group: "", Kind: "Service"}, {Group: "", Kind: "PersistentVolumeClaim"},
		{Group: "", Kind: "Pod"}, {Group: "", Kind: "ConfigMap"}, {Group: "batch", Kind: "Job"}, {Group: "batch", Kind: "CronJob"},
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, {Group: "apps", Kind: "Rollout"},
	} {
		want := health.GetHealthCheckFunc(gk.WithVersion("v1")) != nil
		if got := engine.GoHealthCheck(gk.Group, gk.Kind); got != want {
			t.Errorf("%s: engine.GoHealthCheck %v, gitops-engine %v", gk, got, want)
		}
	}
}

// `analysis-health health --argocd-cm` prints what v3.6.1 records (the default profile and v3.6 spelled
// out), and names "no health" where v3.6.1 records none.
func TestHealthCommandMatchesArgoCDv36(t *testing.T) {
	dir := t.TempDir()
	for i, s := range userScripts {
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd", "labels": map[string]any{"app.kubernetes.io/part-of": "argocd"}},
			"data":     map[string]any{"resource.customizations.health.argoproj.io_Rollout": s.script}}
		cmFile := writeYAML(t, dir, fmt.Sprintf("cm-%d.yaml", i), cm)
		ov := overrides(t, map[string]string{"resource.customizations.health.argoproj.io_Rollout": s.script})
		for j, o := range userObjects {
			objFile := writeYAML(t, dir, fmt.Sprintf("obj-%d-%d.yaml", i, j), userObject(o.meta))
			want, wantErr := health.GetResourceHealth(&unstructured.Unstructured{Object: userObject(o.meta)}, argolua.ResourceHealthOverrides(ov))
			for _, version := range [][]string{nil, {"--argocd-version", "v3.6"}, {"--argocd-version", "3.6.1"}} {
				t.Run(fmt.Sprintf("%s/%s/%v", s.name, o.name, version), func(t *testing.T) {
					var out, errOut bytes.Buffer
					args := append([]string{"health", "-f", objFile, "--argocd-cm", cmFile, "-o", "json"}, version...)
					code := cli.Run(args, &cli.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
					if wantErr != nil {
						if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), want.Message) {
							t.Fatalf("v3.6.1 fails (%v); exit %d, stdout %q, stderr %q", wantErr, code, out.String(), errOut.String())
						}
						return
					}
					var rows []cli.HealthRow
					if code != 0 || json.Unmarshal(out.Bytes(), &rows) != nil || len(rows) != 1 {
						t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
					}
					switch {
					case want == nil && (rows[0].Status != "" || !strings.HasPrefix(rows[0].Message, "no health")):
						t.Errorf("v3.6.1 records no health, the CLI prints %+v", rows[0])
					case want != nil && (rows[0].Status != string(want.Status) || rows[0].Message != want.Message):
						t.Errorf("v3.6.1 records %s, the CLI prints %+v", showArgo(want), rows[0])
					}
				})
			}
		}
	}
}

// `analysis-health verify` (the v3.6 profile, the default) passes a suite exactly when v3.6.1's
// TestLuaHealthScript would: assert.Equal of the suite's *HealthStatus with ExecuteHealthLua's result.
// Each case is run with v3.6.1's own result as the expectation, and with a wrong one of each shape.
func TestVerifyMatchesArgoCDv36(t *testing.T) {
	// v3.6.1's IndividualTest (util/lua/health_test.go): healthStatus is a pointer.
	type upstreamSuite struct {
		Tests []struct {
			InputPath    string               `json:"inputPath"`
			HealthStatus *health.HealthStatus `json:"healthStatus"`
		} `json:"tests"`
	}
	n := 0
	for _, s := range userScripts {
		for _, o := range userObjects {
			result, err := argolua.VM{UseOpenLibs: true}.ExecuteHealthLua(&unstructured.Unstructured{Object: userObject(o.meta)}, s.script)
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
					res, err := verify.Runner{Engine: engine.Engine{Profile: engine.V36, OpenLibs: true}}.Tree(os.DirFS(root), ".")
					if err != nil {
						t.Fatal(err)
					}
					if passed, failed := res.Counts(); passed+failed != 1 || (failed == 0) != upstreamPasses {
						t.Errorf("v3.6.1's TestLuaHealthScript passes: %v; verify: %d passed, %d failed %v", upstreamPasses, passed, failed, res.Failures())
					}
					var out, errOut bytes.Buffer
					code := cli.Run([]string{"verify", "--lint=false", "--open-libs", root}, &cli.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
					if (code == 0) != upstreamPasses {
						t.Errorf("v3.6.1's TestLuaHealthScript passes: %v; analysis-health verify exit %d: %s%s", upstreamPasses, code, out.String(), errOut.String())
					}
					n++
				})
			}
		}
	}
	t.Logf("Argo CD v3.6.1: %d verify cases", n)
}

func writeYAML(t *testing.T, dir, name string, v any) string {
	t.Helper()
	raw, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	writeFile(t, p, string(raw))
	return p
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
