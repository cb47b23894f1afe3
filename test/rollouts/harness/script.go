package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/kubectl-argo-rollouts/cmd/promote"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// S runs one scenario on a World. Its methods panic with a scriptError on failure, so scenarios read as
// a sequence of steps; Record turns the panic back into an error.
type S struct {
	World *World
	// deployed is the Rollout as Deploy delivered it (what a Delivery releases the next revision from).
	deployed *v1alpha1.Rollout
}

type ScriptError struct{ Err error }

// Play runs a scenario's steps on w and returns the error a step failed with.
func Play(w *World, steps func(*S)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(ScriptError)
			if !ok {
				panic(r)
			}
			err = se.Err
		}
	}()
	steps(&S{World: w})
	return nil
}

func (s *S) Must(err error) {
	if err != nil {
		panic(ScriptError{err})
	}
}

func (s *S) Fail(format string, args ...any) {
	panic(ScriptError{fmt.Errorf(format, args...)})
}

// Deploy creates the objects and reconciles until the first revision is Healthy (the initial deployment
// runs no analysis: rollout/analysis.go skips it while status.stableRS is empty). Not recorded.
func (s *S) Deploy(ro *v1alpha1.Rollout, extra ...runtime.Object) {
	var objs []runtime.Object
	for _, t := range Templates(s.World.Metrics()) {
		objs = append(objs, t)
	}
	objs = append(objs, extra...)
	for _, svc := range Services(ro) {
		objs = append(objs, svc)
	}
	objs = append(objs, ro)
	if d := s.World.opts.Delivery; d != nil {
		s.deployed = ro.DeepCopy()
		s.Must(d.Deploy(s.World, objs))
	} else {
		s.Must(s.World.Create(objs...))
	}
	s.Until("revision 1 Healthy", 30, func(ro *v1alpha1.Rollout) bool {
		return ro.Status.Phase == v1alpha1.RolloutPhaseHealthy && ro.Status.StableRS != "" &&
			ro.Status.StableRS == ro.Status.CurrentPodHash && ro.Status.ObservedGeneration == fmt.Sprint(ro.Generation)
	})
	// let the old revision's leftovers (scale-down delays, informer-driven requeues) settle unrecorded
	s.Ticks(4)
}

// Release applies revision 2 (a new image) as Argo CD syncing new Freight would, and starts recording.
func (s *S) Release() {
	s.ReleaseWith(nil)
}

// ReleaseWith is Release with further changes of the same apply.
func (s *S) ReleaseWith(mutate func(*v1alpha1.Rollout)) {
	s.ReleaseChange("Argo CD syncs the new Freight: image "+ImageV2, func(ro *v1alpha1.Rollout) {
		ro.Spec.Template.Spec.Containers[0].Image = ImageV2
		if mutate != nil {
			mutate(ro)
		}
	})
}

// ReleaseChange releases the change release of the Rollout as last delivered, named event, and starts
// Recording.
func (s *S) ReleaseChange(event string, release func(*v1alpha1.Rollout)) {
	if d := s.World.opts.Delivery; d != nil {
		ro := s.deployed.DeepCopy()
		release(ro)
		s.Must(d.Release(s.World, ro, event))
	} else {
		s.Must(s.World.UpdateSpec(event, release))
	}
	s.Must(s.World.StartRecording())
}

