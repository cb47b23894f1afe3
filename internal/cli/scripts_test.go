package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/upstream"
)

func TestScriptsCommand(t *testing.T) {
	code, out, errOut := run(t, "", "scripts", "--argocd-cm", "testdata/argocd-cm-scripts.yaml", "--argocd-version", "v2.14")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"apps/Deployment               Go check                                                   discovery: argocd-cm; argocd-cm: mine; built-in: pause, restart, resume (hidden from the menu)\n",
		"argoproj.io/AnalysisRun       argocd-cm wildcard \"argoproj.io/*\" (no open libraries)     discovery: built-in; built-in: terminate\n",
		"argoproj.io/Rollout           argocd-cm argoproj.io/Rollout (no open libraries)          discovery: built-in; built-in: abort, promote-full, restart, resume, retry\n",
		"WARN resource.customizations *.crossplane.io/*: actions are looked up by the exact group/kind only, so wildcard actions never apply\n",
		"WARN resource.customizations argoproj.io/*: replaces Argo CD's built-in health script of argoproj.io/AnalysisRun, ",
		"WARN resource.customizations argoproj.io/*: does not apply to argoproj.io/Rollout, whose own key wins\n",
		"WARN resource.customizations batch/CronJob: health.lua is replaced by resource.customizations.health.batch_CronJob\n",
		"WARN resource.customizations.actions.apps_Deployment: hides the built-in actions pause, restart, resume from the menu",
		"WARN resource.customizations.health.argoproj.io_rollout: kind \"rollout\" starts lower-case",
		"WARN resource.customizations.useOpenLibs.apps_Deployment: useOpenLibs without an argocd-cm health script has no effect",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// v3.6's built-ins differ: Rollout gains pause and skip-current-step.
	_, out, _ = run(t, "", "scripts", "--argocd-cm", "testdata/argocd-cm-scripts.yaml", "-o", "json")
	var rep scriptsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.ArgoCD != "v3.6" {
		t.Errorf("default release %q", rep.ArgoCD)
	}
	found := false
	for _, k := range rep.Kinds {
		if k.Key == "argoproj.io/Rollout" {
			found = strings.Contains(strings.Join(k.Actions.Builtin, ","), "skip-current-step")
		}
	}
	if !found {
		t.Errorf("v3.6 Rollout built-in actions: %s", out)
	}

	// -f adds the deployed kinds and flags keys matching none of them; --strict fails on warnings.
	code, out, _ = run(t, "", "scripts", "--argocd-cm", "testdata/argocd-cm-scripts.yaml", "-f", "testdata/scripts-deployed.yaml", "--strict")
	if code != 1 || !strings.Contains(out, "example.com/Widget            none                                                       none\n") ||
		!strings.Contains(out, "WARN resource.customizations.health.argoproj.io_Rollout: matches none of the given objects' kinds\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "apps_Deployment: matches none") {
		t.Errorf("Deployment is deployed:\n%s", out)
	}
}

func TestScriptsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"scripts"}, 2, "--argocd-cm is required"},
		{[]string{"scripts", "--argocd-cm", "testdata/not-argocd-cm.yaml"}, 1, "not an argocd-cm"},
		{[]string{"scripts", "--argocd-cm", "testdata/argocd-cm-badkey.yaml"}, 1, "resource customization type healthz not supported"},
		{[]string{"scripts", "--argocd-cm", "testdata/argocd-cm-scripts.yaml", "--argocd-version", "v9"}, 2, "v2.14"},
	} {
		code, out, errOut := run(t, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q, %q", tc.args, code, out, errOut)
		}
	}
}

