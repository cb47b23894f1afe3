package recorder

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Outcome is how a scenario ends for the revision being delivered.
type Outcome string

const (
	// Promoted: the new revision became the stable one.
	OutcomePromoted Outcome = "promoted"
	// Aborted: the controller aborted the update (Degraded).
	OutcomeAborted Outcome = "aborted"
)

// Scenario is one recorded timeline.
type Scenario struct {
	Name     string
	Strategy string
	Summary  string
	Outcome  Outcome
	Play     func(s *S)
}

const (
	step       = v1alpha1.RolloutTypeStepLabel
	background = v1alpha1.RolloutTypeBackgroundRunLabel
	pre        = v1alpha1.RolloutTypePrePromotionLabel
	post       = v1alpha1.RolloutTypePostPromotionLabel

	running      = v1alpha1.AnalysisPhaseRunning
	successful   = v1alpha1.AnalysisPhaseSuccessful
	failed       = v1alpha1.AnalysisPhaseFailed
	errored      = v1alpha1.AnalysisPhaseError
	inconclusive = v1alpha1.AnalysisPhaseInconclusive

	providerError = `Post "http://prometheus.monitoring:9090/api/v1/query": dial tcp 10.96.12.7:9090: connect: connection refused`
)

// stepAnalysisCanary: one canary pod, a step analysis (step index 1), half the pods, a 30 s pause.
func stepAnalysisCanary() *v1alpha1.Rollout {
	return CanaryRollout("", SetWeight(25), AnalysisStep("success-rate"), SetWeight(50), Pause(30))
}