// ReleaseWorkload applies revision 2 to the Deployment a workloadRef Rollout references (Argo CD syncs
// the Deployment; the Rollout object is not changed), and starts recording.
func (s *S) ReleaseWorkload() {
	if s.World.opts.Delivery != nil {
		s.Fail("%v: a workloadRef release writes the Deployment", ErrNoDelivery)
	}
	ctx := context.Background()
	deps := s.World.Recorder.Kube.AppsV1().Deployments(s.World.Namespace)
	dep, err := deps.Get(ctx, Name, metav1.GetOptions{})
	s.Must(err)
	dep.Spec.Template.Spec.Containers[0].Image = ImageV2
	dep, err = deps.Update(ctx, dep, metav1.UpdateOptions{})
	s.Must(err)
	// the controller's workloadRef resolver notices the change from its own Deployment informer and
	// stamps the Rollout (rollout.argoproj.io/workload-generation), asynchronously: wait for it
	deadline := time.Now().Add(30 * time.Second)
	for s.World.Rollout().Annotations[annotations.WorkloadGenerationAnnotation] != fmt.Sprint(dep.Generation) {
		if time.Now().After(deadline) {
			s.Fail("the Rollout was not stamped with workload generation %d", dep.Generation)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.World.Event("Argo CD syncs the new Freight into Deployment %s: image %s", Name, ImageV2)
	s.Must(s.World.StartRecording())
}

// Answers scripts the metrics server's answers to a metric's measurements, in order (the last repeats).
func (s *S) Answers(metric string, answers ...Answer) {
	s.World.Metrics().Script(metric, answers...)
}

// MetricsDown makes every measurement fail with connection refused until MetricsUp.
func (s *S) MetricsDown() {
	s.Must(s.World.Metrics().Down())
	s.World.Event("metrics server stops listening (connection refused)")
}

// MetricsUp lets the metrics server listen again.
func (s *S) MetricsUp() {
	s.Must(s.World.Metrics().Up())
	s.World.Event("metrics server listens again")
}

// Tick runs one reconcile, after an optional action.
func (s *S) Tick(action func()) {
	s.Must(s.World.Tick(func() error {
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
		if cond(s.World.Rollout()) {
			return
		}
		s.Tick(nil)
	}
	if !cond(s.World.Rollout()) {
		var runs []string
		for _, st := range s.World.arState {
			runs = append(runs, st)
		}
		sort.Strings(runs)
		s.Fail("%s: not reached after %d reconciles (phase %s %q; %s)", what, max, s.World.Rollout().Status.Phase, s.World.Rollout().Status.Message, strings.Join(runs, " | "))
	}
}

// Settle reconciles until nothing is recorded for six ticks in a row (a minute of the fake clock, longer
// than every pause and scale-down delay in the scenarios), at most 80 times.
func (s *S) Settle() {
	quiet := 0
	for i := 0; i < 80; i++ {
		n := len(s.World.frames)
		s.Tick(nil)
		if len(s.World.frames) == n {
			quiet++
			if quiet == 6 {
				return
			}
		} else {
			quiet = 0
		}
	}
	s.Fail("did not settle after 80 reconciles")
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
		for _, ar := range s.World.AnalysisRuns() {
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
		for _, ar := range s.World.AnalysisRuns() {
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

// Resume is Argo CD's built-in Rollout "resume" action (argo-cd resource_customizations/argoproj.io/
// Rollout/actions/resume/action.lua: pauseConditions = nil), as a status merge patch.
func (s *S) Resume() {
	s.rolloutAction("resume", "user runs the Argo CD resume action (status.pauseConditions = nil)", `{"status":{"pauseConditions":null}}`)
}

// Retry is Argo CD's built-in Rollout "retry" action (actions/retry/action.lua: status.abort = nil).
func (s *S) Retry() {
	s.rolloutAction("retry", "user runs the Argo CD retry action (status.abort = nil)", `{"status":{"abort":null}}`)
}

// Abort is Argo CD's built-in Rollout "abort" action (actions/abort/action.lua: status.abort = true).
func (s *S) Abort() {
	s.rolloutAction("abort", "user runs the Argo CD abort action (status.abort = true)", `{"status":{"abort":true}}`)
}

// ActionRunner is a Delivery through which users run Argo CD's resource actions (the live suite: Argo
// CD's own Lua and patch, GitDelivery.RunAction), instead of the recorder's patch of what the action does.
type ActionRunner interface {
	RunAction(w *World, action, event string) error
}

func (s *S) rolloutAction(action, event, patch string) {
	if r, ok := s.World.opts.Delivery.(ActionRunner); ok {
		s.Must(r.RunAction(s.World, action, event))
		return
	}
	s.Must(s.World.PatchStatus(event, patch))
}

// PromoteFull is `kubectl argo rollouts promote --full`, run through the plugin's own code
// (pkg/kubectl-argo-rollouts/cmd/promote PromoteRollout with full=true).
func (s *S) PromoteFull() {
	_, err := promote.PromoteRollout(s.World.Recorder.Argo.ArgoprojV1alpha1().Rollouts(s.World.Namespace), Name, false, false, true)
	s.Must(err)
	s.World.Event("user runs kubectl argo rollouts promote --full")
}

// SkipStep is `kubectl argo rollouts promote` (PromoteRollout, no flags): on a paused Rollout it
// unpauses it, else it moves status.currentStepIndex past the current step.
func (s *S) SkipStep() {
	_, err := promote.PromoteRollout(s.World.Recorder.Argo.ArgoprojV1alpha1().Rollouts(s.World.Namespace), Name, false, false, false)
	s.Must(err)
	s.World.Event("user runs kubectl argo rollouts promote")
}

// SkipCurrentStep is `kubectl argo rollouts promote --skip-current-step`.
func (s *S) SkipCurrentStep() {
	_, err := promote.PromoteRollout(s.World.Recorder.Argo.ArgoprojV1alpha1().Rollouts(s.World.Namespace), Name, true, false, false)
	s.Must(err)
	s.World.Event("user runs kubectl argo rollouts promote --skip-current-step")
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

// Terminate runs analysis-health's terminate action (lua/argoproj.io/<Kind>/actions/terminate) on an
// AnalysisRun or Experiment through the CLI, which evaluates it as Argo CD does, and sends what Argo CD
// sends for it: a merge patch of what the action changed (spec.terminate = true).
func (s *S) Terminate(kind, name string) {
	var obj any
	var err error
	ctx := context.Background()
	switch kind {
	case "AnalysisRun":
		obj, err = s.World.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(s.World.Namespace).Get(ctx, name, metav1.GetOptions{})
	case "Experiment":
		obj, err = s.World.Recorder.Argo.ArgoprojV1alpha1().Experiments(s.World.Namespace).Get(ctx, name, metav1.GetOptions{})
	default:
		err = fmt.Errorf("no terminate action for %s", kind)
	}
	s.Must(err)
	raw, err := json.Marshal(obj)
	s.Must(err)
	var in map[string]any
	s.Must(json.Unmarshal(raw, &in))
	in["apiVersion"], in["kind"] = v1alpha1.SchemeGroupVersion.String(), kind
	raw, err = json.Marshal(in)
	s.Must(err)
	cli, err := CLIBinary()
	s.Must(err)
	cmd := exec.Command(cli, "action", "run", "terminate", "-f", "-")
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.Fail("analysis-health action run terminate on %s %s: %v: %s", kind, name, err, stderr.String())
	}
	var result map[string]any
	s.Must(yaml.Unmarshal(out, &result))
	spec, _ := result["spec"].(map[string]any)
	if spec["terminate"] != true {
		s.Fail("the terminate action did not set spec.terminate on %s %s: %s", kind, name, out)
	}
	patch := []byte(cluster.UserAction)
	switch kind {
	case "AnalysisRun":
		_, err = s.World.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(s.World.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "Experiment":
		_, err = s.World.Recorder.Argo.ArgoprojV1alpha1().Experiments(s.World.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	s.Must(err)
	s.World.Event("user runs the analysis-health terminate action on %s %s (spec.terminate = true)", kind, name)
}

var cli struct {
	once sync.Once
	path string
	err  error
}

// CLIBinary is the analysis-health CLI of the main module: $E2E_ANALYSIS_HEALTH (the Makefile builds it
// once), or built here once per test process.
func CLIBinary() (string, error) {
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "analysis-health-cli-")
		if err != nil {
			cli.err = err
			return
		}
		cli.path, cli.err = BuildMain(dir, "E2E_ANALYSIS_HEALTH", "./cmd/analysis-health")
	})
	return cli.path, cli.err
}

// BuildMain builds a command of the main module with the machine's toolchain (the main module's), or
// takes it from the environment variable (the Makefile builds both once for both recorder modules).
func BuildMain(dir, env, pkg string) (string, error) {
	if bin := os.Getenv(env); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = cluster.RepoRoot()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}
