package inspect

import (
	"fmt"
	"io"
	"time"
)

// Kargo and Rollouts timing facts the Kargo checks rely on.
const (
	// DefaultProgressDeadline is the Rollouts default of spec.progressDeadlineSeconds
	// (utils/defaults/defaults.go DefaultProgressDeadlineSeconds).
	DefaultProgressDeadline = 600 * time.Second
	// KargoReconcileInterval is how often Kargo reconciles a Promotion and a Stage without an event
	// (pkg/controller/stages regular_stages.go Reconcile: RequeueAfter 5 minutes); a step's timeout is
	// checked only then, so it fires up to this much later than retry.timeout (kargo.md §3, krancour in
	// akuity/kargo#3515).
	KargoReconcileInterval = 5 * time.Minute
	// PluginPollInterval is the analysis-health/rollout-analysis plugin's default resume interval.
	PluginPollInterval = 10 * time.Second
)

// KargoTiming is what a Kargo pipeline promoting this Rollout should be configured with.
type KargoTiming struct {
	// ProgressDeadline is the Rollout's progressDeadlineSeconds (default 600 s) and whether it aborts.
	ProgressDeadline      string `json:"progressDeadline"`
	ProgressDeadlineAbort bool   `json:"progressDeadlineAbort"`
	// RetryTimeout is the argocd-update retry.timeout a PostSync barrier needs (Estimate.KargoRetryTimeout),
	// and TimeoutFiresBy the latest time Kargo notices it (RetryTimeout + KargoReconcileInterval).
	RetryTimeout   string `json:"retryTimeout,omitempty"`
	TimeoutFiresBy string `json:"timeoutFiresBy,omitempty"`
	// ArgoCDSyncTimeoutSeconds is the recommended Argo CD controller.sync.timeout.seconds: the same as
	// the retry.timeout, so that Argo CD ends an overlong operation with a message before Kargo's check,
	// which runs up to KargoReconcileInterval later, errors the step without one.
	ArgoCDSyncTimeoutSeconds int64 `json:"argocdSyncTimeoutSeconds,omitempty"`
	// ArgoCDWaitTimeout is the timeout an argocd-wait step (Kargo v1.10+) needs instead of a barrier: it
	// waits for the Application to be Healthy, which our scripts hold back until the analysis passed.
	ArgoCDWaitTimeout string `json:"argocdWaitTimeout,omitempty"`
	// Verification bounds the analysis-health/rollout-analysis verification: with our health scripts the
	// Stage turns Healthy only after the analysis passed, so the plugin's first measurement decides (one
	// poll); with health that turns Healthy earlier it waits for the rest of the analysis, at most the
	// whole estimate plus a poll.
	VerificationWithOurScripts string `json:"verificationWithOurScripts"`
	VerificationAtMost         string `json:"verificationAtMost,omitempty"`
}

