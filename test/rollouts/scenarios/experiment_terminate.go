package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// RunExperimentTerminate measures what our Experiment terminate action (docs/actions.md) leads to with the
// real controllers: a canary's experiment step whose requiredForCompletion analysis is measuring, then
// the action run through the CLI and applied as Argo CD applies it. The experiment controller scales the
// template down and terminates the run, which the analysis controller ends Successful, "Run Terminated";
// but while the Experiment is terminating, reconcileAnalysisRun returns before it copies the run's phase
// into the Experiment's status (experiments/experiment.go, v1.8.5 and v1.10.2 alike), so the Experiment
// stays Running with its analysis Running, and the Rollout waits at the step. That is why no recorded
// timeline has this action, and why docs/actions.md says to abort the Rollout instead.
func RunExperimentTerminate(t *testing.T, env *harness.Env) {
	const after = 12 // ticks of 10 s after the action: two minutes of the controllers' clock
	var ex string
	var report []string
	sc := harness.Scenario{
		Name: "canary-experiment-terminate-action", Strategy: "canary",
		Play: func(s *harness.S) {
			s.Answers("success-rate", good)
			s.Deploy(harness.CanaryRollout("", harness.SetWeight(25), harness.ExperimentStep("success-rate-long"), harness.SetWeight(50)))
			s.Release()
			s.Until("experiment created", 30, func(ro *v1alpha1.Rollout) bool {
				prefix := fmt.Sprintf("%s-%s-%s-%d", ro.Name, ro.Status.CurrentPodHash, ro.Annotations[annotations.RevisionAnnotation], 1)
				for _, e := range s.World.Experiments() {
					if e.Name == prefix || strings.HasPrefix(e.Name, prefix+"-") {
						ex = e.Name
						return true
					}
				}
				return false
			})
			s.Until("experiment's run measured once", 20, func(*v1alpha1.Rollout) bool {
				for _, ar := range s.World.AnalysisRuns() {
					if ref := metav1.GetControllerOf(&ar); ref != nil && ref.Name == ex && len(ar.Status.MetricResults) > 0 && ar.Status.MetricResults[0].Count >= 1 {
						return true
					}
				}
				return false
			})
			s.Tick(func() { s.Terminate("Experiment", ex) })
			s.Ticks(after)
		},
	}
	w, err := env.NewWorld(sc.Options)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := harness.Play(w, sc.Play); err != nil {
		t.Fatal(err)
	}
	if errs := w.SyncErrors(); len(errs) > 0 {
		t.Fatalf("the controllers failed to reconcile: %v", errs)
	}
	var run *v1alpha1.AnalysisRun
	for _, ar := range w.AnalysisRuns() {
		if ref := metav1.GetControllerOf(&ar); ref != nil && ref.Name == ex {
			run = ar.DeepCopy()
		}
	}
	if run == nil {
		t.Fatalf("no run of experiment %s", ex)
	}
	if !run.Spec.Terminate || run.Status.Phase != v1alpha1.AnalysisPhaseSuccessful || run.Status.Message != "Run Terminated" {
		t.Errorf("the experiment's run %s: terminate %v, %s %q; want the controller's terminate, Successful \"Run Terminated\"", run.Name, run.Spec.Terminate, run.Status.Phase, run.Status.Message)
	}
	for _, e := range w.Experiments() {
		if e.Name != ex {
			continue
		}
		var analyses []string
		for _, a := range e.Status.AnalysisRuns {
			analyses = append(analyses, fmt.Sprintf("%s %s", a.AnalysisRun, a.Phase))
		}
		report = append(report, fmt.Sprintf("Experiment %s: terminate %v, phase %s, analyses [%s]", e.Name, e.Spec.Terminate, e.Status.Phase, strings.Join(analyses, ", ")))
		if !e.Spec.Terminate || e.Status.Phase != v1alpha1.AnalysisPhaseRunning || len(e.Status.AnalysisRuns) != 1 || e.Status.AnalysisRuns[0].Phase != v1alpha1.AnalysisPhaseRunning {
			t.Errorf("%s, %d ticks after the action: the controller completed it (docs/actions.md says it does not; update both)", report[len(report)-1], after)
		}
	}
	ro := w.Rollout()
	if harness.Promoted(ro) {
		t.Errorf("the Rollout went past the experiment step (%s)", ro.Status.Phase)
	}
	t.Logf("%s; run %s Successful %q; Rollout %s %q, %d ticks after the action", strings.Join(report, "; "), run.Name, run.Status.Message, ro.Status.Phase, ro.Status.Message, after)
}