// TestScriptsStrictOnOwnOutput: what `generate` writes passes `scripts --strict` under every Argo CD
// line: its actions replace built-in ones on purpose. An edited copy of one is reported again.
func TestScriptsStrictOnOwnOutput(t *testing.T) {
	for _, v := range []string{"v2.14", "v3.2", "v3.6"} {
		code, cm, stderr := run(t, "", "generate", "--format", "argocd-cm", "--argocd-version", v)
		if code != 0 {
			t.Fatalf("generate %s: %d %s", v, code, stderr)
		}
		path := filepath.Join(t.TempDir(), "argocd-cm.yaml")
		if err := os.WriteFile(path, []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, stderr := run(t, "", "scripts", "--argocd-cm", path, "--argocd-version", v, "--strict"); code != 0 || strings.Contains(out, "WARN") {
			t.Errorf("%s: scripts --strict on our own argocd-cm: exit %d\n%s%s", v, code, out, stderr)
		}
		edited := strings.Replace(cm, "obj.spec.terminate = true", "obj.spec.terminate = true -- edited", 1)
		if edited == cm {
			t.Fatal("the terminate action is not where this test edits it")
		}
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, _ := run(t, "", "scripts", "--argocd-cm", path, "--argocd-version", v, "--strict"); code != 1 || !strings.Contains(out, "action terminate replaces the built-in action") {
			t.Errorf("%s: an edited terminate action: exit %d\n%s", v, code, out)
		}
	}
}

// The install `generate --format patch` writes, checked against a rendered chart: the AnalysisRun and
// Experiment keys are for objects the Rollouts controller makes, which rendered manifests never hold, so
// they are matched by the chart's Rollout; without a Rollout the Experiment key still matches nothing.
func TestScriptsStrictOnOwnInstall(t *testing.T) {
	code, patch, errOut := run(t, "", "generate", "--format", "patch")
	if code != 0 {
		t.Fatalf("generate: exit %d %s", code, errOut)
	}
	cm := filepath.Join(t.TempDir(), "patch.yaml")
	if err := os.WriteFile(cm, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		chart string
		code  int
		warn  string
	}{
		{"canary-checkout.yaml", 0, ""},
		{"bluegreen-payments.yaml", 0, ""},
		{"deployment-web.yaml", 1, "WARN resource.customizations.health.argoproj.io_Experiment: matches none of the given objects' kinds"},
	} {
		code, out, errOut := run(t, "", "scripts", "--argocd-cm", cm, "-f", "../../testdata/charts/"+tc.chart, "--strict")
		if code != tc.code || (tc.warn == "") != !strings.Contains(out, "WARN") || !strings.Contains(out, tc.warn) {
			t.Errorf("%s: exit %d, want %d and warning %q:\n%s%s", tc.chart, code, tc.code, tc.warn, out, errOut)
		}
	}
}

// The argo-helm argo-cd chart's default argocd-cm carries eight resource.customizations.ignoreResourceUpdates
// keys (diff filters, no Lua). They are no scripts, so they match no kind by design: --strict passes on
// the unmodified chart, alone and with our install merged in, and a key that is a script and matches
// nothing is still reported under its own key.
func TestScriptsStrictOnArgoHelmDefaults(t *testing.T) {
	const helmCM = "testdata/argocd-cm-argo-helm.yaml"
	code, patch, errOut := run(t, "", "generate", "--format", "patch")
	if code != 0 {
		t.Fatalf("generate: exit %d %s", code, errOut)
	}
	var p struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatal(err)
	}
	var cm map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, helmCM)), &cm); err != nil {
		t.Fatal(err)
	}
	data := cm["data"].(map[string]any)
	for k, v := range p.Data {
		data[k] = v
	}
	withOurs := filepath.Join(t.TempDir(), "argocd-cm.yaml")
	raw, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(withOurs, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cm, chart string
		code      int
		warn      string
	}{
		{helmCM, "canary-checkout.yaml", 0, ""},
		{helmCM, "deployment-web.yaml", 0, ""},
		{withOurs, "canary-checkout.yaml", 0, ""},
		{withOurs, "deployment-web.yaml", 1, "WARN resource.customizations.health.argoproj.io_Experiment: matches none of the given objects' kinds\n"},
	} {
		code, out, errOut := run(t, "", "scripts", "--argocd-cm", tc.cm, "-f", "../../testdata/charts/"+tc.chart, "--strict")
		if code != tc.code || (tc.warn == "") != !strings.Contains(out, "WARN") || !strings.Contains(out, tc.warn) {
			t.Errorf("%s -f %s: exit %d, want %d and warning %q:\n%s%s", filepath.Base(tc.cm), tc.chart, code, tc.code, tc.warn, out, errOut)
		}
		// Every warning names a data key of the ConfigMap, never a bare "resource.customizations <kind>".
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(line, "WARN "); ok {
				key, _, _ := strings.Cut(rest, ":")
				if _, ok := data[key]; !ok {
					t.Errorf("%s: warning does not name a key of the ConfigMap: %s", tc.chart, line)
				}
			}
		}
	}
	// A legacy resource.customizations entry holding only a diff setting is no script either.
	legacy := filepath.Join(t.TempDir(), "legacy.yaml")
	if err := os.WriteFile(legacy, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  resource.customizations: |\n    apps/StatefulSet:\n      ignoreDifferences: |\n        jsonPointers:\n        - /spec/volumeClaimTemplates\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "", "scripts", "--argocd-cm", legacy, "-f", "../../testdata/charts/canary-checkout.yaml", "--strict"); code != 0 || strings.Contains(out, "WARN") {
		t.Errorf("legacy ignoreDifferences entry: exit %d\n%s%s", code, out, errOut)
	}
}

// The committed argo-helm argocd-cm is the vendored chart's: every configs.cm default of its values.yaml
// (but create and annotations, which the chart's helper omits) is a data key with that value, plus the
// url preset, and nothing else.
func TestArgoHelmDefaultArgoCDCM(t *testing.T) {
	raw, err := os.ReadFile(upstream.Vendored(t, "argo-helm/charts/argo-cd/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Global struct {
			Domain string `json:"domain"`
		} `json:"global"`
		Configs struct {
			CM map[string]any `json:"cm"`
		} `json:"configs"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"url": "https://" + values.Global.Domain}
	for k, v := range values.Configs.CM {
		if k == "create" || k == "annotations" {
			continue
		}
		if s := fmt.Sprint(v); s != "" {
			want[k] = s
		}
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "testdata/argocd-cm-argo-helm.yaml")), &cm); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("testdata/argocd-cm-argo-helm.yaml data differs from the vendored chart's configs.cm:\n got %v\nwant %v", cm.Data, want)
	}
}
