package scenarios

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// whatEachPolicySays is the outcome each policy declares for a revision promoted without analysis:
// successful keeps the plugin's earlier answer.
var whatEachPolicySays = map[string]string{"successful": "Successful", "inconclusive": "Inconclusive", "failed": "Failed"}

// noAnalysisScenarios are the three ways a Rollout's revision reaches full promotion without analysis.
var noAnalysisScenarios = []harness.NoAnalysisScenario{
	{
		Name: "first-deployment", Case: "first deployment", Outcomes: whatEachPolicySays,
		Summary: "A Stage's first promotion: Argo CD creates the Rollout, whose canary strategy has a step analysis; the controller promotes the first revision at once and runs no analysis (rollout/analysis.go reconcileAnalysisRuns skips it while status.stableRS is empty).",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.DeployRecorded(stepAnalysisCanary("success-rate"))
			s.Settle()
		},
	},
	{
		Name: "canary-without-analysis", Case: "no analysis in the strategy", Outcomes: whatEachPolicySays,
		Summary: "A canary whose steps are weights and pauses only: the new revision goes through them and is promoted with no analysis.",
		Play: func(s *harness.S) {
			s.Deploy(harness.CanaryRollout("", harness.SetWeight(25), harness.Pause(20), harness.SetWeight(50), harness.Pause(20)))
			s.Release()
			s.Settle()
		},
	},
	{
		Name: "canary-analysis-removed", Case: "analysis removed", Outcomes: whatEachPolicySays,
		Summary: "Revision 2's step analysis passes and it is promoted (not recorded); revision 3 removes the analysis step from the strategy, and is promoted with no analysis.",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(stepAnalysisCanary("success-rate"))
			s.DeliverEarlier("Argo CD syncs revision 2: image "+harness.ImageV2, func(ro *v1alpha1.Rollout) {
				ro.Spec.Template.Spec.Containers[0].Image = harness.ImageV2
			})
			s.Until("revision 2 promoted after its analysis", 60, func(ro *v1alpha1.Rollout) bool {
				return harness.Promoted(ro) && ro.Status.Phase == v1alpha1.RolloutPhaseHealthy && harness.RevisionOf(ro) == "2"
			})
			s.Ticks(4)
			s.ReleaseChange("Argo CD syncs the new Freight without the analysis step: image "+harness.ImageV3, func(ro *v1alpha1.Rollout) {
				ro.Spec.Template.Spec.Containers[0].Image = harness.ImageV3
				ro.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{harness.SetWeight(25), harness.SetWeight(50), harness.Pause(20)}
			})
			s.Settle()
		},
	},
}
