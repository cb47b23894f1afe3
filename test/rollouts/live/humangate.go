// The human gate, live (docs/hooks.md "The human gate"): a release whose analysis passed and that then
// waits where only a person resumes it, delivered through git and Argo CD, promoted by the Kargo driver and
// verified with our plugin, under three installs of Argo CD's health checks.

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	goplugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// The installs the human gate is recorded under: argocd-cm's Rollout health script.
const (
	InstallOurs      = "ours"
	InstallHumanGate = "ours --human-gate healthy"
	InstallBuiltin   = "built-in"
)

// HumanGateScenarios are the releases that pass their analysis and then wait for a person; each is run
// under every install. Their analysis verdict and outcome are Record's checks, as for every scenario.
var HumanGateScenarios = []HumanGateScenario{
	{
		Scenario: harness.Scenario{
			Name: "canary-step-passed-human-gate", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
			Verification: "Successful", Kargo: "Successful",
			Summary: "Step analysis passes; the canary then waits at a pause without duration (steps[3], pause: {}) until a person resumes it.",
		},
		Rollout: func() *v1alpha1.Rollout {
			return harness.CanaryRollout("", harness.SetWeight(25), harness.AnalysisStep("success-rate"), harness.SetWeight(50), harness.Pause(0))
		},
		Gate: func(ro *v1alpha1.Rollout) bool {
			return ro.Status.Phase == v1alpha1.RolloutPhasePaused && ro.Status.CurrentStepIndex != nil && *ro.Status.CurrentStepIndex == 3 &&
				len(ro.Status.PauseConditions) == 1 && ro.Status.PauseConditions[0].Reason == v1alpha1.PauseReasonCanaryPauseStep
		},
		Fixture: "canary_step_analysis_passed_indefinite_pause.yaml",
	},
	{
		Scenario: harness.Scenario{
			Name: "bluegreen-prepromotion-passed-human-gate", Strategy: "blueGreen", Outcome: harness.OutcomePromoted, Verdict: "pre Successful",
			Verification: "Successful", Kargo: "Successful",
			Summary: "Pre-promotion analysis passes; the blue-green Rollout (autoPromotionEnabled: false) then waits until a person resumes it.",
		},
		Rollout: func() *v1alpha1.Rollout {
			ro := harness.BlueGreenRollout("success-rate", "")
			ro.Spec.Strategy.BlueGreen.AutoPromotionEnabled = harness.Ptr(false)
			return ro
		},
		Gate: func(ro *v1alpha1.Rollout) bool {
			return ro.Status.Phase == v1alpha1.RolloutPhasePaused && len(ro.Status.PauseConditions) == 1 &&
				ro.Status.PauseConditions[0].Reason == v1alpha1.PauseReasonBlueGreenPause &&
				ro.Status.BlueGreen.PrePromotionAnalysisRunStatus != nil && ro.Status.BlueGreen.PrePromotionAnalysisRunStatus.Status == v1alpha1.AnalysisPhaseSuccessful
		},
		Fixture: "bluegreen_prepromotion_passed_autopromotion_disabled.yaml",
	},
}

// HumanGateScenario is a release that waits at a human gate, with the Rollout it deploys, the state that is
// the gate, and the fixture of lua/argoproj.io/Rollout/testdata the gate's recorded Rollout is written to.
type HumanGateScenario struct {
	harness.Scenario
	Rollout func() *v1alpha1.Rollout
	Gate    func(*v1alpha1.Rollout) bool
	Fixture string
}

// GateState is what Argo CD and Kargo show at one moment.
type GateState struct {
	// Health is the Application's health (Argo CD); Message the Rollout's health message by the installed
	// script, evaluated in our engine (Argo CD v3 does not persist resource health in the Application).
	Health  string `json:"health"`
	Message string `json:"message"`
	// Operation is the release's sync operation (it has the PostSync barrier), "<phase>: <message>".
	Operation string `json:"operation"`
	// Barrier is the barrier hook's phase in the operation's sync result, or "not created".
	Barrier string `json:"barrier"`
	// Promotion is the release's Promotion phase (Kargo's argocd-update), Stage the Stage's health.
	Promotion string `json:"promotion"`
	Stage     string `json:"stage"`
	// Verification is the phase of the Stage's verification run (our plugin), or "not started", with the
	// plugin's last measurement message; Verified whether the Freight is verified.
	Verification        string `json:"verification"`
	VerificationMessage string `json:"verificationMessage,omitempty"`
	Verified            bool   `json:"verified"`
}

