// Package live is the live suite (`make e2e-live`): the scenarios delivered from git by Argo CD's own
// application controller and repo-server, promoted and verified by Kargo's own controller, beside the
// version's Rollouts controllers (RunLive); the human gate (RunLiveHumanGate); and what Kargo's own UI
// shows of it in a real browser.
package live

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/notifications"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// LiveResult is one scenario run live.
type LiveResult struct {
	Scenario string `json:"scenario"`
	// Install is "ours" (argocd-cm with our scripts) or "built-in".
	Install string `json:"install"`
	// Health is the Application's health from the release on, collapsed to changes, as the watch saw it.
	Health []string `json:"health"`
	// Replay is the same from the committed Rollout health of the replay, collapsed (ours only).
	Replay []string `json:"replay,omitempty"`
	// Operation is the phase the release's sync operation (with the PostSync barrier) ended in, or
	// "Running" if it had not ended when the scenario did.
	Operation string `json:"operation"`
	// Promotion, PromotionMessage: the release's Promotion as Kargo's argocd-update leaves it.
	Promotion        string `json:"promotion"`
	PromotionMessage string `json:"promotionMessage,omitempty"`
	// PromotionSeconds is how long the Promotion ran on the World's clock, the Rollouts controllers'
	// (Kargo's timeout runs on the real clock, on which a live scenario takes seconds).
	PromotionSeconds int `json:"promotionSeconds"`
	// Stage is the Stage's health, collapsed to changes, from the release on; StageMessage its last issue.
	Stage        []string `json:"stage"`
	StageMessage string   `json:"stageMessage,omitempty"`
	// Verification is the released Freight's verification run's phases, collapsed, or "not started";
	// Verified whether that Freight is verified.
	Verification []string `json:"verification"`
	Verified     bool     `json:"verified"`
	// VerificationMessage is the last measurement message of the Stage's verification run at the end
	// (our plugin's, naming the Rollout's runs or the no-analysis case), or "".
	VerificationMessage string `json:"verificationMessage,omitempty"`
	// Rollback and RollbackVerification: the Promotion of the previous Freight, when the scenario syncs
	// it back, and its verification's phases.
	Rollback             string   `json:"rollback,omitempty"`
	RollbackVerification []string `json:"rollbackVerification,omitempty"`
	// Violations are the rules Kargo's verdict broke against the analysis verdict.
	Violations []string `json:"violations,omitempty"`
	// Kargo is who decided Promotion, Stage, Verification and Verified: Kargo's own controller
	// ("kargo v1.11.2") or the model (package stage).
	Kargo string `json:"kargo,omitempty"`
	// KargoFrames are, tick by tick, what Kargo's controller wrote (the Promotion's phase, the Stage's
	// status.health, the current Freight's verification and the Freight's status.verifiedIn) beside what
	// the model decides on the same Application and run; ModelDiffs the ticks where they differ.
	KargoFrames []KargoFrame `json:"kargoFrames,omitempty"`
	ModelDiffs  []string     `json:"modelDiffs,omitempty"`
	// KargoUI is what Kargo's own UI showed of the Stage's newest verification after both passes
	// (TestLive's kargo-ui subtest, kargoui.go), for kargoUIScenarios.
	KargoUI *KargoUIRecord `json:"kargoUI,omitempty"`
	// KargoProject is the scenario's Kargo Project (its namespace, which outlives the scenario) and
	// KargoFinal what Kargo's controller last wrote there, for the browser proof (live_kargoui.go);
	// with Kargo's own controller only, and not in the report.
	KargoProject string     `json:"-"`
	KargoFinal   KargoState `json:"-"`
	// Frames are the Application's distinct states (notifications.Trim), for the notifications proofs
	// (test/testdata/live/<version>-applications.yaml; not in the report).
	Frames []notifications.Frame `json:"-"`
}

func (r *LiveResult) finalVerification() string {
	if len(r.Verification) == 0 {
		return kargoverify.NotStarted
	}
	return harness.Last(r.Verification)
}

func (r *LiveResult) finalStage() string {
	if len(r.Stage) == 0 {
		return ""
	}
	return r.Stage[len(r.Stage)-1]
}