// Scenarios are every recorded timeline, canary first.
var Scenarios = []Scenario{
	{
		Name: "canary-step-successful", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "Step analysis measures three times and passes; the remaining steps run and the canary is promoted.",
		Play: func(s *S) {
			s.Deploy(stepAnalysisCanary())
			s.Release()
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 2})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "canary-step-failed", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "Step analysis exceeds its failure limit; the controller aborts the update.",
		Play: func(s *S) {
			s.Deploy(stepAnalysisCanary())
			s.Release()
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 1, Failed: 1})
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Settle()
		},
	},
	{
		Name: "canary-step-error", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "Step analysis cannot reach Prometheus and ends in Error; the controller aborts the update.",
		Play: func(s *S) {
			s.Deploy(stepAnalysisCanary())
			s.Release()
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 1, Errors: 2, ErrorMessage: providerError})
			s.Tick(nil)
			s.Analyse(r, errored, Measured{Successful: 1, Errors: 5, ErrorMessage: providerError})
			s.Settle()
		},
	},
	{
		Name: "canary-step-inconclusive-resumed", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "Step analysis is inconclusive and the rollout pauses; a user resumes it, a second run passes, the canary is promoted.",
		Play: func(s *S) {
			s.Deploy(stepAnalysisCanary())
			s.Release()
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, inconclusive, Measured{Successful: 1, Inconclusive: 1})
			s.Until("paused on the inconclusive run", 5, PausedInconclusive)
			s.Ticks(3)
			s.Tick(s.Resume)
			r = s.Run(step, 1, 1)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "canary-background-promoted-while-running", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "Background analysis runs through every step; the last step sends all traffic to the canary, and the promotion is written while the background run is still Running, which is terminated one reconcile later.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(50), Pause(30), SetWeight(100)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			s.Ticks(3)
			s.Analyse(b, running, Measured{Successful: 2})
			s.Until("promoted", 30, Promoted)
			s.Settle()
		},
	},
	{
		Name: "canary-traffic-routed-background-promoted-while-running", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "As canary-background-promoted-while-running, with SMI traffic routing and the last step at 50 %: the promotion is written while the background run is still Running.",
		Play: func(s *S) {
			s.Deploy(TrafficRouted(CanaryRollout("error-rate", SetWeight(25), Pause(30), SetWeight(50), Pause(30))))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			s.Ticks(3)
			s.Analyse(b, running, Measured{Successful: 2})
			s.Until("promoted", 40, Promoted)
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-during-pause", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "Background analysis fails while the rollout waits on an indefinite pause step; the controller aborts.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(25), Pause(0), SetWeight(50)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			s.Until("paused on the pause step", 20, func(ro *v1alpha1.Rollout) bool { return len(ro.Status.PauseConditions) > 0 })
			s.Ticks(2)
			s.Analyse(b, running, Measured{Successful: 2, Failed: 1})
			s.Tick(nil)
			s.Analyse(b, failed, Measured{Successful: 2, Failed: 2})
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-after-last-step", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "All steps are done but the last canary pods never become ready, so the controller cannot promote; the background analysis fails meanwhile and the controller aborts.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(25), Pause(30), SetWeight(50)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			s.Until("every step done", 30, func(ro *v1alpha1.Rollout) bool {
				return ro.Status.CurrentStepIndex != nil && int(*ro.Status.CurrentStepIndex) == len(ro.Spec.Strategy.Canary.Steps)
			})
			s.w.HoldPods(s.w.Rollout().Status.CurrentPodHash, true)
			s.w.Event("kubelet: the new ReplicaSet's further pods do not become ready")
			s.Ticks(3)
			s.Analyse(b, failed, Measured{Successful: 2, Failed: 2})
			s.Tick(nil)
			s.w.HoldPods(s.w.Rollout().Status.CurrentPodHash, false)
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-after-promotion", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "As canary-background-promoted-while-running, but the background run's next measurement fails before the controller's next reconcile: the run ends Failed after the promotion, and the controller ignores it because the rollout is fully promoted.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(50), Pause(30), SetWeight(100)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			s.Ticks(3)
			s.Analyse(b, running, Measured{Successful: 2, Failed: 1})
			s.Until("promoted", 30, Promoted)
			s.Tick(func() { s.Analyse(b, failed, Measured{Successful: 2, Failed: 2}) })
			s.Settle()
		},
	},
	{
		Name: "canary-background-failed-while-inconclusive", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "The step analysis is inconclusive and the rollout pauses; the background analysis then fails, but the controller does not act on it until a user resumes, and then aborts.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(25), AnalysisStep("success-rate"), SetWeight(50)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, inconclusive, Measured{Successful: 1, Inconclusive: 1})
			s.Until("paused on the inconclusive run", 5, PausedInconclusive)
			s.Tick(nil)
			s.Analyse(b, failed, Measured{Successful: 2, Failed: 2})
			s.Ticks(4)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "canary-step-failed-while-inconclusive", Strategy: "canary", Outcome: OutcomeAborted,
		Summary: "The background analysis is inconclusive and the rollout pauses; the step analysis then fails, but the controller does not act on it until a user resumes, and then aborts.",
		Play: func(s *S) {
			s.Deploy(CanaryRollout("error-rate", SetWeight(25), AnalysisStep("success-rate"), SetWeight(50)))
			s.Release()
			b := s.Run(background, 0, 0)
			s.Analyse(b, running, Measured{Successful: 1})
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(b, inconclusive, Measured{Successful: 1, Inconclusive: 1})
			s.Until("paused on the inconclusive run", 5, PausedInconclusive)
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Ticks(4)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "canary-retry-after-abort", Strategy: "canary", Outcome: OutcomePromoted,
		Summary: "Step analysis fails and the controller aborts; a user retries, the second step run passes, the canary is promoted.",
		Play: func(s *S) {
			s.Deploy(stepAnalysisCanary())
			s.Release()
			r := s.Run(step, 1, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Until("aborted", 5, Aborted)
			s.Ticks(4)
			s.Tick(s.Retry)
			r = s.Run(step, 1, 1)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-prepromotion-successful", Strategy: "blueGreen", Outcome: OutcomePromoted,
		Summary: "Pre-promotion analysis against the preview stack passes; the active Service switches.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("success-rate", ""))
			s.Release()
			r := s.Run(pre, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 2})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-prepromotion-failed", Strategy: "blueGreen", Outcome: OutcomeAborted,
		Summary: "Pre-promotion analysis fails; the controller aborts and the active Service stays on the old stack.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("success-rate", ""))
			s.Release()
			r := s.Run(pre, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-successful", Strategy: "blueGreen", Outcome: OutcomePromoted,
		Summary: "The active Service switches, post-promotion analysis passes, the new stack becomes stable.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("", "success-rate"))
			s.Release()
			r := s.Run(post, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 2})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-failed", Strategy: "blueGreen", Outcome: OutcomeAborted,
		Summary: "The active Service switches, post-promotion analysis fails; the controller aborts and switches the active Service back.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("", "success-rate"))
			s.Release()
			r := s.Run(post, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, running, Measured{Successful: 1, Failed: 1})
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-inconclusive-resumed", Strategy: "blueGreen", Outcome: OutcomePromoted,
		Summary: "Post-promotion analysis is inconclusive and the rollout pauses; a user resumes it, a second run passes.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("", "success-rate"))
			s.Release()
			r := s.Run(post, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, inconclusive, Measured{Successful: 1, Inconclusive: 1})
			s.Until("paused on the inconclusive run", 5, PausedInconclusive)
			s.Ticks(3)
			s.Tick(s.Resume)
			r = s.Run(post, 0, 1)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-prepromotion-passed-postpromotion-error", Strategy: "blueGreen", Outcome: OutcomeAborted,
		Summary: "Pre-promotion analysis passes and the active Service switches; post-promotion analysis then ends in Error and the controller aborts.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("success-rate", "success-rate"))
			s.Release()
			r := s.Run(pre, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			r = s.Run(post, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, errored, Measured{Successful: 1, Errors: 5, ErrorMessage: providerError})
			s.Settle()
		},
	},
	{
		Name: "bluegreen-retry-after-abort", Strategy: "blueGreen", Outcome: OutcomePromoted,
		Summary: "Pre-promotion analysis fails and the controller aborts; a user retries, the second run passes, the active Service switches.",
		Play: func(s *S) {
			s.Deploy(BlueGreenRollout("success-rate", ""))
			s.Release()
			r := s.Run(pre, 0, 0)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, failed, Measured{Successful: 1, Failed: 2})
			s.Until("aborted", 5, Aborted)
			s.Ticks(4)
			s.Tick(s.Retry)
			r = s.Run(pre, 0, 1)
			s.Analyse(r, running, Measured{Successful: 1})
			s.Tick(nil)
			s.Analyse(r, successful, Measured{Successful: 3})
			s.Settle()
		},
	},
}

