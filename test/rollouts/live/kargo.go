package live

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// kargoDriver is Kargo's side of the live suite. With Kargo's own controller (real, TestLive) the release
// is a Promotion of Freight that Kargo's webhooks name and give the Stage's argocd-update step, and
// Kargo v1.11.2's controller runs it, assesses the Stage from the Application, creates the verification
// Run of our generated `generate --format kargo` template (judged by the real analysis controller with
// our plugin) and verifies the Freight; after every tick the driver asks Kargo to reconcile
// (kargo.akuity.io/refresh) and records what it wrote, beside what the model (package stage, the replay's
// rules) decides on the same Application and run: Kargo's status is the ground truth, the model is held
// to it (KargoFrame, modelDiffs).
//
// Without it (the human gate, TestLiveHumanGate), the model acts as Kargo, only through the API server:
// it patches the Application's target revision and operation (GitDelivery.argocdUpdate), waits on
// status.operationState, and creates the verification run itself in the Rollout's namespace at the
// first Healthy assessment. What that leaves out: Kargo clears status.operationState when it starts a
// sync (a workaround for argo-cd#20875), a write of the Application's status that the live suite's guard
// refuses to test code, so the model tells its own operation by the promotion info and the revision.
type kargoDriver struct {
	d    *GitDelivery
	bins kargoverify.PluginBinaries

	release, rollback *promotionState // the release's Promotion, and a later one of the previous Freight
	current           *promotionState

	stable, revision string   // the stable revision at the release ("" at a first deployment); the revision of the current Freight
	stageHealth      []string // collapsed
	stageMessage     string
	freight          stage.Freight
	run              string
	verification     []string // the current Freight's, collapsed
	// releaseVerification and releaseVerified: the released Freight's, kept when a rollback replaces it
	releaseVerification []string
	releaseVerified     bool
	violations          []string
	// retried are the runs (as groundTruth names them) failed when the user retried the update
	retried map[string]bool

	// healthOnly: the Stage has no spec.verification (Kargo without analysis-health: the Freight is
	// verified on the Stage's health alone)
	healthOnly bool
	// program is Kargo's own control plane (nil: the model alone); real the scenario's Project and Stage
	// on it, state what Kargo last wrote, frames every tick's Kargo and model.
	program *installs.Kargo
	real    *kargoStage
	state   KargoState
	frames  []KargoFrame
	// model is the model's Promotion phase and Freight, beside Kargo's
	modelPhase    string
	modelFreight  stage.Freight
	modelVerified bool
	// releaseFrames is where the rollback starts in frames
	releaseFrames int
}

// KargoFrame is one tick of a live scenario as Kargo's controller wrote it and as the model decides on
// the same Application and verification run.
type KargoFrame struct {
	Tick int `json:"tick"`
	// App is the Application's health status then.
	App   string     `json:"app"`
	Kargo KargoState `json:"kargo"`
	Model KargoState `json:"model"`
}

// userRetried notes the runs of the revision failed when the user runs the retry action.
func (k *kargoDriver) userRetried(w *harness.World) error {
	truth, err := kargoverify.GroundTruth(w, w.Rollout(), k.revision)
	if err != nil {
		return err
	}
	if k.retried == nil {
		k.retried = map[string]bool{}
	}
	for _, f := range truth.Failed {
		k.retried[f] = true
	}
	return nil
}

// promotionState is one Promotion with its argocd-update step.
type promotionState struct {
	name    string    // in the operation's info
	desired string    // the commit it promotes
	start   time.Time // real time of the step's start: Kargo's clock for the timeout
	worldAt time.Time // the World's clock then

	phase, message string
	worldDuration  time.Duration
	// freight is the Freight's name (Kargo's own)
	freight string
}

// promotionName is the release's Promotion, as Kargo names Promotions (<stage>.<ULID>.<freight>).
func promotionName(ns string) string { return "live." + ns + ".release" }

