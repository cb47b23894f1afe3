package recorder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// LiveScenarios are the scenarios the live suite runs: those whose revisions a git repository can deliver
// and that need no user action on the Rollout's status (resume, retry, abort, promote), which in reality
// go through Argo CD's API server, not part of the live suite.
var LiveScenarios = []string{
	"canary-step-successful",
	"canary-step-failed",
	"canary-step-error",
	"canary-background-promoted-while-running",
	"canary-background-failed-during-pause",
	"canary-progress-deadline-abort",
	"canary-experiment-failed",
	"bluegreen-prepromotion-failed",
	"bluegreen-postpromotion-failed",
}

// LiveResult is one scenario run live.
type LiveResult struct {
	Scenario string
	// Install is "ours" (argocd-cm with our scripts) or "built-in".
	Install string
	// Live is the Application's health from the release on, collapsed to changes, as the watch saw it.
	Live []string
	// Replay is the same from the committed Rollout health of the replay (TimelineDir's scenario through
	// Argo CD v2.14's CompareAppState, which conformance/v36 TestE2EReplayArgoCDv36 holds v3.6.1 to),
	// collapsed; only for ours.
	Replay []string
	// Operation is the phase the release's sync operation (with the PostSync barrier) ended in, or
	// "Running" if it had not ended when the scenario did.
	Operation string
	// OperationMessage is the operation's message when it had not ended.
	OperationMessage string
}

// replayHealth reads the committed per-frame Rollout health of this build's Rollouts version and
// collapses each scenario's statuses to changes. The Rollout is the Application's only managed resource
// with a health other than Healthy (the Services are ClusterIP: Healthy; AnalysisTemplates and the
// barrier ConfigMap have none), so it is the Application's health.
func replayHealth() (map[string][]string, error) {
	path := filepath.Join(sourceDir(), "..", "testdata", "argocd-v2.14-rollout-health.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var all map[string]map[string][]string
	if err := yaml.UnmarshalStrict(raw, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string][]string{}
	for name, frames := range all[RolloutsVersion()] {
		var seq []string
		for _, f := range frames {
			st, _, _ := strings.Cut(f, ":")
			if len(seq) == 0 || seq[len(seq)-1] != st {
				seq = append(seq, st)
			}
		}
		out[name] = seq
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no frames for %s", path, RolloutsVersion())
	}
	return out, nil
}

// defaultProject is the AppProject "default" that argocd-server creates at its start
// (server/server.go initializeDefaultProject), which the live suite does not run.
func defaultProject(c *Cluster) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	proj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": ArgoCDNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	_, err = dyn.Resource(gvr).Namespace(ArgoCDNamespace).Create(context.Background(), proj, metav1.CreateOptions{})
	return err
}