// Timeline is what gets written to ../testdata/timelines/<name>.yaml.
type Timeline struct {
	Name       string  `json:"name"`
	Strategy   string  `json:"strategy"`
	Summary    string  `json:"summary"`
	Outcome    Outcome `json:"outcome"`
	Controller string  `json:"controller"`
	// Revision and PodTemplateHash identify the revision being delivered (the new Freight).
	Revision        string  `json:"revision"`
	PodTemplateHash string  `json:"podTemplateHash"`
	Frames          []Frame `json:"frames"`
}

// ControllerVersion is the controller the timelines come from.
const ControllerVersion = "github.com/argoproj/argo-rollouts v1.8.5, package rollout (rollout.NewController, driven through Controller.Run)"

// Record plays a scenario on a fresh World.
func Record(sc Scenario) (tl *Timeline, err error) {
	w, err := NewWorld()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(scriptError)
			if !ok {
				panic(r)
			}
			tl, err = nil, se.err
		}
	}()
	sc.Play(&S{w: w})
	if errs := w.SyncErrors(); len(errs) > 0 {
		return nil, fmt.Errorf("the controller failed to reconcile: %v", errs)
	}
	ro := w.Rollout()
	switch sc.Outcome {
	case OutcomePromoted:
		if !Promoted(ro) || ro.Status.Phase != v1alpha1.RolloutPhaseHealthy {
			return nil, fmt.Errorf("expected the new revision promoted and Healthy, ended %s %q (stable %s, current %s)", ro.Status.Phase, ro.Status.Message, ro.Status.StableRS, ro.Status.CurrentPodHash)
		}
	case OutcomeAborted:
		if !Aborted(ro) {
			return nil, fmt.Errorf("expected the update aborted, ended %s %q", ro.Status.Phase, ro.Status.Message)
		}
	}
	return &Timeline{
		Name: sc.Name, Strategy: sc.Strategy, Summary: sc.Summary, Outcome: sc.Outcome,
		Controller:      ControllerVersion,
		Revision:        RevisionOf(ro),
		PodTemplateHash: ro.Status.CurrentPodHash,
		Frames:          w.Frames(),
	}, nil
}
