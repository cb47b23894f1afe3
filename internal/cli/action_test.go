package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

const blockedReason = `blocked by step analysis run checkout-c9c66885-4-2 Failed: Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1) (answer with retry or abort)`

func TestActionCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		stdin   string
		code    int
		wantOut string   // exact stdout, when set
		hasOut  []string // substrings of stdout
		wantErr string   // substring of stderr
	}{
		{name: "list with reasons from the failed run", args: []string{"action", "list", "-f", "testdata/actions/rollout-step-analysis-failed.yaml"},
			hasOut: []string{"NAME               DISABLED  SOURCE           REASON\n" +
				"pause              true      analysis-health  -\n" +
				// Our discovery's entry, over Argo CD's action: the SOURCE is whose discovery lists it.
				"promote-full       true      analysis-health  " + blockedReason + "\n" +
				"skip-current-step  true      analysis-health  " + blockedReason + "\n",
				"retry              false     Argo CD          Argo CD's built-in discovery decides\n",
				"  argocd app actions run APP retry --kind Rollout --resource-name checkout\n",
				"  argocd app actions run APP promote-full --kind Rollout --resource-name checkout   (blocked in the menu by analysis-health; Argo CD would still run it)\n"}},
		{name: "list, nothing blocked", args: []string{"action", "list", "-f", "testdata/actions/rollout-pause-step.yaml"},
			hasOut: []string{"NAME               DISABLED  SOURCE           REASON\npause              false     analysis-health  -\nskip-current-step  false     analysis-health  -\n"}},
		{name: "disabled for another reason has no reason", args: []string{"action", "list", "-f", "testdata/actions/experiment-successful.yaml"},
			wantOut: "NAME       DISABLED  SOURCE           REASON\nterminate  true      analysis-health  -\n"},
		{name: "list as json", args: []string{"action", "list", "-f", "testdata/actions/rollout-step-analysis-failed.yaml", "-o", "json"},
			hasOut: []string{`"name": "promote-full"`, `"displayName": "promote-full (blocked: step analysis run checkout-c9c66885-4-2 Failed)"`, `"reason": "blocked by step analysis run`,
				`"source": "analysis-health",
    "script": "Argo CD",`}},
		{name: "list from stdin as yaml", args: []string{"action", "list", "-f", "-", "-o", "yaml", "--argocd-version", "v3"},
			stdin:   `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r"}, "spec": {}, "status": {"phase": "Running"}}`,
			wantOut: "- disabled: false\n  name: terminate\n  script: analysis-health\n  source: analysis-health\n"},
		{name: "run prints the patched object", args: []string{"action", "run", "pause", "-f", "testdata/actions/rollout-pause-step.yaml"},
			hasOut: []string{"kind: Rollout\n", "spec:\n  paused: true\n  replicas: 4\n", "currentStepIndex: 1\n"}},
		{name: "run --diff", args: []string{"action", "run", "skip-current-step", "-f", "testdata/actions/rollout-pause-step.yaml", "--diff"},
			wantOut: "--- Rollout web/frontend (live)\n+++ Rollout web/frontend (after skip-current-step)\n@@ -103,12 +103,9 @@\n" +
				"   controllerPause: true\n   currentPodHash: 7785c449cd\n   currentStepHash: 5c494bf9\n" +
				"-  currentStepIndex: 1\n+  currentStepIndex: 2\n   message: CanaryPauseStep\n   observedGeneration: \"23\"\n" +
				"-  pauseConditions:\n-  - reason: CanaryPauseStep\n-    startTime: \"2025-10-07T16:02:41Z\"\n" +
				"   phase: Paused\n   readyReplicas: 4\n   replicas: 4\n"},
		{name: "run terminate under v3", args: []string{"action", "run", "terminate", "-f", "testdata/actions/analysisrun-running.yaml", "--argocd-version", "v3", "--diff"},
			hasOut: []string{"+  terminate: true\n"}},
		{name: "disabled by a failed analysis", args: []string{"action", "run", "skip-current-step", "-f", "testdata/actions/rollout-step-analysis-failed.yaml"},
			code: 1, wantErr: `action "skip-current-step" is disabled for Rollout shop/checkout: ` + blockedReason + "; --force runs it anyway"},
		{name: "--force runs a blocked bundled action, with a warning", args: []string{"action", "run", "skip-current-step", "-f", "testdata/actions/rollout-step-analysis-failed.yaml", "--force", "--diff"},
			hasOut: []string{"+  currentStepIndex: 1\n"}, wantErr: `Warning: action "skip-current-step" is disabled for Rollout shop/checkout (` + blockedReason + "); running it because of --force"},
		{name: "blocked promote-full says it is blocked", args: []string{"action", "run", "promote-full", "-f", "testdata/actions/rollout-step-analysis-failed.yaml"},
			code: 1, wantErr: `action "promote-full" is disabled for Rollout shop/checkout: ` + blockedReason + ". It is Argo CD's built-in action (its Lua is not bundled here, so --force cannot run it); " +
				"Argo CD's API server does not consult discovery, so argocd app actions run APP promote-full --kind Rollout --resource-name checkout would still run it"},
		{name: "blocked promote-full is refused under --force too", args: []string{"action", "run", "promote-full", "-f", "testdata/actions/rollout-step-analysis-failed.yaml", "--force"},
			code: 1, wantErr: "--force cannot run it"},
		{name: "promote-full unblocked is Argo CD's", args: []string{"action", "run", "promote-full", "-f", "testdata/actions/rollout-pause-step.yaml"},
			code: 1, wantErr: "promote-full is Argo CD's built-in action for argoproj.io/Rollout, whose Lua is Argo CD's and not bundled here: run it in Argo CD with\n  argocd app actions run APP promote-full --kind Rollout --resource-name frontend"},
		{name: "-f twice in list", args: []string{"action", "list", "-f", "testdata/actions/rollout-pause-step.yaml", "-f", "testdata/actions/analysisrun-running.yaml"},
			code: 2, wantErr: `invalid argument "testdata/actions/analysisrun-running.yaml" for "-f, --filename" flag: given twice (first "testdata/actions/rollout-pause-step.yaml")`},
		{name: "-f twice in run", args: []string{"action", "run", "pause", "--filename=testdata/actions/rollout-pause-step.yaml", "-f", "testdata/actions/rollout-pause-step.yaml"},
			code: 2, wantErr: `for "-f, --filename" flag: given twice`},
		{name: "disabled by state", args: []string{"action", "run", "terminate", "-f", "testdata/actions/experiment-successful.yaml"},
			code: 1, wantErr: `action "terminate" is disabled for Experiment shop/checkout-7bb9d897fd-7-1: the bundled discovery script disables it`},
		{name: "built-in action not bundled", args: []string{"action", "run", "abort", "-f", "testdata/actions/rollout-pause-step.yaml"},
			code: 1, wantErr: "abort is Argo CD's built-in action for argoproj.io/Rollout, whose Lua is Argo CD's and not bundled here: run it in Argo CD with\n  argocd app actions run APP abort --kind Rollout --resource-name frontend"},
		{name: "wrong kind", args: []string{"action", "list", "-f", "testdata/actions/deployment.yaml"},
			code: 1, wantErr: "Deployment web: analysis-health has no actions for apps/Deployment (it has actions for argoproj.io/AnalysisRun, argoproj.io/Experiment, argoproj.io/Rollout"},
		{name: "several objects", args: []string{"action", "run", "terminate", "-f", "testdata/actions/two-objects.yaml"},
			code: 2, wantErr: "two-objects.yaml holds 2 objects"},
		{name: "missing file", args: []string{"action", "list", "-f", "testdata/actions/nope.yaml"}, code: 1, wantErr: "nope.yaml"},
		{name: "the action fails", args: []string{"action", "run", "terminate", "-f", "-", "--argocd-version", "v3"},
			stdin: `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r"}}`,
			code:  1, wantErr: "- (document 1): AnalysisRun r: action terminate failed: terminate: the AnalysisRun has no spec"},
		{name: "discovery survives odd field types", args: []string{"action", "list", "-f", "-"},
			stdin:   `{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r"}, "spec": {"terminate": {"x": 1}}, "status": {"phase": {}}}`,
			wantOut: "NAME       DISABLED  SOURCE           REASON\nterminate  false     analysis-health  -\n"},
		{name: "param under v2", args: []string{"action", "run", "terminate", "-f", "testdata/actions/analysisrun-running.yaml", "--param", "a=b", "--argocd-version", "v2"},
			code: 2, wantErr: "--param needs Argo CD v3"},
		{name: "param under the default profile is accepted", args: []string{"action", "run", "terminate", "-f", "testdata/actions/analysisrun-running.yaml", "--param", "a=b"},
			hasOut: []string{"terminate: true"}},
		{name: "malformed param", args: []string{"action", "run", "terminate", "-f", "testdata/actions/analysisrun-running.yaml", "--param", "a", "--argocd-version", "v3"},
			code: 2, wantErr: `invalid --param "a": want key=value`},
		{name: "param under v3 is accepted", args: []string{"action", "run", "terminate", "-f", "testdata/actions/analysisrun-running.yaml", "--param", "a=b=c", "--argocd-version", "v3"},
			hasOut: []string{"terminate: true"}},
		{name: "no -f", args: []string{"action", "list"}, code: 2, wantErr: "-f FILE is required"},
		{name: "no action", args: []string{"action", "run", "-f", "testdata/actions/analysisrun-running.yaml"}, code: 2, wantErr: "exactly one ACTION"},
		{name: "no subcommand", args: []string{"action"}, code: 2, wantErr: "list or run"},
		{name: "bad version", args: []string{"action", "list", "-f", "x", "--argocd-version", "v4"}, code: 2, wantErr: "v2.14, v3.2, v3.6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if tc.code != 0 && out != "" {
				t.Errorf("stdout must stay empty on error, got:\n%s", out)
			}
			if tc.wantOut != "" && out != tc.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tc.wantOut)
			}
			for _, w := range tc.hasOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tc.wantErr != "" && !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stack trace on stderr:\n%s", errOut)
			}
		})
	}
}

