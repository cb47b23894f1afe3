package harness

import (
	"context"
	"errors"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// RunGuard proves that the recorder's clients cannot write an AnalysisRun's or an Experiment's status
// (nor change either object), while the controllers' clients can: every scenario acts through the
// guarded clients, and Record fails a scenario that tried.
func RunGuard(t *testing.T, env *Env) {
	w, err := env.NewWorld(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	ar := &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{Name: "guard"},
		Spec: v1alpha1.AnalysisRunSpec{Metrics: []v1alpha1.Metric{{
			Name: "m", Provider: v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: env.Metrics.URL("m")}},
		}}},
	}
	// creating one without a status is allowed (a verification run), writing its status is not
	if err := w.Create(ar); err != nil {
		t.Fatal(err)
	}
	runs := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace)
	got, err := runs.Get(ctx, "guard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = v1alpha1.AnalysisPhaseSuccessful
	exps := w.Recorder.Argo.ArgoprojV1alpha1().Experiments(w.Namespace)
	withStatus := ar.DeepCopy()
	withStatus.Name = "guard-with-status"
	withStatus.Status.Phase = v1alpha1.AnalysisPhaseSuccessful
	exWithStatus := &v1alpha1.Experiment{ObjectMeta: metav1.ObjectMeta{Name: "guard-with-status"},
		Status: v1alpha1.ExperimentStatus{Phase: v1alpha1.AnalysisPhaseSuccessful}}
	attempts := map[string]error{}
	_, attempts["AnalysisRun UpdateStatus"] = runs.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	_, attempts["AnalysisRun Update"] = runs.Update(ctx, got, metav1.UpdateOptions{})
	_, attempts["AnalysisRun status patch"] = runs.Patch(ctx, "guard", types.MergePatchType, []byte(`{"status":{"phase":"Successful"}}`), metav1.PatchOptions{}, "status")
	_, attempts["AnalysisRun patch of its status"] = runs.Patch(ctx, "guard", types.MergePatchType, []byte(`{"status":{"phase":"Successful"}}`), metav1.PatchOptions{})
	_, attempts["AnalysisRun patch of terminate and status"] = runs.Patch(ctx, "guard", types.MergePatchType, []byte(`{"spec":{"terminate":true},"status":{"phase":"Successful"}}`), metav1.PatchOptions{})
	_, attempts["AnalysisRun JSON patch of terminate"] = runs.Patch(ctx, "guard", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/terminate","value":true}]`), metav1.PatchOptions{})
	_, attempts["AnalysisRun created with a status"] = runs.Create(ctx, withStatus, metav1.CreateOptions{})
	_, attempts["Experiment created with a status"] = exps.Create(ctx, exWithStatus, metav1.CreateOptions{})
	_, attempts["Experiment status patch"] = exps.Patch(ctx, "any", types.MergePatchType, []byte(`{"status":{"phase":"Successful"}}`), metav1.PatchOptions{}, "status")
	for what, err := range attempts {
		if !errors.Is(err, cluster.ErrAnalysisStatusWrite) {
			t.Errorf("%s by the recorder: %v, want %v", what, err, cluster.ErrAnalysisStatusWrite)
		}
	}
	if n := w.RefusedWrites(); n != len(attempts) {
		t.Errorf("%d refused writes counted, want %d", n, len(attempts))
	}
	if _, err := runs.Get(ctx, withStatus.Name, metav1.GetOptions{}); err == nil {
		t.Errorf("the AnalysisRun created with a status exists")
	}
	// the terminate action's merge patch is what a user may send
	if _, err := runs.Patch(ctx, "guard", types.MergePatchType, []byte(`{"spec":{"terminate":true}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("the terminate action's patch was refused: %v", err)
	}
	if got, err := runs.Get(ctx, "guard", metav1.GetOptions{}); err != nil || !got.Spec.Terminate {
		t.Errorf("after the terminate patch: %v, terminate %v", err, got != nil && got.Spec.Terminate)
	}
	if n := w.RefusedWrites(); n != len(attempts) {
		t.Errorf("the terminate patch was counted as refused")
	}
	// nor may it write an Application's status (Argo CD's application controller writes it)
	apps := w.Recorder.Dynamic.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace)
	app := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "guard", "namespace": cluster.ArgoCDNamespace},
		"status":   map[string]any{"health": map[string]any{"status": "Healthy"}}}}
	appAttempts := map[string]error{}
	_, appAttempts["Application created with a status"] = apps.Create(ctx, app, metav1.CreateOptions{})
	_, appAttempts["Application Update"] = apps.Update(ctx, app, metav1.UpdateOptions{})
	_, appAttempts["Application UpdateStatus"] = apps.UpdateStatus(ctx, app, metav1.UpdateOptions{})
	_, appAttempts["Application merge patch of its status"] = apps.Patch(ctx, "guard", types.MergePatchType, []byte(`{"status":{"health":{"status":"Healthy"}}}`), metav1.PatchOptions{})
	_, appAttempts["Application JSON patch of its status"] = apps.Patch(ctx, "guard", types.JSONPatchType, []byte(`[{"op":"replace","path":"/status/health/status","value":"Healthy"}]`), metav1.PatchOptions{})
	for what, err := range appAttempts {
		if !errors.Is(err, cluster.ErrApplicationStatusWrite) {
			t.Errorf("%s by the recorder: %v, want %v", what, err, cluster.ErrApplicationStatusWrite)
		}
	}
	if n := w.RefusedWrites(); n != len(attempts)+len(appAttempts) {
		t.Errorf("%d refused writes counted, want %d", n, len(attempts)+len(appAttempts))
	}
	// a live World's Rollout status is the controllers' alone; the recorder's own World may patch it
	// (the resource actions it stands in for)
	if err := w.Create(CanaryRollout("", SetWeight(50))); err != nil {
		t.Fatal(err)
	}
	if err := w.PatchStatus("resume", `{"status":{"pauseConditions":null}}`); err != nil {
		t.Errorf("the recorder's status action was refused: %v", err)
	}
	live, err := env.NewWorld(Options{Delivery: liveWorld{}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := live.Create(CanaryRollout("", SetWeight(50))); err != nil {
		t.Fatal(err)
	}
	if err := live.PatchStatus("resume", `{"status":{"pauseConditions":null}}`); !errors.Is(err, cluster.ErrApplicationStatusWrite) {
		t.Errorf("a live World's Rollout status patch: %v, want %v", err, cluster.ErrApplicationStatusWrite)
	}
	if n := live.RefusedWrites(); n != 1 {
		t.Errorf("the live World counted %d refused writes, want 1", n)
	}
	// the guard is what refused: the same write through the controllers' clients goes through (the
	// Rollouts CRDs give AnalysisRuns and Experiments no status subresource, so the analysis and
	// experiment controllers write status with an update of the object itself)
	// (the analysis controller measures the run meanwhile: take its latest version, retry on a conflict)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := w.ctrl.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(ctx, "guard", metav1.GetOptions{})
		if err != nil {
			return err
		}
		latest.Status.Phase = v1alpha1.AnalysisPhaseSuccessful
		_, err = w.ctrl.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Update(ctx, latest, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Errorf("the controllers' client cannot write the status either: %v", err)
	}
}

// liveWorld makes a World live (its Delivery set) for the guard's test; nothing is delivered through it.
type liveWorld struct{ Delivery }
