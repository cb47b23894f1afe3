// The blue-green scenarios.

package scenarios

import (
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// blueGreenScenarios are the blue-green Scenarios, in recording order.
var blueGreenScenarios = []harness.Scenario{
	{
		Name: "bluegreen-prepromotion-successful", Strategy: "blueGreen", Outcome: harness.OutcomePromoted, Verdict: "pre Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "Pre-promotion analysis against the preview stack passes; the active Service switches.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(harness.BlueGreenRollout("success-rate", ""))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "bluegreen-prepromotion-failed", Strategy: "blueGreen", Outcome: harness.OutcomeAborted, Verdict: "pre Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "Pre-promotion analysis fails; the controller aborts and the active Service stays on the old stack.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, bad, bad)
			s.Deploy(harness.BlueGreenRollout("success-rate", ""))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-successful", Strategy: "blueGreen", Outcome: harness.OutcomePromoted, Verdict: "post Successful",
		Verification: "Successful", Kargo: "Successful",
		Summary: "The active Service switches, post-promotion analysis passes, the new stack becomes stable.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(harness.BlueGreenRollout("", "success-rate"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-failed", Strategy: "blueGreen", Outcome: harness.OutcomeAborted, Verdict: "post Failed",
		Verification: "Failed", Kargo: "not started",
		Summary: "The active Service switches, post-promotion analysis fails; the controller aborts and switches the active Service back.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, bad, bad)
			s.Deploy(harness.BlueGreenRollout("", "success-rate"))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "bluegreen-postpromotion-inconclusive-resumed", Strategy: "blueGreen", Outcome: harness.OutcomePromoted, Verdict: "post Inconclusive; post.1 Successful",
		Verification: "Inconclusive", Kargo: "Successful",
		Summary: "Post-promotion analysis is inconclusive and the rollout pauses; a user resumes it, a second run passes.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good, meh, good)
			s.Deploy(harness.BlueGreenRollout("", "success-rate"))
			s.Release()
			s.Until("paused on the inconclusive run", 20, harness.PausedInconclusive)
			s.Ticks(3)
			s.Tick(s.Resume)
			s.Settle()
		},
	},
	{
		Name: "bluegreen-prepromotion-passed-postpromotion-error", Strategy: "blueGreen", Outcome: harness.OutcomeAborted, Verdict: "post Error; pre Successful",
		Verification: "Failed", Kargo: "not started",
		Summary: "Pre-promotion analysis passes and the active Service switches; the metrics endpoint then answers 500 and post-promotion analysis ends in Error; the controller aborts.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(harness.BlueGreenRollout("success-rate", "success-rate"))
			s.Release()
			s.Run(harness.Post, 0, 0)
			s.Answers("success-rate", e500)
			s.Settle()
		},
	},
	{
		Name: "bluegreen-retry-after-abort", Strategy: "blueGreen", Outcome: harness.OutcomePromoted, Verdict: "pre Failed; pre.1 Successful",
		Verification: "Failed", Kargo: "Successful",
		Summary: "Pre-promotion analysis fails and the controller aborts; a user retries, the second run passes, the active Service switches.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", bad)
			s.Deploy(harness.BlueGreenRollout("success-rate", ""))
			s.Release()
			s.Until("aborted", 20, harness.Aborted)
			s.Answers("success-rate", good)
			s.Ticks(4)
			s.Tick(s.Retry)
			s.Settle()
		},
	},
	{
		Name: "bluegreen-auto-promotion-seconds-postpromotion-failed", Strategy: "blueGreen", Outcome: harness.OutcomeAborted, Verdict: "post Failed; pre Successful",
		Verification: "Failed", Kargo: "not started",
		Summary: "autoPromotionSeconds 20: pre-promotion analysis passes, the rollout pauses (BlueGreenPause) and promotes itself 20 s later; post-promotion analysis then fails after the switch and the controller aborts, switching the active Service back.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			ro := harness.BlueGreenRollout("success-rate", "success-rate")
			ro.Spec.Strategy.BlueGreen.AutoPromotionSeconds = 20
			s.Deploy(ro)
			s.Release()
			s.Run(harness.Post, 0, 0)
			s.Answers("success-rate", bad)
			s.Settle()
		},
	},
}