// kargoTiming fills Rollout.Kargo and reports the checks that fail. Blue-green pre- and post-promotion
// analyses are measured while the Rollout is neither paused nor at a canary step, so its progress
// deadline runs (rollout/sync.go calculateRolloutConditions skips the timeout only for isIndefiniteStep:
// a canary step with analysis, experiment or pause, or a Paused condition); a longer analysis makes the
// Rollout Degraded (ProgressDeadlineExceeded), and aborted with progressDeadlineAbort.
func (in *inspector) kargoTiming(o objectID, spec rolloutSpec, est *estimator, durations map[string]analysisTime) *KargoTiming {
	deadline := DefaultProgressDeadline
	if spec.ProgressDeadlineSeconds != nil && *spec.ProgressDeadlineSeconds > 0 {
		deadline = time.Duration(*spec.ProgressDeadlineSeconds) * time.Second
	}
	k := &KargoTiming{ProgressDeadline: fmtDuration(deadline), ProgressDeadlineAbort: spec.ProgressDeadlineAbort,
		VerificationWithOurScripts: fmtDuration(PluginPollInterval)}
	if bg := spec.Strategy.BlueGreen; bg != nil {
		for _, p := range []string{"spec.strategy.blueGreen.prePromotionAnalysis", "spec.strategy.blueGreen.postPromotionAnalysis"} {
			t, ok := durations[p]
			if !ok || t.unknown || t.untilTerminated || t.d <= deadline {
				continue
			}
			consequence := "the Rollout turns Degraded (ProgressDeadlineExceeded) while the analysis still measures, and Kargo's Stage Unhealthy"
			if spec.ProgressDeadlineAbort {
				consequence = "progressDeadlineAbort aborts the update while the analysis still measures"
			}
			in.problem(Warning, o, "%s takes at least %s, longer than progressDeadlineSeconds (%s), which keeps running during blue-green analysis: %s; raise progressDeadlineSeconds above %s",
				p, fmtDuration(t.d), fmtDuration(deadline), consequence, fmtDuration(t.d))
		}
	}
	if len(est.pauses) > 0 {
		return k
	}
	retry := KargoRetryTimeout(est.total)
	k.RetryTimeout = fmtDuration(retry)
	k.TimeoutFiresBy = fmtDuration(retry + KargoReconcileInterval)
	k.ArgoCDSyncTimeoutSeconds = int64(retry / time.Second)
	k.ArgoCDWaitTimeout = fmtDuration(retry)
	k.VerificationAtMost = fmtDuration(est.total + PluginPollInterval)
	// The timeout is checked only when Kargo reconciles, so an estimate just above it may or may not
	// error the step, depending on when the next reconcile comes.
	if est.total > in.opts.KargoTimeout && est.total <= in.opts.KargoTimeout+KargoReconcileInterval {
		in.problem(Warning, o, "estimated minimum %s lies within Kargo's reconcile interval (%s) after the step timeout %s: Kargo checks timeouts only when it reconciles, so whether the step errors depends on timing; set retry.timeout to %s",
			fmtDuration(est.total), fmtDuration(KargoReconcileInterval), fmtDuration(in.opts.KargoTimeout), k.RetryTimeout)
	}
	// Argo CD terminates an operation that runs longer than controller.sync.timeout.seconds (0: never);
	// behind a barrier the operation lasts until full promotion.
	if t := in.opts.ArgoCDSyncTimeout; t > 0 && t < est.total {
		in.problem(Warning, o, "Argo CD's controller.sync.timeout.seconds (%s) is shorter than the estimated minimum %s: behind a PostSync barrier Argo CD terminates the sync before the Rollout can be promoted; set it to %d",
			fmtDuration(t), fmtDuration(est.total), k.ArgoCDSyncTimeoutSeconds)
	}
	return k
}

// writeKargoTable is the table output's Kargo section.
func writeKargoTable(tw io.Writer, r *Report) {
	if len(r.Rollouts) == 0 {
		return
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "ROLLOUT\tPROGRESS DEADLINE\tKARGO retry.timeout (FIRES BY)\tARGO CD sync.timeout.seconds\targocd-wait TIMEOUT\tPLUGIN VERIFICATION")
	for _, ro := range r.Rollouts {
		k := ro.Kargo
		if k == nil {
			continue
		}
		deadline := k.ProgressDeadline
		if k.ProgressDeadlineAbort {
			deadline += " (aborts)"
		}
		retry, sync, wait, verification := "-", "-", "-", k.VerificationWithOurScripts+" with our scripts"
		if k.RetryTimeout != "" {
			retry = k.RetryTimeout + " (" + k.TimeoutFiresBy + ")"
			sync = fmt.Sprint(k.ArgoCDSyncTimeoutSeconds)
			wait = k.ArgoCDWaitTimeout
			verification += ", at most " + k.VerificationAtMost
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", Display(ro.Namespace, ro.Name), deadline, retry, sync, wait, verification)
	}
}