// StartLive installs Argo CD on the Env's cluster (CRDs, argocd-cm from the chart with our generated
// values when ours, else the chart's defaults) and starts it.
func StartLive(env *Env, ours bool) (*ArgoCD, error) {
	a, err := NewArgoCD(env.Cluster)
	if err != nil {
		return nil, err
	}
	values := ""
	if ours {
		cli, err := cliBinary()
		if err != nil {
			return nil, err
		}
		values = filepath.Join(a.dir, "values.yaml")
		if out, err := exec.Command(cli, "generate", "--format", "helm", "--out", values).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("analysis-health generate --format helm: %v\n%s", err, out)
		}
	}
	if err := a.Install(values); err != nil {
		a.Close()
		return nil, err
	}
	if err := defaultProject(env.Cluster); err != nil && !strings.Contains(err.Error(), "already exists") {
		a.Close()
		return nil, err
	}
	if err := a.Start(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// RecordLive runs one scenario with its revisions delivered through git and Argo CD, and returns what
// Argo CD showed. Record's own checks (the outcome, the analysis verdict, no refused write) apply.
func RecordLive(env *Env, a *ArgoCD, sc Scenario) (*LiveResult, *Timeline, error) {
	cli, err := cliBinary()
	if err != nil {
		return nil, nil, err
	}
	d := &GitDelivery{Argo: a, CLI: cli}
	sc.Options.Delivery = d
	after := sc.Options.AfterTick
	sc.Options.AfterTick = func(w *World) error {
		if err := d.Refresh(w); err != nil {
			return err
		}
		if after != nil {
			return after(w)
		}
		return nil
	}
	tl, err := Record(env, sc)
	defer d.Finish(nil)
	if err != nil {
		return nil, nil, err
	}
	res := &LiveResult{Scenario: sc.Name, Live: d.RecordedHealth(), Operation: "Running"}
	// the barrier's hook is created once every resource is Healthy, after the last refresh
	if err := d.waitOperation(); err == nil {
		res.Operation = d.Operations[len(d.Operations)-1]
	} else {
		res.OperationMessage = d.operationMessage()
	}
	return res, tl, nil
}

// brokenRules lists the rules a live scenario breaks: the Application Unknown or Missing during the
// release, or the sync with the barrier succeeding for an update the controller aborted.
func brokenRules(sc Scenario, res *LiveResult) []string {
	var out []string
	for _, st := range res.Live {
		if st == "Unknown" || st == "Missing" || st == "" {
			out = append(out, fmt.Sprintf("the Application was %q during the release", st))
		}
	}
	if sc.Outcome == OutcomeAborted && res.Operation == "Succeeded" {
		out = append(out, "the sync with the barrier succeeded for an aborted update")
	}
	return out
}

// RunLive runs LiveScenarios with our scripts and checks them against the replay and the rules.
func RunLive(t *testing.T, env *Env) {
	replay, err := replayHealth()
	if err != nil {
		t.Fatal(err)
	}
	a, err := StartLive(env, true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ours := map[string][]string{}
	for _, name := range LiveScenarios {
		sc, ok := scenarioNamed(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		t.Run(name, func(t *testing.T) {
			res, _, err := RecordLive(env, a, sc)
			if err != nil {
				t.Fatal(err)
			}
			res.Install, res.Replay = "ours", replay[name]
			ours[name] = res.Live
			t.Logf("live %v, replay %v, operation %s %s", res.Live, res.Replay, res.Operation, res.OperationMessage)
			if strings.Join(res.Live, " ") != strings.Join(res.Replay, " ") {
				t.Errorf("live Application health %v, the replay's %v", res.Live, res.Replay)
			}
			for _, b := range brokenRules(sc, res) {
				t.Error(b)
			}
			if sc.Outcome != OutcomeAborted && res.Operation != "Succeeded" {
				t.Errorf("the sync with the barrier ended %s for a promoted update", res.Operation)
			}
		})
	}
	// the same with Argo CD's built-in health checks only (argocd-cm as the chart renders it by default)
	a.Stop()
	if err := a.Install(""); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	broken, differ := 0, 0
	for _, name := range LiveScenarios {
		sc, _ := scenarioNamed(name)
		t.Run("built-in/"+name, func(t *testing.T) {
			res, _, err := RecordLive(env, a, sc)
			if err != nil {
				t.Fatal(err)
			}
			b := brokenRules(sc, res)
			broken += len(b)
			if strings.Join(res.Live, " ") != strings.Join(ours[name], " ") {
				differ++
			}
			t.Logf("built-in: live %v, operation %s, rules broken %v (replay with ours %v)", res.Live, res.Operation, b, replay[name])
		})
	}
	t.Logf("with the built-ins, %d rules broken and %d health sequences other than ours in %d scenarios", broken, differ, len(LiveScenarios))
	// the install is what the comparison is about: argocd-cm from our values must change what Argo CD shows
	if differ == 0 && len(ours) == len(LiveScenarios) {
		t.Errorf("the built-in health checks showed the same health as ours in every scenario: was argocd-cm with our scripts installed?")
	}
}

func scenarioNamed(name string) (Scenario, bool) {
	for _, sc := range Scenarios {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}
