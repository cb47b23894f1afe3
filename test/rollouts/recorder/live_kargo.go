package recorder

import (
	"context"
	"fmt"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
)

// kargoDriver is Kargo's side of the live suite, acting only through the API server as Kargo v1.11.2
// does (the rules are package stage's, cited there): the release is a Promotion whose one step,
// argocd-update, patches the Application's target revision and operation (GitDelivery.argocdUpdate) and
// waits on status.operationState; the Stage is assessed from the Application after every tick; its
// verification, our generated `generate --format kargo` template with the Freight's image, is created at
// the first Healthy assessment and judged by the real analysis controller with our plugin; the Freight
// is verified when the Stage is Healthy with the verification Successful.
//
// What it leaves out, and why: Kargo clears status.operationState when it starts a sync (a workaround
// for argo-cd#20875), a write of the Application's status that the live suite's guard refuses to test
// code, so the driver tells its own operation by the promotion info and the revision instead; and the
// verification run is created in the Rollout's namespace (the World's controllers watch only that one),
// where Kargo puts it in the Project's.
type kargoDriver struct {
	d    *GitDelivery
	bins pluginBinaries

	release, rollback *promotionState // the release's Promotion, and a later one of the previous Freight
	current           *promotionState

	stable, revision string   // the stable revision at the release; the revision of the current Freight
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
}