// GateResult is one scenario under one install: at the gate (after Argo CD and Kargo had time to act on
// it), and after the person resumed the Rollout and everything settled.
type GateResult struct {
	Scenario string    `json:"scenario"`
	Install  string    `json:"install"`
	AtGate   GateState `json:"atGate"`
	After    GateState `json:"afterResume"`
	// GateSeconds is how long the gate was held on the real clock before the snapshot, GateMeasurements
	// the phases of the verification's measurements by then (their number varies with the machine).
	GateSeconds      int      `json:"-"`
	GateMeasurements []string `json:"-"`
	// Violations are the Kargo driver's rules broken (tick numbers dropped).
	Violations []string `json:"violations,omitempty"`
	// Kargo is who decided the Promotion, the Stage's health and the verification: Kargo's own
	// controller ("kargo v1.11.2") or the model (package stage).
	Kargo string `json:"kargo"`
}

// HumanGateReport is test/testdata/live/human-gate-<version>.yaml.
type HumanGateReport struct {
	ArgoCD    string       `json:"argocd"`
	Rollouts  string       `json:"rollouts"`
	Scenarios []GateResult `json:"scenarios"`
}

// gateWait is how long, on the real clock, the gate is held before the snapshot, whatever the install:
// Argo CD finishes a sync on its own clock, and with the human gate the barrier, the Promotion and the
// Verification's measurements (every pollInterval, which the World's clock, an hour ahead, makes every
// tick) must have happened by then.
const gateWait = 20 * time.Second

// RunLiveHumanGate records HumanGateScenarios live under our default scripts, with --human-gate healthy
// and with Argo CD's built-in checks, and holds each to what it must show (exactness: the plugin's
// Verification Running until full promotion, whatever the install). With update it writes the report and
// the fixtures; without, the committed report must agree and the committed fixtures must evaluate as the
// recorded gate does.
func RunLiveHumanGate(t *testing.T, env *harness.Env, update bool) {
	bins := kargoverify.PreparePlugin(t)
	defer goplugin.CleanupClients()
	t.Setenv("KUBECONFIG", env.Cluster.Kubeconfig)
	config := map[string]string{"metricProviderPlugins": "- name: " + kargoverify.PluginName + "\n  location: file://" + bins.Plugin + "\n"}
	a, err := installs.NewArgoCD(env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	kargo := startKargoIfAsked(t, env.Cluster)
	if kargo != nil {
		defer kargo.Close()
	}
	report := HumanGateReport{ArgoCD: a.Version, Rollouts: harness.RolloutsVersion()}
	for i, install := range []string{InstallOurs, InstallHumanGate, InstallBuiltin} {
		values, cm, err := installFiles(a.Dir, bins, install)
		if err != nil {
			t.Fatal(err)
		}
		a.Stop()
		if err := a.Install(values); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := defaultProject(env.Cluster); err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatal(err)
			}
		}
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		for _, hg := range HumanGateScenarios {
			t.Run(install+"/"+hg.Name, func(t *testing.T) {
				t.Chdir(t.TempDir()) // DownloadPlugins writes plugin-bin/ below the working directory
				res, gate, err := recordHumanGate(env, a, kargo, hg, bins, config, cm)
				if err != nil {
					t.Fatal(err)
				}
				res.Install = install
				report.Scenarios = append(report.Scenarios, *res)
				t.Logf("at the gate (held %d s, verification measurements %v): %+v; after the resume: %+v; rules broken %v",
					res.GateSeconds, res.GateMeasurements, res.AtGate, res.After, res.Violations)
				for _, p := range gateProblems(install, res) {
					t.Error(p)
				}
				if install == InstallOurs {
					checkGateFixture(t, bins, hg, gate, update)
				}
			})
		}
	}
	if t.Failed() {
		return
	}
	path := filepath.Join(cluster.TestdataDir(), "live", "human-gate-"+harness.RolloutsVersion()+".yaml")
	writeOrCompare(t, path, "Written by test/rollouts/live RunLiveHumanGate (make e2e-live UPDATE=1) from Argo CD "+report.ArgoCD+" and the Rollouts controllers",
		report, func(r HumanGateReport) HumanGateReport { return r }, update)
}

