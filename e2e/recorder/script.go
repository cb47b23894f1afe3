package recorder

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// S runs one scenario on a World. Its methods panic with a scriptError on failure, so scenarios read as
// a sequence of steps; Record turns the panic back into an error.
type S struct {
	w *World
}

type scriptError struct{ err error }

func (s *S) must(err error) {
	if err != nil {
		panic(scriptError{err})
	}
}

func (s *S) fail(format string, args ...any) {
	panic(scriptError{fmt.Errorf(format, args...)})
}

// Deploy creates the objects and reconciles until the first revision is Healthy (the initial deployment
// runs no analysis: rollout/analysis.go skips it while status.stableRS is empty). Not recorded.
func (s *S) Deploy(ro *v1alpha1.Rollout) {
	var objs []runtime.Object
	for _, t := range Templates() {
		objs = append(objs, t)
	}
	for _, svc := range Services(ro) {
		objs = append(objs, svc)
	}
	objs = append(objs, ro)
	s.must(s.w.Create(objs...))
	s.Until("revision 1 Healthy", 30, func(ro *v1alpha1.Rollout) bool {
		return ro.Status.Phase == v1alpha1.RolloutPhaseHealthy && ro.Status.StableRS != "" &&
			ro.Status.StableRS == ro.Status.CurrentPodHash && ro.Status.ObservedGeneration == fmt.Sprint(ro.Generation)
	})
	// let the old revision's leftovers (scale-down delays, informer-driven requeues) settle unrecorded
	s.Ticks(4)
}

// Release applies revision 2 (a new image) as Argo CD syncing new Freight would, and starts recording.
func (s *S) Release() {
	s.must(s.w.UpdateSpec("Argo CD syncs the new Freight: image "+ImageV2, func(ro *v1alpha1.Rollout) {
		ro.Spec.Template.Spec.Containers[0].Image = ImageV2
	}))
	s.must(s.w.StartRecording())
}

// Tick runs one reconcile, after an optional action.
func (s *S) Tick(action func()) {
	s.must(s.w.Tick(func() error {
		if action != nil {
			action()
		}
		return nil
	}))
}

// Ticks runs n reconciles with nothing scripted.
func (s *S) Ticks(n int) {
	for i := 0; i < n; i++ {
		s.Tick(nil)
	}
}

// Until reconciles until cond holds for the stored Rollout, at most max times.
func (s *S) Until(what string, max int, cond func(*v1alpha1.Rollout) bool) {
	for i := 0; i < max; i++ {
		if cond(s.w.Rollout()) {
			return
		}
		s.Tick(nil)
	}
	if !cond(s.w.Rollout()) {
		s.fail("%s: not reached after %d reconciles (phase %s %q)", what, max, s.w.Rollout().Status.Phase, s.w.Rollout().Status.Message)
	}
}

// Settle reconciles until nothing is recorded for six ticks in a row (a minute of the fake clock, longer
// than every pause and scale-down delay in the scenarios), at most 80 times.
func (s *S) Settle() {
	quiet := 0
	for i := 0; i < 80; i++ {
		n := len(s.w.frames)
		s.Tick(nil)
		if len(s.w.frames) == n {
			quiet++
			if quiet == 6 {
				return
			}
		} else {
			quiet = 0
		}
	}
	s.fail("did not settle after 80 reconciles")
}