// startPromotion notes the release's Promotion start (argocd-update's sync of sha).
func (k *kargoDriver) startPromotion(w *harness.World, sha string) {
	k.stable = stableAtRelease(w)
	k.release = &promotionState{name: promotionName(w.Namespace), desired: sha, start: time.Now(), worldAt: w.Clock(), phase: stage.PromotionRunning}
	k.current = k.release
}

// promote is the user's promotion of the Freight of commit sha with image, through Kargo's own
// controller: the Promotion's name and steps are Kargo's.
func (k *kargoDriver) promote(w *harness.World, sha, image string) (*promotionState, error) {
	freight, name, err := k.real.promote(sha, image)
	if err != nil {
		return nil, err
	}
	return &promotionState{name: name, freight: freight, desired: sha, start: time.Now(), worldAt: w.Clock(), phase: stage.PromotionRunning}, nil
}

// promoteRelease promotes the release's Freight through Kargo.
func (k *kargoDriver) promoteRelease(w *harness.World, sha, image string) error {
	k.stable = stableAtRelease(w)
	p, err := k.promote(w, sha, image)
	if err != nil {
		return err
	}
	k.release, k.current = p, p
	k.modelPhase, k.modelFreight, k.state = stage.PromotionRunning, k.newFreight(), KargoState{}
	return nil
}

// promoteRollback promotes the previous Freight (a new commit with the previous image) through Kargo.
func (k *kargoDriver) promoteRollback(w *harness.World, sha, image string) error {
	p, err := k.promote(w, sha, image)
	if err != nil {
		return err
	}
	k.rollback = p
	k.rolledBack(w)
	k.modelPhase, k.modelFreight, k.state = stage.PromotionRunning, k.newFreight(), KargoState{}
	return nil
}

// abortRelease is the user's abort of the release's Promotion (the kargo.akuity.io/abort annotation,
// api/v1alpha1 AnnotationKeyAbort: the Promotion ends Aborted), so that Kargo can promote another Freight.
func (k *kargoDriver) abortRelease() error {
	if k.real != nil && k.release != nil {
		k.modelPhase = "Aborted"
		if err := k.real.abort(k.release.name); err != nil {
			return err
		}
		// the release's Promotion is no longer observed once the rollback's is current: its phase is
		// the one Kargo writes for the abort
		phase, err := k.real.settlePromotion(k.release.name)
		k.release.phase = phase
		return err
	}
	if k.release != nil && k.release.phase == stage.PromotionRunning {
		k.release.phase, k.release.message = "Aborted", "aborted by the user (kargo.akuity.io/abort)"
	}
	return nil
}

// startRollback notes a Promotion of the previous Freight (the stable revision's) to sha: the Stage's
// Freight changes, and a new verification will start for it.
func (k *kargoDriver) startRollback(w *harness.World, sha string) {
	k.rollback = &promotionState{name: promotionName(w.Namespace) + ".rollback", desired: sha, start: time.Now(), worldAt: w.Clock(), phase: stage.PromotionRunning}
	k.rolledBack(w)
}

// rolledBack: the current Promotion is now the rollback's, of the previous Freight.
func (k *kargoDriver) rolledBack(w *harness.World) {
	k.current = k.rollback
	k.releaseFrames = len(k.frames)
	verified := k.freight.Verified
	if k.real != nil {
		verified = k.state.Verified
	}
	k.releaseVerification, k.releaseVerified = k.verification, verified
	k.freight, k.run, k.verification = k.newFreight(), "", nil
	k.revision = k.stable
}

// stableAtRelease is the Rollout's stable revision before the release's sync: none when the release
// creates the Rollout.
func stableAtRelease(w *harness.World) string {
	ro, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Get(context.Background(), harness.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		panic(harness.ScriptError{Err: err})
	}
	return ro.Status.StableRS
}

// application reads what Kargo reads of the Application.
func (k *kargoDriver) application() (stage.Application, error) {
	u, err := k.d.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Get(context.Background(), k.d.app, metav1.GetOptions{})
	if err != nil {
		return stage.Application{}, err
	}
	return k.applicationOf(u), nil
}