// installFiles are the chart values that install an argocd-cm (empty: the chart's defaults, the
// built-ins) and the argocd-cm the Rollout's health message is evaluated with.
func installFiles(dir string, bins kargoverify.PluginBinaries, install string) (values, cm string, err error) {
	var extra []string
	switch install {
	case InstallBuiltin:
		return "", bins.BuiltinCM, nil
	case InstallHumanGate:
		extra = []string{"--human-gate", "healthy"}
	}
	name := strings.NewReplacer(" ", "", "-", "").Replace(install)
	values, cm = filepath.Join(dir, "values-"+name+".yaml"), filepath.Join(dir, "patch-"+name+".yaml")
	for _, f := range []struct{ format, out string }{{"helm", values}, {"patch", cm}} {
		args := append([]string{"generate", "--format", f.format, "--out", f.out}, extra...)
		if out, err := exec.Command(bins.CLI, args...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("analysis-health %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return values, cm, nil
}

// recordHumanGate is RecordLive for a human gate: the release is played until the gate, held there for
// gateWait, noted;
// then the person resumes the Rollout through Argo CD's resume action, the scenario settles, and the end is
// noted. It returns the normalised Rollout at the gate as well.
func recordHumanGate(env *harness.Env, a *installs.ArgoCD, kargo *installs.Kargo, hg HumanGateScenario, bins kargoverify.PluginBinaries, config map[string]string, cm string) (*GateResult, map[string]any, error) {
	d := &GitDelivery{Argo: a, CLI: bins.CLI}
	k := &kargoDriver{d: d, bins: bins, program: kargo}
	d.kargo = k
	sc := hg.Scenario
	sc.Options.Delivery = d
	sc.Options.RolloutsConfig = config
	sc.Options.Epoch = time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	sc.Options.AfterTick = func(w *harness.World) error {
		if err := d.Refresh(w); err != nil {
			return err
		}
		return k.observe(w)
	}
	res := &GateResult{Scenario: hg.Name}
	var gate map[string]any
	var snapErr error
	sc.Play = func(s *harness.S) {
		s.Answers("success-rate", harness.OK(0.99)) // success-rate passes
		s.Deploy(hg.Rollout())
		s.Release()
		s.Until("at the human gate", 40, hg.Gate)
		held := time.Now()
		for time.Since(held) < gateWait {
			s.Tick(nil)
			if !hg.Gate(s.World.Rollout()) {
				s.Fail("the Rollout left the gate on its own: phase %s %q", s.World.Rollout().Status.Phase, s.World.Rollout().Status.Message)
			}
		}
		res.GateSeconds = int(time.Since(held).Seconds())
		if ar, err := k.VerificationRun(s.World); err != nil {
			s.Fail("%v", err)
		} else if ar != nil {
			for _, mr := range ar.Status.MetricResults {
				for _, m := range mr.Measurements {
					res.GateMeasurements = append(res.GateMeasurements, string(m.Phase))
				}
			}
		}
		if frames := s.World.Frames(); len(frames) > 0 {
			gate = frames[len(frames)-1].Rollout
		}
		res.AtGate, snapErr = snapshot(s.World, k, bins, cm)
		s.Must(snapErr)
		s.Tick(s.Resume)
		s.Settle()
		k.settle(s)
		res.After, snapErr = snapshot(s.World, k, bins, cm)
		s.Must(snapErr)
	}
	_, err := harness.Record(env, sc)
	d.Finish(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", hg.Name, err)
	}
	res.Kargo = k.decidedBy()
	tick := regexp.MustCompile(`^tick \d+: `)
	for _, v := range k.violations {
		res.Violations = append(res.Violations, tick.ReplaceAllString(v, ""))
	}
	return res, gate, nil
}

// snapshot reads what Argo CD and the Kargo driver show now.
func snapshot(w *harness.World, k *kargoDriver, bins kargoverify.PluginBinaries, cm string) (GateState, error) {
	var g GateState
	app, err := k.d.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Get(context.Background(), k.d.app, metav1.GetOptions{})
	if err != nil {
		return g, err
	}
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(app.Object, path...); return s }
	g.Health = str("status", "health", "status")
	g.Operation = str("status", "operationState", "phase") + ": " + str("status", "operationState", "message")
	// the release's operation: Kargo's names the Promotion in its info and no revision (argocd_updater.go
	// syncApplication), the model's names the revision
	rev := str("status", "operationState", "operation", "sync", "revision")
	if rev != k.release.desired && k.applicationOf(app).OperationInfo[stage.PromotionInfoKey] != k.release.name {
		g.Operation = "another operation's (revision " + rev + ")"
	}
	g.Barrier = "not created"
	results, _, _ := unstructured.NestedSlice(app.Object, "status", "operationState", "syncResult", "resources")
	for _, r := range results {
		m, _ := r.(map[string]any)
		if m["kind"] == "ConfigMap" && m["hookType"] == "PostSync" && strings.HasPrefix(fmt.Sprint(m["name"]), "analysis-health-barrier-") {
			g.Barrier = fmt.Sprint(m["hookPhase"])
		}
	}
	if g.Message, err = healthMessage(bins, w.Rollout(), cm); err != nil {
		return g, err
	}
	g.Promotion, g.Stage, g.Verified = k.release.phase, k.finalStage(), k.verified()
	g.Verification = kargoverify.NotStarted
	ar, err := k.VerificationRun(w)
	if err != nil {
		return g, err
	}
	if ar != nil {
		g.Verification = k.freight.Phase
		if k.real != nil {
			g.Verification = k.state.Verification
		}
		if mrs := ar.Status.MetricResults; len(mrs) > 0 && len(mrs[0].Measurements) > 0 {
			g.VerificationMessage = mrs[0].Measurements[len(mrs[0].Measurements)-1].Message
		}
	}
	return g, nil
}

// healthMessage is the Rollout's health by the argocd-cm cm, "<status>: <message>", in our engine (the
// same VM rules as Argo CD's, test/suite).
func healthMessage(bins kargoverify.PluginBinaries, ro *v1alpha1.Rollout, cm string) (string, error) {
	ro = ro.DeepCopy()
	ro.APIVersion, ro.Kind = "argoproj.io/v1alpha1", "Rollout"
	raw, err := json.Marshal(ro)
	if err != nil {
		return "", err
	}
	// --open-libs: cm is this test's own install, evaluated as Argo CD evaluates it.
	cmd := exec.Command(bins.CLI, "health", "-f", "-", "-o", "json", "--argocd-cm", cm, "--open-libs")
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("analysis-health health: %v: %s", err, stderr.String())
	}
	var rows []struct{ Status, Message string }
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return "", fmt.Errorf("analysis-health health: %q (%v)", out, err)
	}
	return rows[0].Status + ": " + rows[0].Message, nil
}