// Run waits (reconciling) for the current revision's AnalysisRun of the given type to exist and returns
// its name. kind is v1alpha1.RolloutTypeStepLabel etc.; step is the canary step index (Step runs only);
// attempt 0 is the first run, attempt n the n-th re-run (name suffix ".n", utils/analysis
// CreateWithCollisionCounter).
func (s *S) Run(kind string, step int, attempt int) string {
	var name string
	find := func(ro *v1alpha1.Rollout) bool {
		rev := ro.Annotations[annotations.RevisionAnnotation]
		base := ""
		for _, ar := range s.w.AnalysisRuns() {
			if ar.Labels[v1alpha1.RolloutTypeLabel] != kind || ar.Annotations[annotations.RevisionAnnotation] != rev {
				continue
			}
			if kind == v1alpha1.RolloutTypeStepLabel && ar.Labels[v1alpha1.RolloutCanaryStepIndexLabel] != fmt.Sprint(step) {
				continue
			}
			if !strings.Contains(ar.Name, ".") {
				base = ar.Name
			}
		}
		if base == "" {
			return false
		}
		want := base
		if attempt > 0 {
			want = fmt.Sprintf("%s.%d", base, attempt)
		}
		for _, ar := range s.w.AnalysisRuns() {
			if ar.Name == want {
				name = want
				return true
			}
		}
		return false
	}
	s.Until(fmt.Sprintf("%s AnalysisRun (step %d, attempt %d) created", kind, step, attempt), 30, find)
	return name
}

// Measured is what the analysis controller has measured so far for the run's single metric.
type Measured struct {
	Successful, Failed, Inconclusive, Errors int32
	// ErrorMessage is the provider's error text of the last errored measurement.
	ErrorMessage string
}