// The YAML that run prints is the input object with only the action's change: decoding both gives the
// same object once spec.paused is set on the input.
func TestActionRunOutputIsTheObject(t *testing.T) {
	code, out, errOut := run(t, "", "action", "run", "pause", "-f", "testdata/actions/rollout-pause-step.yaml")
	if code != 0 {
		t.Fatal(errOut)
	}
	raw, err := os.ReadFile("testdata/actions/rollout-pause-step.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := yaml.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want["spec"].(map[string]any)["paused"] = true
	// The template's creationTimestamp: null cannot survive Lua.
	delete(want["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any), "creationTimestamp")
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) {
		t.Errorf("output differs from the input plus spec.paused:\n%s\n%s", w, g)
	}
}

// Rendering of what an action returns: a patch that changes nothing has no diff, created objects are
// labelled and diffed from nothing, several objects become several documents.
func TestActionRendering(t *testing.T) {
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns", "x": nil}}
	created := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}}
	same := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}}
	for _, tc := range []struct {
		name     string
		diff     bool
		impacted []engine.Impacted
		want     string
	}{
		{name: "no change", diff: true, impacted: []engine.Impacted{{Operation: engine.Patch, Object: same}}, want: ""},
		{name: "create diff", diff: true, impacted: []engine.Impacted{{Operation: engine.Create, Object: created}},
			want: "--- /dev/null\n+++ Secret s (created by act)\n@@ -0,0 +1,4 @@\n+apiVersion: v1\n+kind: Secret\n+metadata:\n+  name: s\n"},
		{name: "one patch", impacted: []engine.Impacted{{Operation: engine.Patch, Object: same}},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"},
		{name: "patch and create", impacted: []engine.Impacted{{Operation: engine.Patch, Object: same}, {Operation: engine.Create, Object: created}},
			want: "# patch ConfigMap ns/a\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n---\n# create Secret s\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			var err error
			if tc.diff {
				err = writeActionDiff(&b, live, "act", tc.impacted)
			} else {
				err = writeActionObjects(&b, tc.impacted)
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// action list and action run agree: what the list says analysis-health runs, run runs (or refuses as
// disabled); what it lists as Argo CD's, run refuses with the argocd command that runs it there; -f with
// several objects selects with --kind and --name.
func TestActionListAndRunAgree(t *testing.T) {
	const multi = "../../testdata/examples/canary-analysis.yaml"
	code, _, errOut := run(t, "", "action", "list", "-f", multi)
	if code != 2 || !strings.Contains(errOut, "select one with --kind KIND --name NAME") || !strings.Contains(errOut, "Rollout checkout") {
		t.Errorf("several objects without a selection: exit %d %s", code, errOut)
	}
	for _, sel := range [][]string{{"--kind", "Rollout", "--name", "checkout"}, {"--kind", "AnalysisRun"}, {"--name", "payments"}} {
		code, out, errOut := run(t, "", append([]string{"action", "list", "-f", multi, "-o", "json"}, sel...)...)
		var rows []ActionRow
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) == 0 {
			t.Fatalf("%v: exit %d %s", sel, code, errOut)
		}
		for _, r := range rows {
			code, _, errOut := run(t, "", append([]string{"action", "run", r.Name, "-f", multi}, sel...)...)
			switch {
			case r.Source == "Argo CD":
				if code != 1 || r.RunWith == "" || !strings.Contains(errOut, r.RunWith) || !strings.HasPrefix(r.RunWith, "argocd app actions run APP "+r.Name+" --kind ") {
					t.Errorf("%v %s (Argo CD's): exit %d %s", sel, r.Name, code, errOut)
				}
			case r.Disabled:
				if code != 1 || !strings.Contains(errOut, "is disabled") {
					t.Errorf("%v %s (disabled): exit %d %s", sel, r.Name, code, errOut)
				}
			default:
				if code != 0 {
					t.Errorf("%v %s: listed as runnable, run exits %d: %s", sel, r.Name, code, errOut)
				}
			}
		}
	}
}