// applicationOf is what Kargo reads of the Application u.
func (k *kargoDriver) applicationOf(u *unstructured.Unstructured) stage.Application {
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(u.Object, path...); return s }
	at := func(path ...string) time.Time {
		t, _ := time.Parse(time.RFC3339, str(path...))
		return t
	}
	app := stage.Application{Namespace: cluster.ArgoCDNamespace, Name: k.d.app,
		Health: str("status", "health", "status"), SyncRevision: str("status", "sync", "revision"),
		ReconciledAt: at("status", "reconciledAt"), OperationPhase: str("status", "operationState", "phase"),
		OperationMessage: str("status", "operationState", "message"), OperationFinishedAt: at("status", "operationState", "finishedAt"),
		SyncResultRevision: str("status", "operationState", "syncResult", "revision"),
		OperationInfo:      map[string]string{}}
	_, app.Operation = u.Object["operation"]
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			ty, _ := m["type"].(string)
			msg, _ := m["message"].(string)
			app.Conditions = append(app.Conditions, stage.Condition{Type: ty, Message: msg})
		}
	}
	info, _, _ := unstructured.NestedSlice(u.Object, "status", "operationState", "operation", "info")
	for _, i := range info {
		if m, ok := i.(map[string]any); ok {
			n, _ := m["name"].(string)
			v, _ := m["value"].(string)
			app.OperationInfo[n] = v
		}
	}
	return app
}

// observe is one Stage reconcile after a tick (Argo CD has refreshed the Application): the Promotion's
// phase, the Stage's health, the verification, and the rules Kargo's verdict must keep against the
// analysis verdict of the released revision (analysisruns, through groundTruth).
func (k *kargoDriver) observe(w *harness.World) error {
	if k.current == nil {
		return nil
	}
	ro := w.Rollout()
	if k.revision == "" && ro.Status.CurrentPodHash != k.stable && ro.Status.CurrentPodHash != "" {
		k.revision = ro.Status.CurrentPodHash
	}
	app, err := k.application()
	if err != nil {
		return err
	}
	p := k.current
	promoting := p.phase == stage.PromotionRunning || p.phase == "Pending"
	var h stage.Health
	var verified bool
	if k.real != nil {
		if h, verified, err = k.observeKargo(w, app); err != nil {
			return err
		}
	} else {
		if promoting {
			p.phase, p.message = stage.ArgoCDUpdate(app, p.name, p.desired, time.Since(p.start))
			p.worldDuration = w.Clock().Sub(p.worldAt)
		}
		var msg string
		h, msg = stage.Assess(p.phase, app, p.desired)
		k.stageHealth, k.stageMessage = kargoverify.Note(k.stageHealth, string(h)), msg
		phase := ""
		if k.run != "" {
			ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), k.run, metav1.GetOptions{})
			if err != nil {
				return err
			}
			phase = string(ar.Status.Phase)
		}
		if k.freight.Reconcile(h, phase) {
			ar, err := k.bins.VerificationRun(w.Namespace, "live", kargoverify.FreightImage(ro))
			if err != nil {
				return err
			}
			if err := w.Create(ar); err != nil {
				return err
			}
			k.run = ar.Name
		}
		if k.freight.Started {
			k.verification = kargoverify.Note(k.verification, k.freight.Phase)
		}
		verified = k.freight.Verified
	}
	truth, err := kargoverify.GroundTruth(w, ro, k.revision)
	if err != nil {
		return err
	}
	tick := w.Reconciles
	// without the barrier Kargo would assess the Application's health straight away: the replay's rule
	// (kargo.Problems) that the Stage is Unhealthy whenever an analysis of the revision has failed, on
	// Argo CD's health after this tick (Argo CD has refreshed since the reconcile)
	// (a run the user retried after its verdict is pending until its new attempt exists, as
	// test/timeline's Verdicts treats it)
	var failed []string
	for _, f := range truth.Failed {
		if !k.retried[f] {
			failed = append(failed, f)
		}
	}
	if ah := stage.ForAppHealth(app.Health); ah != stage.Unhealthy && len(failed) > 0 {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: the Application %s (a Stage %s without the barrier) while %v", tick, app.Health, ah, failed))
	}
	if h == stage.Healthy && len(truth.Failed) > 0 {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: Stage Healthy while %v", tick, truth.Failed))
	}
	if verified && !truth.Passed {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: Freight verified before every analysis of revision %s passed", tick, k.revision))
	}
	// at the tick it succeeds: a run released by the promotion may still fail later (analysisruns
	// EndedWithoutVerdict), which the Freight's verification, not the Promotion, must show
	if promoting && p.phase == stage.PromotionSucceeded && !truth.Done {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: the Promotion Succeeded while the release of revision %s still waited on an analysis", tick, k.revision))
	}
	return nil
}