// userRetried notes the runs of the revision failed when the user runs the retry action.
func (k *kargoDriver) userRetried(w *World) error {
	truth, err := groundTruth(w, w.Rollout(), k.revision)
	if err != nil {
		return err
	}
	if k.retried == nil {
		k.retried = map[string]bool{}
	}
	for _, f := range truth.failed {
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
}

// promotionName is the release's Promotion, as Kargo names Promotions (<stage>.<ULID>.<freight>).
func promotionName(ns string) string { return "live." + ns + ".release" }

// startPromotion notes the release's Promotion start (argocd-update's sync of sha).
func (k *kargoDriver) startPromotion(w *World, sha string) {
	k.release = &promotionState{name: promotionName(w.ns), desired: sha, start: time.Now(), worldAt: w.clock(), phase: stage.PromotionRunning}
	k.current = k.release
}

// abortRelease is the user's abort of the release's Promotion (the kargo.akuity.io/abort annotation,
// api/v1alpha1 AnnotationKeyAbort: the Promotion ends Aborted), so that Kargo can promote another Freight.
func (k *kargoDriver) abortRelease() {
	if k.release != nil && k.release.phase == stage.PromotionRunning {
		k.release.phase, k.release.message = "Aborted", "aborted by the user (kargo.akuity.io/abort)"
	}
}

// startRollback notes a Promotion of the previous Freight (the stable revision's) to sha: the Stage's
// Freight changes, and a new verification will start for it.
func (k *kargoDriver) startRollback(w *World, sha string) {
	k.rollback = &promotionState{name: promotionName(w.ns) + ".rollback", desired: sha, start: time.Now(), worldAt: w.clock(), phase: stage.PromotionRunning}
	k.current = k.rollback
	k.releaseVerification, k.releaseVerified = k.verification, k.freight.Verified
	k.freight, k.run, k.verification = stage.Freight{}, "", nil
	k.revision = k.stable
}

func note(seq []string, s string) []string {
	if len(seq) == 0 || seq[len(seq)-1] != s {
		return append(seq, s)
	}
	return seq
}

// application reads what Kargo reads of the Application.
func (k *kargoDriver) application() (stage.Application, error) {
	u, err := k.d.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Get(context.Background(), k.d.app, metav1.GetOptions{})
	if err != nil {
		return stage.Application{}, err
	}
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(u.Object, path...); return s }
	at := func(path ...string) time.Time {
		t, _ := time.Parse(time.RFC3339, str(path...))
		return t
	}
	app := stage.Application{Namespace: ArgoCDNamespace, Name: k.d.app,
		Health: str("status", "health", "status"), SyncRevision: str("status", "sync", "revision"),
		ReconciledAt: at("status", "reconciledAt"), OperationPhase: str("status", "operationState", "phase"),
		OperationMessage: str("status", "operationState", "message"), OperationFinishedAt: at("status", "operationState", "finishedAt"),
		OperationRevision:  str("status", "operationState", "operation", "sync", "revision"),
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
	return app, nil
}

// observe is one Stage reconcile after a tick (Argo CD has refreshed the Application): the Promotion's
// phase, the Stage's health, the verification, and the rules Kargo's verdict must keep against the
// analysis verdict of the released revision (analysisruns, through groundTruth).
func (k *kargoDriver) observe(w *World) error {
	ro := w.Rollout()
	if k.stable == "" {
		k.stable = ro.Status.StableRS
	}
	if k.current == nil {
		return nil
	}
	if k.revision == "" && ro.Status.CurrentPodHash != k.stable && ro.Status.CurrentPodHash != "" {
		k.revision = ro.Status.CurrentPodHash
	}
	app, err := k.application()
	if err != nil {
		return err
	}
	p := k.current
	promoting := p.phase == stage.PromotionRunning
	if promoting {
		p.phase, p.message = stage.ArgoCDUpdate(app, p.name, p.desired, time.Since(p.start))
		p.worldDuration = w.clock().Sub(p.worldAt)
	}
	h, msg := stage.Assess(p.phase, app, p.desired)
	k.stageHealth, k.stageMessage = note(k.stageHealth, string(h)), msg
	phase := ""
	if k.run != "" {
		ar, err := w.c.Argo.ArgoprojV1alpha1().AnalysisRuns(w.ns).Get(context.Background(), k.run, metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase = string(ar.Status.Phase)
	}
	if k.freight.Reconcile(h, phase) {
		ar, err := k.bins.verificationRun(w.ns, "live", freightImage(ro))
		if err != nil {
			return err
		}
		if err := w.Create(ar); err != nil {
			return err
		}
		k.run = ar.Name
	}
	if k.freight.Started {
		k.verification = note(k.verification, k.freight.Phase)
	}
	truth, err := groundTruth(w, ro, k.revision)
	if err != nil {
		return err
	}
	tick := w.reconciles
	// without the barrier Kargo would assess the Application's health straight away: the replay's rule
	// (kargo.Problems) that the Stage is Unhealthy whenever an analysis of the revision has failed, on
	// Argo CD's health after this tick (Argo CD has refreshed since the reconcile)
	// (a run the user retried after its verdict is pending until its new attempt exists, as
	// test/timeline's Verdicts treats it)
	var failed []string
	for _, f := range truth.failed {
		if !k.retried[f] {
			failed = append(failed, f)
		}
	}
	if ah := stage.ForAppHealth(app.Health); ah != stage.Unhealthy && len(failed) > 0 {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: the Application %s (a Stage %s without the barrier) while %v", tick, app.Health, ah, failed))
	}
	if h == stage.Healthy && len(truth.failed) > 0 {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: Stage Healthy while %v", tick, truth.failed))
	}
	if k.freight.Verified && !truth.passed {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: Freight verified before every analysis of revision %s passed", tick, k.revision))
	}
	// at the tick it succeeds: a run released by the promotion may still fail later (analysisruns
	// EndedWithoutVerdict), which the Freight's verification, not the Promotion, must show
	if promoting && p.phase == stage.PromotionSucceeded && !truth.done {
		k.violations = append(k.violations, fmt.Sprintf("tick %d: the Promotion Succeeded while the release of revision %s still waited on an analysis", tick, k.revision))
	}
	return nil
}

// done: nothing more will change for Kargo: the Promotion Errored (no verification without a
// Succeeded Promotion), or it Succeeded and the verification ended (or the Freight is verified).
func (k *kargoDriver) done() bool {
	if k.current == nil {
		return true
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
func (k *kargoDriver) settle(s *S) {
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