// gateProblems is what each install must show. At the gate, with our default scripts and the built-ins,
// the sync and the Promotion wait and Kargo has nothing to verify; with the human gate they complete, the
// message says so, and the plugin's verification runs, saying the same, without verifying the Freight. After
// the person resumes, every install ends with the revision promoted and the Freight verified. The one
// rule the human gate breaks by design is the Promotion's succeeding before full promotion; no install may
// verify the Freight before its analysis passed and it was fully promoted.
func gateProblems(install string, r *GateResult) []string {
	var out []string
	want := func(what, got, w string) {
		if got != w {
			out = append(out, fmt.Sprintf("%s %q, want %q", what, got, w))
		}
	}
	g := r.AtGate
	if install == InstallHumanGate {
		want("at the gate: health", g.Health, "Healthy")
		if !strings.HasPrefix(g.Message, "Healthy: "+lua.HumanGateMessage+" (") {
			out = append(out, fmt.Sprintf("at the gate: message %q does not say %q", g.Message, lua.HumanGateMessage))
		}
		want("at the gate: operation phase", strings.SplitN(g.Operation, ":", 2)[0], "Succeeded")
		want("at the gate: barrier", g.Barrier, "Succeeded")
		want("at the gate: Promotion", g.Promotion, stage.PromotionSucceeded)
		want("at the gate: Stage", g.Stage, string(stage.Healthy))
		want("at the gate: verification", g.Verification, "Running")
		if !strings.Contains(g.VerificationMessage, lua.HumanGateMessage) {
			out = append(out, fmt.Sprintf("at the gate: verification message %q does not say %q", g.VerificationMessage, lua.HumanGateMessage))
		}
		// the controller resumes a Running measurement in place (analysis/analysis.go), so one measurement
		// stands for every time the plugin was asked while the person decided
		running := len(r.GateMeasurements) >= 1
		for _, m := range r.GateMeasurements {
			running = running && m == "Running"
		}
		if !running {
			out = append(out, fmt.Sprintf("at the gate: the verification's measurements %v, want Running", r.GateMeasurements))
		}
	} else {
		want("at the gate: health", g.Health, "Suspended")
		want("at the gate: operation phase", strings.SplitN(g.Operation, ":", 2)[0], "Running")
		want("at the gate: barrier", g.Barrier, "not created")
		want("at the gate: Promotion", g.Promotion, stage.PromotionRunning)
		want("at the gate: verification", g.Verification, kargoverify.NotStarted)
	}
	if g.Verified {
		out = append(out, "at the gate: the Freight is verified before full promotion")
	}
	a := r.After
	want("after the resume: health", a.Health, "Healthy")
	want("after the resume: operation phase", strings.SplitN(a.Operation, ":", 2)[0], "Succeeded")
	want("after the resume: Promotion", a.Promotion, stage.PromotionSucceeded)
	want("after the resume: Stage", a.Stage, string(stage.Healthy))
	want("after the resume: verification", a.Verification, "Successful")
	if !a.Verified {
		out = append(out, "after the resume: the Freight is not verified")
	}
	for _, v := range r.Violations {
		if install == InstallHumanGate && strings.HasPrefix(v, "the Promotion Succeeded while the release of revision ") {
			continue
		}
		out = append(out, "rule broken: "+v)
	}
	if install == InstallHumanGate && len(r.Violations) == 0 {
		out = append(out, "the Promotion's succeeding before full promotion was not seen: the gate was not open")
	}
	return out
}