// Done: nothing more will change for Kargo: the Promotion Errored (no verification without a
// Succeeded Promotion), or it Succeeded and the verification ended (or the Freight is verified).
func (k *kargoDriver) done() bool {
	if k.current == nil {
		return true
	}
	if k.real != nil {
		switch k.current.phase {
		case stage.PromotionSucceeded:
			return k.state.Verified || v1alpha1.AnalysisPhase(k.state.Verification).Completed()
		case "Errored", "Failed", "Aborted":
			return true
		}
		return false
	}
	switch k.current.phase {
	case stage.PromotionErrored, "Aborted":
		return true
	case stage.PromotionSucceeded:
		return k.freight.Verified || (k.freight.Started && v1alpha1.AnalysisPhase(k.freight.Phase).Completed())
	}
	return false
}

// settle ticks after the scenario until done, for at most a minute and a half of real time (Argo CD
// finishes the barrier's sync on its own clock; the verification needs the analysis controller's ticks).
func (k *kargoDriver) settle(s *harness.S) {
	deadline := time.Now().Add(90 * time.Second)
	for !k.done() && time.Now().Before(deadline) {
		s.Tick(nil)
	}
}

func (k *kargoDriver) finalStage() string {
	if len(k.stageHealth) == 0 {
		return ""
	}
	return k.stageHealth[len(k.stageHealth)-1]
}

// verified: whether the Freight of the current Promotion is verified in the Stage (Kargo's, or the model's).
func (k *kargoDriver) verified() bool {
	if k.real != nil {
		return k.state.Verified
	}
	return k.freight.Verified
}

// kargoTerminal: a Promotion phase Kargo's Promotion controller no longer changes.
func kargoTerminal(phase string) bool {
	switch phase {
	case "Succeeded", "Failed", "Errored", "Aborted":
		return true
	}
	return false
}

// notAssessed stands for a Stage whose status.health is unset (no assessment since its last Promotion).
const notAssessed = "(none)"

