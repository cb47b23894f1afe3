// The canary scenarios.

package scenarios

import (
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// canaryScenarios are the canary Scenarios, in recording order.
var canaryScenarios = []harness.Scenario{
	{
		Name: "canary-step-successful", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Step analysis measures three times and passes; the remaining steps run and the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-failed", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "step 1 Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "Step analysis exceeds its failure limit (two failed measurements, one tolerated); the controller aborts the update.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, bad, bad)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-error", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "step 1 Error",
		Verification: "Failed", Kargo: "not started",
		Summary: "The metrics endpoint answers 500 after one good measurement; five consecutive errors exceed the default consecutiveErrorLimit (4), the run ends in Error and the controller aborts the update.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, e500)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-inconclusive-resumed", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Inconclusive; step 1.1 Successful",
		Verification: "Inconclusive", Kargo: "Successful",
		Summary: "Step analysis is inconclusive and the rollout pauses; a user resumes it, a second run passes, the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, meh, good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Until("paused on the inconclusive run", 20, harness.PausedInconclusive)
			s.Ticks(3)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "canary-step-inconclusive-promoted", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Inconclusive",
		Verification: "Inconclusive", Kargo: "Inconclusive",
		Summary: "Step analysis is inconclusive and the rollout pauses; a user promotes it (kubectl argo rollouts promote) past the analysis step, and the canary is promoted without another run.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", meh)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Until("paused on the inconclusive run", 20, harness.PausedInconclusive)
			s.Ticks(2)
			s.Tick(s.SkipStep)
			s.Settle()
		},
	},
	{
		Name: "canary-step-connection-refused", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "step 1 Error",
		Verification: "Failed", Kargo: "not started",
		Summary: "The metrics server refuses connections; with consecutiveErrorLimit 2 the third consecutive error ends the run in Error and the controller aborts the update.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate-fragile"))
			s.MetricsDown()
			s.Release()
			s.Until("aborted", 30, harness.Aborted)
			s.MetricsUp()
			s.Settle()
		},
	},
	{
		Name: "canary-step-errors-recover", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "The metrics server refuses connections twice (consecutiveErrorLimit 2 is not exceeded), then answers; the run passes and the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate-fragile"))
			s.MetricsDown()
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("two errors measured", 20, isAnalysisRun(s, r, errorsMeasured(2)))
			s.MetricsUp()
			s.Settle()
		},
	},
	{
		Name: "canary-step-slow-provider", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "The metrics endpoint answers later than the metric's 1 s timeout twice (two errors, under the default consecutiveErrorLimit), then in time; the run passes.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", harness.Slow(1500*time.Millisecond), harness.Slow(1500*time.Millisecond), good)
			s.Deploy(stepAnalysisCanary("success-rate-slow"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-initial-delay", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Step analysis with an initialDelay of 30 s: nothing is measured for 30 s, then three good measurements; the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate-delayed"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-dry-run-failing", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "The step analysis has a dry-run metric (canary-errors) that fails while success-rate passes: the run is Successful, the failure shows only in the run's dryRunSummary.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Answers("canary-errors", high)
			ro := stepAnalysisCanary("with-dry-run")
			ro.Spec.Strategy.Canary.Steps[1].Analysis.DryRun = []v1alpha1.DryRun{{MetricName: "canary-errors"}}
			s.Deploy(ro)
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-measurement-retention", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Step analysis measures five times with measurementRetention limit 2: the run keeps only the last two measurements while its counters reach five; it passes.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			ro := stepAnalysisCanary("success-rate-long")
			ro.Spec.Strategy.Canary.Steps[1].Analysis.MeasurementRetention = []v1alpha1.MeasurementRetention{{MetricName: "success-rate", Limit: 2}}
			s.Deploy(ro)
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-prometheus-successful", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Step analysis through the prometheus provider (an instant query against Prometheus' HTTP API): two good latency samples; the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("latency_p99", harness.OK(0.12), harness.OK(0.21))
			s.Deploy(stepAnalysisCanary("latency"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-prometheus-failed", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "step 1 Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "Step analysis through the prometheus provider: the second latency sample is too high (failureLimit 0); the controller aborts the update.",
		Play: func(s *harness.S) {
			s.Answers("latency_p99", harness.OK(0.12), harness.OK(0.8))
			s.Deploy(stepAnalysisCanary("latency"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-step-promote-full", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Inconclusive", Kargo: "Inconclusive",
		Summary: "While the step analysis is running, a user promotes fully (kubectl argo rollouts promote --full): the controller promotes the canary and terminates the run, which ends Successful \"Run Terminated\".",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(s.PromoteFull)
			s.Settle()
		},
	},
	{
		Name: "canary-step-skipped", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Inconclusive", Kargo: "Inconclusive",
		Summary: "While the step analysis is running, a user skips the step (kubectl argo rollouts promote --skip-current-step): the run is terminated (Successful \"Run Terminated\") and the remaining steps run.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(s.SkipCurrentStep)
			s.Settle()
		},
	},
	{
		Name: "canary-step-terminate-action", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Inconclusive", Kargo: "Inconclusive",
		Summary: "While the step analysis is running, a user runs the terminate action on the AnalysisRun in Argo CD: the run ends Successful \"Run Terminated\" after one of its three measurements and the canary goes on, so its analysis did not pass.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(func() { s.Terminate("AnalysisRun", r) })
			s.Settle()
		},
	},
	{
		Name: "canary-new-revision-during-analysis", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Failed", Kargo: "Successful",
		Summary: "While the step analysis of the released revision is running, Argo CD syncs a later Freight (image " + harness.ImageV3 + "): the controller replaces the revision before it was promoted, and the later one passes its own analysis.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(func() {
				s.Must(s.World.UpdateSpec("Argo CD syncs a later Freight: image "+harness.ImageV3, func(ro *v1alpha1.Rollout) {
					ro.Spec.Template.Spec.Containers[0].Image = harness.ImageV3
				}))
			})
			s.Settle()
		},
	},
	{
		Name: "canary-abort-then-retry", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful; step 1.1 Successful",
		Verification: "Failed", Kargo: "Successful",
		Summary: "While the step analysis is running, a user aborts (the run is terminated); later the user retries, a new run passes, the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(s.Abort)
			s.Until("aborted", 5, harness.Aborted)
			s.Ticks(4)
			s.Tick(s.Retry)
			s.Settle()
		},
	},
	{
		Name: "canary-retry-after-abort", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Failed; step 1.1 Successful",
		Verification: "Failed", Kargo: "Successful",
		Summary: "Step analysis fails and the controller aborts; a user retries, the second step run passes, the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", bad)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			s.Until("aborted", 20, harness.Aborted)
			s.Answers("success-rate", good)
			s.Ticks(4)
			s.Tick(s.Retry)
			s.Settle()
		},
	},
	{
		Name: "canary-rollback-during-analysis", Strategy: "canary", Outcome: harness.OutcomeRolledBack, Verdict: "",
		Verification: "Failed", Kargo: "Successful",
		Summary: "While the step analysis of the new revision is running, Argo CD syncs the previous image back: the controller returns to the stable ReplicaSet at once, without analysis, and terminates the run.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.Release()
			r := s.Run(harness.Step, 1, 0)
			s.Until("run measured once", 10, isAnalysisRun(s, r, func(ar *v1alpha1.AnalysisRun) bool {
				return len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1
			}))
			s.Tick(func() {
				s.Must(s.World.UpdateSpec("Argo CD syncs the previous Freight back: image "+harness.ImageV1, func(ro *v1alpha1.Rollout) {
					ro.Spec.Template.Spec.Containers[0].Image = harness.ImageV1
				}))
			})
			s.Settle()
		},
	},
	{
		Name: "canary-progress-deadline-abort", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "background Successful",
		Verification: "Failed", Kargo: "not started",
		Summary: "The new pods never become ready; with progressDeadlineSeconds 30 and progressDeadlineAbort the controller aborts the update once the deadline passes, and terminates the background analysis, which had passed every measurement.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			ro := harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.Pause(30), harness.SetWeight(50))
			ro.Spec.ProgressDeadlineSeconds = harness.Ptr(int32(30))
			ro.Spec.ProgressDeadlineAbort = true
			s.Deploy(ro)
			s.Must(s.World.HoldPods(harness.ImageV2, true))
			s.Release()
			s.Until("aborted", 30, harness.Aborted)
			s.Settle()
		},
	},
	{
		Name: "canary-background-promoted-while-running", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "background Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Background analysis runs through every step; the last step sends all traffic to the canary, and the promotion is written while the background run is still Running, which is terminated one reconcile later.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Deploy(harness.CanaryRollout("error-rate", harness.SetWeight(50), harness.Pause(30), harness.SetWeight(100)))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-traffic-routed-background-promoted-while-running", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "background Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "As canary-background-promoted-while-running, with SMI traffic routing and the last step at 50 %: the promotion is written while the background run is still Running.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Deploy(harness.TrafficRouted(harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.Pause(30), harness.SetWeight(50), harness.Pause(30))))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-background-starting-step", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "background Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Background analysis with startingStep 2: no run exists during the first two steps; it starts at the second setWeight and passes until the promotion terminates it.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			ro := harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.Pause(20), harness.SetWeight(50), harness.Pause(40))
			ro.Spec.Strategy.Canary.Analysis.StartingStep = harness.Ptr(int32(2))
			s.Deploy(ro)
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-during-pause", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "background Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "Background analysis fails while the rollout waits on an indefinite pause step; the controller aborts.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Deploy(harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.Pause(0), harness.SetWeight(50)))
			s.Release()
			s.Until("paused on the pause step", 20, func(ro *v1alpha1.Rollout) bool { return len(ro.Status.PauseConditions) > 0 })
			s.Ticks(2)
			s.Answers("error-rate", high)
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-after-last-step", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "background Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "All steps are done but the last canary pods never become ready, so the controller cannot promote; the background analysis fails meanwhile and the controller aborts.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Deploy(harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.Pause(30), harness.SetWeight(50)))
			s.Release()
			s.Must(s.World.HoldPods(harness.ImageV2, true))
			s.World.Event("kubelet: the new ReplicaSet's further pods do not become ready")
			s.Until("every step done", 30, func(ro *v1alpha1.Rollout) bool {
				return ro.Status.CurrentStepIndex != nil && int(*ro.Status.CurrentStepIndex) == len(ro.Spec.Strategy.Canary.Steps)
			})
			s.Answers("error-rate", high)
			s.Until("aborted", 30, harness.Aborted)
			s.Must(s.World.HoldPods(harness.ImageV2, false))
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-after-promotion", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "background Failed",
		Verification: "Failed", Kargo: "Failed",
		Summary: "Background analysis measuring every 10 s with no failure tolerated: its measurement right after the promotion fails, before the controller's next reconcile terminates the run; the controller ignores it because the rollout is fully promoted.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Deploy(harness.CanaryRollout("error-rate-fast", harness.SetWeight(50), harness.Pause(30), harness.SetWeight(100)))
			s.Release()
			s.Until("promoted", 40, harness.Promoted)
			s.Answers("error-rate", high)
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-while-inconclusive", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "background Failed; step 1 Inconclusive; step 1.1 Inconclusive",
		Verification: "Inconclusive", Kargo: "not started",
		Summary: "The step analysis is inconclusive and the rollout pauses; the background analysis then fails, but the controller does not act on it until a user resumes; it then starts a new step run (inconclusive again) and aborts on the failed background run.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Answers("success-rate", meh)
			s.Deploy(harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.AnalysisStep("success-rate"), harness.SetWeight(50)))
			s.Release()
			s.Until("paused on the inconclusive run", 20, harness.PausedInconclusive)
			s.Answers("error-rate", high)
			s.Until("background run failed", 20, func(*v1alpha1.Rollout) bool {
				for _, ar := range s.World.AnalysisRuns() {
					if ar.Labels[v1alpha1.RolloutTypeLabel] == harness.Background && ar.Status.Phase == v1alpha1.AnalysisPhaseFailed {
						return true
					}
				}
				return false
			})
			s.Ticks(3)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "canary-step-failed-while-inconclusive", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "background Inconclusive; step 1 Failed; background.1 Inconclusive",
		Verification: "Inconclusive", Kargo: "not started",
		Summary: "The background analysis turns inconclusive while the step analysis runs, and the rollout pauses; the step analysis then fails, but the controller does not act on it until a user resumes; it then starts a new background run (inconclusive again) and aborts on the failed step run.",
		Play: func(s *harness.S) {
			s.Answers("error-rate", low)
			s.Answers("success-rate", good, bad, bad)
			s.Deploy(harness.CanaryRollout("error-rate", harness.SetWeight(25), harness.AnalysisStep("success-rate"), harness.SetWeight(50)))
			s.Release()
			s.Run(harness.Step, 1, 0)
			s.Answers("error-rate", fuzzy)
			s.Until("paused on the inconclusive run", 20, harness.PausedInconclusive)
			s.Until("step run failed", 20, func(*v1alpha1.Rollout) bool {
				for _, ar := range s.World.AnalysisRuns() {
					if ar.Labels[v1alpha1.RolloutTypeLabel] == harness.Step && ar.Status.Phase == v1alpha1.AnalysisPhaseFailed {
						return true
					}
				}
				return false
			})
			s.Ticks(3)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "canary-experiment-successful", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "experiment smoke Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "An experiment step runs a canary template with a requiredForCompletion analysis; the analysis passes, the experiment completes, the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("smoke", good)
			s.Deploy(harness.CanaryRollout("", harness.SetWeight(25), harness.ExperimentStep("smoke"), harness.SetWeight(50)))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-experiment-failed", Strategy: "canary", Outcome: harness.OutcomeAborted, Verdict: "experiment smoke Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "An experiment step whose requiredForCompletion analysis fails: the experiment fails and the controller aborts the update.",
		Play: func(s *harness.S) {
			s.Answers("smoke", bad)
			s.Deploy(harness.CanaryRollout("", harness.SetWeight(25), harness.ExperimentStep("smoke"), harness.SetWeight(50)))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-workloadref", Strategy: "canary", Outcome: harness.OutcomePromoted, Verdict: "step 1 Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "The Rollout takes its pod template from a Deployment (spec.workloadRef); Argo CD syncs the new image into the Deployment, the step analysis passes, the canary is promoted.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			ro, dep := harness.WorkloadRefRollout(stepAnalysisCanary("success-rate"))
			s.Deploy(ro, dep)
			s.ReleaseWorkload()
			s.Settle()
		},
	},
}