// checkGateFixture writes (update) or checks the fixture recorded at the gate: the committed fixture must
// evaluate, with the default scripts and with --human-gate healthy, as the Rollout the controller wrote
// at the gate of this run.
func checkGateFixture(t *testing.T, bins kargoverify.PluginBinaries, hg HumanGateScenario, gate map[string]any, update bool) {
	t.Helper()
	if gate == nil {
		t.Fatal("no frame recorded at the gate")
	}
	path := filepath.Join(cluster.RepoRoot(), "lua", "argoproj.io", "Rollout", "testdata", hg.Fixture)
	if update {
		raw, err := yaml.Marshal(gate)
		if err != nil {
			t.Fatal(err)
		}
		head := fmt.Sprintf("# Recorded from Argo Rollouts %s's controllers by test/rollouts/live RunLiveHumanGate, scenario %s\n"+
			"# (make e2e-live UPDATE=1): the Rollout as stored at the human gate. %s\n", harness.RolloutsVersion(), hg.Name, hg.Summary)
		if err := os.WriteFile(path, append([]byte(head), raw...), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with make e2e-live UPDATE=1)", err)
	}
	var fixture v1alpha1.Rollout
	if err := yaml.Unmarshal(committed, &fixture); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	raw, _ := json.Marshal(gate)
	var live v1alpha1.Rollout
	if err := json.Unmarshal(raw, &live); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, install := range []string{InstallOurs, InstallHumanGate} {
		_, cm, err := installFiles(dir, bins, install)
		if err != nil {
			t.Fatal(err)
		}
		f, err := healthMessage(bins, &fixture, cm)
		if err != nil {
			t.Fatal(err)
		}
		l, err := healthMessage(bins, &live, cm)
		if err != nil {
			t.Fatal(err)
		}
		if f != l {
			t.Errorf("%s with %s: %s, but the Rollout at the gate of this run: %s (regenerate with make e2e-live UPDATE=1)", path, install, f, l)
		}
	}
}