// replayHealth reads the committed per-frame Rollout health of this build's Rollouts version and
// collapses each scenario's statuses to changes. The Rollout is the Application's only managed resource
// with a health other than Healthy (the Services are ClusterIP: Healthy; AnalysisTemplates and the
// barrier ConfigMap have none), so it is the Application's health.
func replayHealth() (map[string][]string, error) {
	path := filepath.Join(cluster.TestdataDir(), "argocd-v2.14-rollout-health.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var all map[string]map[string][]string
	if err := yaml.UnmarshalStrict(raw, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string][]string{}
	for name, frames := range all[harness.RolloutsVersion()] {
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
		return nil, fmt.Errorf("%s has no frames for %s", path, harness.RolloutsVersion())
	}
	return out, nil
}

// defaultProject is the AppProject "default" that argocd-server creates at its start
// (server/server.go initializeDefaultProject), which the live suite does not run.
func defaultProject(c *cluster.Cluster) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	proj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": cluster.ArgoCDNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	_, err = dyn.Resource(gvr).Namespace(cluster.ArgoCDNamespace).Create(context.Background(), proj, metav1.CreateOptions{})
	return err
}

// StartLive installs Argo CD on cluster c (CRDs, argocd-cm and the other ConfigMaps from the
// chart: with our generated values when ours, generate --format helm and generate --format notifications,
// whose argocd-cmd-params-cm makes the controller keep each resource's health in the Application; else the
// chart's defaults) and starts it; before, in the two-cluster suite, it registers the workload cluster.
func StartLive(c *cluster.Cluster, ours bool, wc *workloadCluster) (*installs.ArgoCD, error) {
	a, err := installs.NewArgoCD(c)
	if err != nil {
		return nil, err
	}
	var values []string
	if ours {
		cli, err := harness.CLIBinary()
		if err != nil {
			return nil, err
		}
		helm, notify := filepath.Join(a.Dir, "values.yaml"), filepath.Join(a.Dir, "notifications")
		if out, err := exec.Command(cli, "generate", "--format", "helm", "--out", helm).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("analysis-health generate --format helm: %v\n%s", err, out)
		}
		if out, err := exec.Command(cli, "generate", "--format", "notifications", "--out", notify).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("analysis-health generate --format notifications: %v\n%s", err, out)
		}
		values = []string{helm, filepath.Join(notify, "values.yaml")}
	}
	if err := a.Install(values...); err != nil {
		a.Close()
		return nil, err
	}
	if err := defaultProject(c); err != nil && !strings.Contains(err.Error(), "already exists") {
		a.Close()
		return nil, err
	}
	if wc != nil {
		if err := wc.register(a); err != nil {
			a.Close()
			return nil, err
		}
	}
	if err := a.Start(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// RecordLive runs one scenario with its revisions delivered through git and Argo CD, its release promoted
// by the Kargo driver and verified with our plugin (config: argo-rollouts-config loading it), and returns
// what Argo CD and Kargo showed. Record's own checks (the outcome, the analysis verdict, no refused write)
// apply.
//
// verify: the Stage's spec.verification is our generated one (analysis-health installed); without, the
// Stage has none and Kargo verifies the Freight on the Stage's health alone (Kargo without analysis-health).
//
// two, in the two-cluster suite, is the workload cluster and what runs after each tick (nil: one cluster).
func RecordLive(env *harness.Env, a *installs.ArgoCD, kargo *installs.Kargo, sc harness.Scenario, bins kargoverify.PluginBinaries, config map[string]string, verify bool, two *twoClusterRun) (*LiveResult, error) {
	d := &GitDelivery{Argo: a, CLI: bins.CLI}
	if two != nil {
		d.workload = two.workload
	}
	k := &kargoDriver{d: d, bins: bins, program: kargo, healthOnly: !verify}
	k.freight = k.newFreight()
	d.kargo = k
	sc.Options.Delivery = d
	sc.Options.RolloutsConfig = config
	// the plugin runs on the real clock (its resumeAt is real time + pollInterval): the World's clock
	// starts an hour ahead of it, as in the plugin proof
	sc.Options.Epoch = time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	after := sc.Options.AfterTick
	sc.Options.AfterTick = func(w *harness.World) error {
		if err := d.Refresh(w); err != nil {
			return err
		}
		if err := k.observe(w); err != nil {
			return err
		}
		if two != nil && two.afterTick != nil {
			if err := two.afterTick(w, k); err != nil {
				return err
			}
		}
		if after != nil {
			return after(w)
		}
		return nil
	}
	play := sc.Play
	var message string
	sc.Play = func(s *harness.S) {
		play(s)
		k.settle(s)
		var err error
		message, err = k.lastMessage(s.World)
		s.Must(err)
	}
	_, err := harness.Record(env, sc)
	defer d.Finish(nil)
	if err != nil {
		return nil, err
	}
	if k.release == nil {
		return nil, fmt.Errorf("%s: the release was never promoted", sc.Name)
	}
	started := func(v []string) []string {
		if len(v) == 0 {
			return []string{kargoverify.NotStarted}
		}
		return v
	}
	res := &LiveResult{Scenario: sc.Name, Health: d.RecordedHealth(), Operation: "Running",
		Promotion: k.release.phase, PromotionMessage: k.release.message, PromotionSeconds: int(k.release.worldDuration.Seconds()),
		Stage: k.stageHealth, StageMessage: k.stageMessage, Verification: started(k.verification), Verified: k.verified(),
		Violations: k.violations, Frames: d.AppFrames(), Kargo: k.decidedBy(), VerificationMessage: message}
	if k.real != nil {
		res.KargoFrames, res.ModelDiffs = k.frames, modelDiffs(k.frames)
		res.KargoProject, res.KargoFinal = k.real.ns, k.state
	}
	if k.rollback != nil {
		// the release's Freight was replaced: its verification and verified are the ones kept at the
		// rollback; the Stage's verification at the end is the previous Freight's
		res.Rollback, res.RollbackVerification = k.rollback.phase, res.Verification
		res.Verification, res.Verified = started(k.releaseVerification), k.releaseVerified
	}
	if err := d.waitOperation(); err == nil {
		res.Operation = d.Operations[len(d.Operations)-1]
	}
	return res, nil
}

// brokenRules lists the rules a live scenario breaks: the Application Unknown or Missing during the
// release, the sync with the barrier succeeding for an update the controller aborted, and Kargo's verdict
// against the analysis verdict (the driver's violations).
func brokenRules(sc harness.Scenario, res *LiveResult) []string {
	var out []string
	for _, st := range res.Health {
		if st == "Unknown" || st == "Missing" || st == "" {
			out = append(out, fmt.Sprintf("the Application was %q during the release", st))
		}
	}
	if sc.Outcome == harness.OutcomeAborted && res.Operation == "Succeeded" {
		out = append(out, "the sync with the barrier succeeded for an aborted update")
	}
	return append(out, res.Violations...)
}

// LiveReport is test/testdata/live/<version>.yaml, which docs/why.md "Live" renders (e2e TestLiveDoc).
type LiveReport struct {
	ArgoCD    string         `json:"argocd"`
	Rollouts  string         `json:"rollouts"`
	Scenarios []LiveResult   `json:"scenarios"`
	Declared  []LiveScenario `json:"declared"`
	// BuiltinBroken counts the rules broken with Argo CD's built-in health checks.
	BuiltinBroken int `json:"builtinBroken"`
}

// stable is the report without what varies from run to run with the machine's speed, because Argo CD
// finishes a sync on its own clock while the controllers wait between ticks: how many ticks the Promotion
// took on the World's clock, the Stage's and the verification's transient states, the messages, what
// Kargo's UI showed (dates, durations, Kargo's names of the runs), and the rules broken (at which tick a
// sync ends decides whether a run had ended by then; each run asserts what it requires of them instead:
// none with ours, some with the built-ins).
func (r LiveReport) stable() LiveReport {
	out := r
	out.Scenarios, out.BuiltinBroken = nil, 0
	for _, s := range r.Scenarios {
		s.PromotionSeconds, s.StageMessage, s.PromotionMessage, s.Violations, s.VerificationMessage = 0, "", "", nil, ""
		s.KargoFrames, s.ModelDiffs, s.Kargo, s.KargoUI = nil, nil, "", nil
		s.Stage = []string{s.finalStage()}
		s.Verification = []string{s.finalVerification()}
		if len(s.RollbackVerification) > 0 {
			s.RollbackVerification = []string{harness.Last(s.RollbackVerification)}
		}
		out.Scenarios = append(out.Scenarios, s)
	}
	return out
}

// RunLive runs LiveScenarios with our scripts, checks them against what they declare, the replay and the
// rules, then runs them with Argo CD's built-in health checks, which must break a rule somewhere. With
// update it writes the report (../testdata/live/<version>.yaml); without, the committed report must
// agree with this run (but for what stable leaves out).
func RunLive(t *testing.T, env *harness.Env, cat harness.Catalogue, update bool) {
	replay, err := replayHealth()
	if err != nil {
		t.Fatal(err)
	}
	bins := kargoverify.PreparePlugin(t)
	defer goplugin.CleanupClients()
	t.Setenv("KUBECONFIG", env.Cluster.Kubeconfig)
	config := map[string]string{"metricProviderPlugins": "- name: " + kargoverify.PluginName + "\n  location: file://" + bins.Plugin + "\n"}
	a, err := StartLive(env.Cluster, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	kargo := startKargoIfAsked(t, env.Cluster)
	if kargo != nil {
		defer kargo.Close()
	}
	// generate --format notifications sets controller.resource.health.persist, which Argo CD v3 needs for
	// a trigger to read a resource's health in the Application (notifications.Trim)
	if !a.PersistResourceHealth {
		t.Fatal("the application controller runs without --persist-resource-health: did the chart render generate --format notifications' argocd-cmd-params-cm?")
	}
	report := LiveReport{ArgoCD: a.Version, Rollouts: harness.RolloutsVersion(), Declared: declared(cat)}
	apps := &notifications.Recording{ArgoCD: a.Version, Rollouts: harness.RolloutsVersion(), PersistResourceHealth: a.PersistResourceHealth}
	ours := map[string][]string{}
	scenarios := report.Declared
	// E2E_LIVE_SCENARIOS (comma-separated names) runs only those, for a contributor's look at one
	// scenario: the report is then neither written nor compared
	if only := os.Getenv("E2E_LIVE_SCENARIOS"); only != "" {
		scenarios = nil
		for _, sc := range report.Declared {
			if strings.Contains(","+only+",", ","+sc.Name+",") {
				scenarios = append(scenarios, sc)
			}
		}
	}
	for _, want := range scenarios {
		sc, ok := cat.Named(want.Name)
		if !ok {
			t.Fatalf("no scenario %s", want.Name)
		}
		t.Run(want.Name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // DownloadPlugins writes plugin-bin/ below the working directory
			res, err := RecordLive(env, a, kargo, sc, bins, config, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Install, res.Replay = "ours", replay[want.Name]
			ours[want.Name] = res.Health
			apps.Scenarios = append(apps.Scenarios, notifications.Scenario{Name: want.Name, NoAnalysis: want.Case, Frames: res.Frames})
			if _, rollout := apps.Scenarios[len(apps.Scenarios)-1].Stable(); len(rollout) == 0 || strings.HasPrefix(rollout[0], "(") {
				t.Errorf("the Application's status.resources holds no health of the Rollout at the release: %v", rollout)
			}
			report.Scenarios = append(report.Scenarios, *res)
			t.Logf("health %v (replay %v); operation %s; Promotion %s %s after %d s; Stage %v %s; verification %v, verified %v",
				res.Health, res.Replay, res.Operation, res.Promotion, res.PromotionMessage, res.PromotionSeconds, res.Stage, res.StageMessage, res.Verification, res.Verified)
			if got, w := strings.Join(res.Health, " "), strings.Join(want.Health, " "); got != w {
				t.Errorf("live Application health %v, the scenario declares %v", res.Health, want.Health)
			}
			switch {
			case want.Case != "":
				// no replay: the verification names the case, and the default policy (docs/kargo.md, "No
				// analysis"), from what the analysis controller stored of our plugin's measurement
				for _, part := range []string{"no analysis ran for it: " + want.Case + " (", "noAnalysis: successful, the default"} {
					if !strings.Contains(res.VerificationMessage, part) {
						t.Errorf("the verification's last message %q does not say %q", res.VerificationMessage, part)
					}
				}
			default:
				if got, w := strings.Join(res.Replay, " "), strings.Join(want.Health, " "); got != w {
					t.Errorf("the replay's Application health %v, the scenario declares %v", res.Replay, want.Health)
				}
			}
			for _, b := range brokenRules(sc, res) {
				t.Error(b)
			}
			if res.Promotion != want.Promotion || res.finalStage() != want.Stage || res.finalVerification() != want.Verification || res.Verified != want.Verified {
				t.Errorf("Promotion %s, Stage %s, verification %s, verified %v; the scenario declares %s, %s, %s, %v",
					res.Promotion, res.finalStage(), res.finalVerification(), res.Verified, want.Promotion, want.Stage, want.Verification, want.Verified)
			}
			if res.Rollback != want.Rollback || harness.Last(res.RollbackVerification) != want.RollbackVerification {
				t.Errorf("rollback Promotion %q, its verification %v; the scenario declares %q, %q", res.Rollback, res.RollbackVerification, want.Rollback, want.RollbackVerification)
			}
			// the verification after a Succeeded Promotion ends as the plugin proof's in Kargo's order
			// (which verifies the Freight the Stage then runs: after a rollback, the previous one)
			switch {
			case res.Rollback == "Succeeded" && harness.Last(res.RollbackVerification) != sc.Kargo:
				t.Errorf("rollback verification %v, the plugin proof's in Kargo's order %s", res.RollbackVerification, sc.Kargo)
			case res.Rollback == "" && res.Promotion == "Succeeded" && res.finalVerification() != sc.Kargo:
				t.Errorf("verification %s, the plugin proof's in Kargo's order %s", res.finalVerification(), sc.Kargo)
			}
		})
	}
	// the same without analysis-health: Argo CD's built-in health checks only (argocd-cm as the chart
	// renders it by default), and a Stage without spec.verification, so that Kargo verifies the Freight on
	// the Stage's health alone, as it does when nothing reports the analysis to it
	a.Stop()
	if err := a.Install(); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if a.PersistResourceHealth {
		t.Errorf("with the chart's defaults, Argo CD %s's controller persists resource health: it should not (its default is false)", a.Version)
	}
	differ := 0
	for _, want := range scenarios {
		sc, _ := cat.Named(want.Name)
		t.Run("built-in/"+want.Name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			res, err := RecordLive(env, a, kargo, sc, bins, config, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Install = "built-in"
			b := brokenRules(sc, res)
			report.BuiltinBroken += len(b)
			res.Violations = b
			report.Scenarios = append(report.Scenarios, *res)
			if strings.Join(res.Health, " ") != strings.Join(ours[want.Name], " ") {
				differ++
			}
			t.Logf("built-in: health %v, Promotion %s, Stage %v, verification %v, verified %v; rules broken %v", res.Health, res.Promotion, res.Stage, res.Verification, res.Verified, b)
		})
	}
	// what a Kargo user sees of those Stages: Kargo's own UI, in a browser (live_kargoui.go)
	if kargo != nil {
		t.Run("kargo-ui", func(t *testing.T) { runKargoUI(t, env, scenarios, report.Scenarios, update) })
	}
	t.Logf("with the built-ins, %d rules broken and %d health sequences other than ours in %d scenarios", report.BuiltinBroken, differ, len(LiveScenarios))
	if len(scenarios) != len(LiveScenarios) {
		raw, _ := yaml.Marshal(report)
		t.Logf("E2E_LIVE_SCENARIOS: the report of %d scenarios is neither written nor compared:\n%s", len(scenarios), raw)
		return
	}
	if t.Failed() {
		return
	}
	// the install is what the comparison is about, and the checks must be able to fail: with health
	// checks that ignore the analysis, Argo CD must show something else than with ours, or break a rule.
	// (Behind the barrier, Kargo's Promotion gate hides most of what the built-ins get wrong: the replay
	// shows it frame by frame.)
	if differ == 0 && report.BuiltinBroken == 0 {
		t.Errorf("Argo CD's built-in health checks showed what ours show and broke no rule in %d scenarios: was argocd-cm with our scripts installed?", len(LiveScenarios))
	}
	writeOrCompare(t, filepath.Join(cluster.TestdataDir(), "live", harness.RolloutsVersion()+".yaml"),
		"Written by test/rollouts/live RunLive (make e2e-live UPDATE=1) from Argo CD "+report.ArgoCD+" and the Rollouts controllers", report, LiveReport.stable, update)
	writeOrCompareApplications(t, notifications.File(cluster.TestdataDir(), harness.RolloutsVersion()), apps, update)
}

// writeOrCompareApplications writes the recording of the Applications (update), or compares this run's
// with the committed one: per scenario, what notifications.Scenario.Stable keeps.
func writeOrCompareApplications(t *testing.T, path string, rec *notifications.Recording, update bool) {
	if update {
		raw, err := rec.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := notifications.Load(path)
	if err != nil {
		t.Fatalf("%v (write it with make e2e-live UPDATE=1)", err)
	}
	stable := func(r *notifications.Recording) string {
		var b strings.Builder
		fmt.Fprintf(&b, "argocd %s, rollouts %s, persistResourceHealth %v\n", r.ArgoCD, r.Rollouts, r.PersistResourceHealth)
		for _, s := range r.Scenarios {
			app, rollout := s.Stable()
			fmt.Fprintf(&b, "%s\n  application: %s\n  rollout: %s\n", s.Name, strings.Join(app, " | "), strings.Join(rollout, " | "))
		}
		return b.String()
	}
	if a, b := stable(old), stable(rec); a != b {
		t.Errorf("%s differs from this run; regenerate with make e2e-live UPDATE=1 and review the diff\ncommitted:\n%s\nnow:\n%s", path, a, b)
	}
}

// writeOrCompare writes a live report, header first (update), or compares the committed one with this
// run's, both through stable (which leaves out what varies from run to run).
func writeOrCompare[R any](t *testing.T, path, header string, report R, stable func(R) R, update bool) {
	t.Helper()
	raw, err := yaml.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	raw = append([]byte("# "+header+"; do not edit.\n"), raw...)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with make e2e-live UPDATE=1)", err)
	}
	var old R
	if err := yaml.UnmarshalStrict(committed, &old); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	a, _ := yaml.Marshal(stable(old))
	b, _ := yaml.Marshal(stable(report))
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from this run; regenerate with make e2e-live UPDATE=1 and review the diff\ncommitted:\n%s\nnow:\n%s", path, a, b)
	}
}

// startKargoIfAsked starts Kargo's own controller and webhooks (StartKargo) unless E2E_LIVE_KARGO=0
// asks for the model alone. Kargo needs its chart (the CRDs) and nested modules in the upstream tree
// (make upstream): without them the live suite skips, with one line in the skip log naming what is missing
// and the command (make check-no-skips fails on it).
func startKargoIfAsked(t *testing.T, c *cluster.Cluster) *installs.Kargo {
	t.Helper()
	if os.Getenv("E2E_LIVE_KARGO") == "0" {
		return nil
	}
	upstream.Vendored(t, installs.KargoChartCRDs)
	upstream.Vendored(t, "kargo/"+installs.KargoVersion+"/api/go.mod")
	k, err := StartKargo(c)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// StartKargo installs Kargo's CRDs and starts its webhooks server and controller on cluster c.
func StartKargo(c *cluster.Cluster) (*installs.Kargo, error) {
	k, err := installs.NewKargo(c)
	if err != nil {
		return nil, err
	}
	if err := k.Install(); err != nil {
		k.Close()
		return nil, err
	}
	if err := k.Start(); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}