// observeKargo is one frame of Kargo's own controller: it asks Kargo to reconcile the running Promotion
// and the Stage, reads what Kargo wrote, and runs the model on the same Application and Kargo's
// Verification run.
func (k *kargoDriver) observeKargo(w *harness.World, app stage.Application) (stage.Health, bool, error) {
	p := k.current
	if !kargoTerminal(p.phase) {
		if err := k.real.refresh(kargoPromotions, p.name); err != nil {
			return "", false, err
		}
	}
	if err := k.real.refresh(kargoStages, kargoStageName); err != nil {
		return "", false, err
	}
	s, err := k.real.read(p.name, p.freight)
	if err != nil {
		return "", false, err
	}
	k.state = s
	if !kargoTerminal(p.phase) {
		p.worldDuration = w.Clock().Sub(p.worldAt)
	}
	if s.Promotion != "" {
		p.phase = s.Promotion
	}
	health := s.Health
	if health == "" {
		health = notAssessed
	}
	k.stageHealth = kargoverify.Note(k.stageHealth, health)
	if s.Verification != "" {
		k.verification = kargoverify.Note(k.verification, s.Verification)
	}
	// the model, on the same Application and on Kargo's verification run
	if k.modelPhase == stage.PromotionRunning {
		k.modelPhase, _ = stage.ArgoCDUpdate(app, p.name, p.desired, time.Since(p.start))
	}
	mh, _ := stage.Assess(k.modelPhase, app, p.desired)
	arPhase := ""
	if s.AnalysisRun != "" {
		ar, err := w.ControlPlane().Argo.ArgoprojV1alpha1().AnalysisRuns(k.real.ns).Get(context.Background(), s.AnalysisRun, metav1.GetOptions{})
		if err != nil {
			return "", false, err
		}
		arPhase = string(ar.Status.Phase)
	}
	k.modelFreight.Reconcile(mh, arPhase)
	model := KargoState{Promotion: k.modelPhase, Health: string(mh), Verified: k.modelFreight.Verified}
	if k.modelFreight.Started {
		model.Verification, model.AnalysisRun = k.modelFreight.Phase, s.AnalysisRun
	}
	k.frames = append(k.frames, KargoFrame{Tick: w.Reconciles, App: app.Health, Kargo: s, Model: model})
	return stage.Health(s.Health), s.Verified, nil
}

// modelDiffs are the frames where the model decides otherwise than Kargo's controller wrote.
func modelDiffs(frames []KargoFrame) []string {
	var out []string
	for _, f := range frames {
		kg, m := f.Kargo, f.Model
		var d []string
		if kg.Promotion != m.Promotion {
			d = append(d, fmt.Sprintf("Promotion Kargo %s, model %s", kg.Promotion, m.Promotion))
		}
		if kg.Health != m.Health {
			d = append(d, fmt.Sprintf("Stage health Kargo %q, model %q", kg.Health, m.Health))
		}
		if kg.Verification != m.Verification {
			d = append(d, fmt.Sprintf("verification Kargo %q, model %q", kg.Verification, m.Verification))
		}
		if kg.Verified != m.Verified {
			d = append(d, fmt.Sprintf("verified Kargo %v, model %v", kg.Verified, m.Verified))
		}
		if len(d) > 0 {
			out = append(out, fmt.Sprintf("tick %d (Application %s): %s", f.Tick, f.App, strings.Join(d, "; ")))
		}
	}
	return out
}

// newFreight is a Freight's verification in the Stage, as the driver's Stage verifies (healthOnly).
func (k *kargoDriver) newFreight() stage.Freight { return stage.Freight{HealthOnly: k.healthOnly} }

// decidedBy names who decided the Promotion, the Stage's health and the verification: Kargo's own
// controller or the model.
func (k *kargoDriver) decidedBy() string {
	if k.real != nil {
		return "kargo " + installs.KargoVersion
	}
	return "model"
}

// lastMessage is the last measurement message of the current Freight's verification run, or "".
func (k *kargoDriver) lastMessage(w *harness.World) (string, error) {
	ar, err := k.VerificationRun(w)
	if err != nil || ar == nil {
		return "", err
	}
	msg := ""
	for _, mr := range ar.Status.MetricResults {
		if n := len(mr.Measurements); n > 0 {
			msg = mr.Measurements[n-1].Message
		}
	}
	return msg, nil
}

// VerificationRun is the current Freight's verification AnalysisRun (Kargo's, in the Project namespace, or
// the model's, in the Rollout's), or nil before the verification started.
func (k *kargoDriver) VerificationRun(w *harness.World) (*v1alpha1.AnalysisRun, error) {
	ns, name, c := w.Namespace, k.run, w.Recorder
	if k.real != nil {
		ns, name, c = k.real.ns, k.state.AnalysisRun, w.ControlPlane()
	} else if !k.freight.Started {
		name = ""
	}
	if name == "" {
		return nil, nil
	}
	return c.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Get(context.Background(), name, metav1.GetOptions{})
}