// Analyse writes the run's status: Running while phase is Running, else the verdict, with the message
// the analysis controller writes (analysis/analysis.go assessRunStatus, assessMetricFailureInconclusiveOrError).
func (s *S) Analyse(name string, phase v1alpha1.AnalysisPhase, m Measured) {
	var ar *v1alpha1.AnalysisRun
	for _, r := range s.w.AnalysisRuns() {
		if r.Name == name {
			ar = r.DeepCopy()
		}
	}
	if ar == nil {
		s.fail("no AnalysisRun %s", name)
	}
	now := metav1.NewTime(s.w.clock())
	metric := ar.Spec.Metrics[0]
	st := v1alpha1.AnalysisRunStatus{Phase: phase, StartedAt: ar.Status.StartedAt, DryRunSummary: &v1alpha1.RunSummary{}}
	if st.StartedAt == nil {
		st.StartedAt = &now
	}
	res := v1alpha1.MetricResult{
		Name:         metric.Name,
		Phase:        phase,
		Count:        m.Successful + m.Failed + m.Inconclusive,
		Successful:   m.Successful,
		Failed:       m.Failed,
		Inconclusive: m.Inconclusive,
		Error:        m.Errors,
	}
	// measurements oldest first, one per interval; errors last so that they are consecutive
	add := func(n int32, p v1alpha1.AnalysisPhase, value, msg string) {
		for i := int32(0); i < n; i++ {
			res.Measurements = append(res.Measurements, v1alpha1.Measurement{Phase: p, Value: value, Message: msg})
		}
	}
	add(m.Successful, v1alpha1.AnalysisPhaseSuccessful, "[0.994]", "")
	add(m.Failed, v1alpha1.AnalysisPhaseFailed, "[0.912]", "")
	add(m.Inconclusive, v1alpha1.AnalysisPhaseInconclusive, "[]", "")
	add(m.Errors, v1alpha1.AnalysisPhaseError, "", m.ErrorMessage)
	if metric.Name == "error-rate" {
		for i := range res.Measurements {
			switch res.Measurements[i].Phase {
			case v1alpha1.AnalysisPhaseSuccessful:
				res.Measurements[i].Value = "[0.0021]"
			case v1alpha1.AnalysisPhaseFailed:
				res.Measurements[i].Value = "[0.0734]"
			}
		}
	}
	n := len(res.Measurements)
	for i := range res.Measurements {
		t := metav1.NewTime(now.Add(-time.Duration(n-1-i) * time.Minute))
		res.Measurements[i].StartedAt = &t
		res.Measurements[i].FinishedAt = &t
	}
	if m.Errors > 0 {
		res.ConsecutiveError = m.Errors
	} else if m.Successful > 0 && m.Failed == 0 && m.Inconclusive == 0 {
		res.ConsecutiveSuccess = m.Successful
	}
	limits := ""
	switch phase {
	case v1alpha1.AnalysisPhaseRunning:
		if m.Errors > 0 {
			res.Message = m.ErrorMessage
		}
	case v1alpha1.AnalysisPhaseFailed:
		limits = fmt.Sprintf("failed (%d) > failureLimit (%d)", m.Failed, metric.FailureLimit.IntValue())
	case v1alpha1.AnalysisPhaseInconclusive:
		limit := 0
		if metric.InconclusiveLimit != nil {
			limit = metric.InconclusiveLimit.IntValue()
		}
		limits = fmt.Sprintf("inconclusive (%d) > inconclusiveLimit (%d)", m.Inconclusive, limit)
	case v1alpha1.AnalysisPhaseError:
		limits = fmt.Sprintf("consecutiveErrors (%d) > consecutiveErrorLimit (%d)", m.Errors, defaults.GetConsecutiveErrorLimitOrDefault(&metric))
		res.Message = m.ErrorMessage
	}
	if phase.Completed() {
		st.CompletedAt = &now
		summary := v1alpha1.RunSummary{Count: 1}
		switch phase {
		case v1alpha1.AnalysisPhaseSuccessful:
			summary.Successful = 1
		case v1alpha1.AnalysisPhaseFailed:
			summary.Failed = 1
		case v1alpha1.AnalysisPhaseInconclusive:
			summary.Inconclusive = 1
		case v1alpha1.AnalysisPhaseError:
			summary.Error = 1
		}
		st.RunSummary = summary
		if limits != "" {
			st.Message = fmt.Sprintf("Metric %q assessed %s due to %s", metric.Name, phase, limits)
			if res.Message != "" {
				st.Message += fmt.Sprintf(": \"Error Message: %s\"", res.Message)
			}
		}
	} else {
		res.Phase = v1alpha1.AnalysisPhaseRunning
		st.RunSummary = v1alpha1.RunSummary{Count: 1}
	}
	st.MetricResults = []v1alpha1.MetricResult{res}
	what := string(phase)
	if st.Message != "" {
		what += ": " + st.Message
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	s.must(s.w.SetAnalysisRunStatus(name, st, fmt.Sprintf("AnalysisRun %s %s (%d measurement%s)", name, what, n, plural)))
}

// Resume is Argo CD's built-in Rollout "resume" action (argo-cd resource_customizations/argoproj.io/
// Rollout/actions/resume/action.lua: pauseConditions = nil), as a status merge patch.
func (s *S) Resume() {
	s.must(s.w.PatchStatus("user runs the Argo CD resume action (status.pauseConditions = nil)", `{"status":{"pauseConditions":null}}`))
}

// Retry is Argo CD's built-in Rollout "retry" action (actions/retry/action.lua: status.abort = nil).
func (s *S) Retry() {
	s.must(s.w.PatchStatus("user runs the Argo CD retry action (status.abort = nil)", `{"status":{"abort":null}}`))
}

// Promoted reports whether the current revision is the stable one.
func Promoted(ro *v1alpha1.Rollout) bool {
	return ro.Status.ObservedGeneration == fmt.Sprint(ro.Generation) && ro.Status.StableRS == ro.Status.CurrentPodHash
}

// Aborted reports whether the controller aborted the update.
func Aborted(ro *v1alpha1.Rollout) bool {
	return ro.Status.Abort && ro.Status.Phase == v1alpha1.RolloutPhaseDegraded
}

// PausedInconclusive reports the InconclusiveAnalysisRun pause.
func PausedInconclusive(ro *v1alpha1.Rollout) bool {
	for _, c := range ro.Status.PauseConditions {
		if c.Reason == v1alpha1.PauseReasonInconclusiveAnalysis {
			return true
		}
	}
	return false
}
