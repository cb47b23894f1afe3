// The live suite's Application: Kargo's argocd-update of it, Argo CD's refresh, the watch of its health
// and the hooks' collector.

package live

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/notifications"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
)

// argocdUpdate is Kargo's argocd-update step starting a sync (pkg/promotion/runner/builtin/
// argocd_updater.go syncApplication): the desired revision into the Application's source, and an
// operation syncing it, with Kargo's info; the operation's outcome is waited for by waitOperation.
func (g *GitDelivery) argocdUpdate(promotion, sha string) error {
	patch := fmt.Sprintf(`{"spec":{"source":{"targetRevision":%q}},"operation":{"initiatedBy":{"username":"kargo"},`+
		`"info":[{"name":"Reason","value":"Promotion triggered a sync of this Application resource."},{"name":%q,"value":%q}],`+
		`"sync":{"revision":%q}}}`, sha, stage.PromotionInfoKey, promotion, sha)
	_, err := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Patch(context.Background(), g.app, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// OperationPhase is the Application's status.operationState.phase, and whether an operation is pending.
func (g *GitDelivery) OperationPhase() (phase string, pending bool, err error) {
	app, err := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Get(context.Background(), g.app, metav1.GetOptions{})
	if err != nil {
		return "", false, err
	}
	phase, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "phase")
	_, pending = app.Object["operation"]
	return phase, pending, nil
}

func (g *GitDelivery) operationMessage() string {
	app, err := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Get(context.Background(), g.app, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	msg, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "message")
	return msg
}

// waitOperation waits until the last operation ended, and notes its phase.
func (g *GitDelivery) waitOperation() error {
	var phase string
	err := g.waitFor("the Argo CD operation ended", func() (bool, error) {
		p, pending, err := g.OperationPhase()
		phase = p
		return err == nil && !pending && (p == "Succeeded" || p == "Failed" || p == "Error"), err
	})
	if err == nil {
		g.Operations = append(g.Operations, phase)
	}
	return err
}

func (g *GitDelivery) waitFor(what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after 60 s (log: %s)", what, g.Argo.Log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refreshAnnotation is Argo CD's refresh request (pkg/apis/application/v1alpha1 AnnotationKeyRefresh),
// which the application controller removes when it has refreshed the Application.
const refreshAnnotation = "argocd.argoproj.io/refresh"

// Refresh asks Argo CD to refresh the Application (as `argocd app get --refresh` does) and waits until
// the controller has done so: the sync point after every tick, so that every state the controllers
// leave is evaluated by Argo CD before the next tick.
func (g *GitDelivery) Refresh(w *harness.World) error {
	apps := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace)
	ctx := context.Background()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"normal"}}}`, refreshAnnotation)
	if _, err := apps.Patch(ctx, g.app, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	asked, kind := time.Now(), "normal"
	return g.waitFor("Argo CD refreshed the Application", func() (bool, error) {
		app, err := apps.Get(ctx, g.app, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, pending := app.GetAnnotations()[refreshAnnotation]
		if pending && time.Since(asked) > 5*time.Second {
			// seen on this loaded machine: a request left in place for over a minute (cause not
			// established); ask again, with the other value so that the Application changes
			kind = map[string]string{"normal": "hard", "hard": "normal"}[kind]
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, refreshAnnotation, kind)
			if _, err := apps.Patch(ctx, g.app, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				return false, err
			}
			asked = time.Now()
		}
		return !pending, nil
	})
}

// watch records every change of the Application's status.health.status, and every distinct state of
// what notifications read of it (notifications.Trim), until Close.
func (g *GitDelivery) watch() error {
	ctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	g.watched = make(chan struct{})
	apps := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace)
	sel := "metadata.name=" + g.app
	list, err := apps.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		cancel()
		return err
	}
	rv := list.GetResourceVersion()
	go func() {
		defer close(g.watched)
		for ctx.Err() == nil {
			wi, err := apps.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			for ev := range wi.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				rv = u.GetResourceVersion()
				st, _, _ := unstructured.NestedString(u.Object, "status", "health", "status")
				trimmed := notifications.Trim(u.Object, g.Argo.Dir)
				n, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
				g.mu.Lock()
				if n > g.watchedRV {
					g.watchedRV = n
				}
				if st != g.last {
					g.last = st
					g.changes = append(g.changes, installs.HealthChange{Status: st, Recorded: g.marked})
				}
				if n := len(g.appFrames); n == 0 || !notifications.Same(g.appFrames[n-1].Application, trimmed) {
					g.appFrames = append(g.appFrames, notifications.Frame{Frame: n, Release: g.marked, Application: trimmed})
				}
				g.mu.Unlock()
			}
			wi.Stop()
		}
	}()
	return nil
}

// collectHooks stands in for Kubernetes' garbage collector, which the API server program does not run:
// Argo CD deletes a finished hook with propagationPolicy Foreground (gitops-engine pkg/sync deleteResource),
// so the API server puts the foregroundDeletion finalizer on it, which the garbage collector removes once
// the object has no dependents. A ConfigMap hook (the barrier) has none: its finalizer is removed at once,
// as the garbage collector would, and the sync waiting for the hook's deletion goes on.
func (g *GitDelivery) collectHooks(w *harness.World) {
	cms := w.Recorder.Kube.CoreV1().ConfigMaps(w.Namespace)
	for {
		select {
		case <-g.watched:
			return
		case <-time.After(50 * time.Millisecond):
		}
		list, err := cms.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, cm := range list.Items {
			if cm.DeletionTimestamp != nil && len(cm.Finalizers) == 1 && cm.Finalizers[0] == metav1.FinalizerDeleteDependents {
				_, _ = cms.Patch(context.Background(), cm.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			}
		}
	}
}

// Health is every change of the Application's health, in order.
func (g *GitDelivery) Health() []installs.HealthChange {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]installs.HealthChange(nil), g.changes...)
}

// AppFrames are the Application's distinct states, in order.
func (g *GitDelivery) AppFrames() []notifications.Frame {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]notifications.Frame(nil), g.appFrames...)
}

// RecordedHealth is the Application's health from the release on, collapsed to changes: its health when
// Argo CD had evaluated the applied revision 2 (the state of frame 0), then every change.
func (g *GitDelivery) RecordedHealth() []string {
	var out []string
	for _, c := range g.Health() {
		if c.Recorded && (len(out) == 0 || out[len(out)-1] != c.Status) {
			out = append(out, c.Status)
		}
	}
	return out
}

// Finish waits for the release's operation to end (or gives up on it after the scenario: a sync whose
// barrier waits on a Rollout that never becomes Healthy runs until terminated), and stops the watch.
func (g *GitDelivery) Finish(w *harness.World) {
	if g.stop != nil {
		g.stop()
		<-g.watched
	}
}

// RunAction runs Argo CD's resource action on the Rollout in the Argo CD program (`argocd-live action`:
// the action's Lua from the installed argocd-cm or the built-ins, and the server's patch), as a user's
// `argocd app actions run` reaches argocd-server: the Rollout's status is written by Argo CD, not by the
// recorder, whose clients refuse that write in the live suite.
func (g *GitDelivery) RunAction(w *harness.World, action, event string) error {
	if action == "retry" && g.kargo != nil {
		if err := g.kargo.userRetried(w); err != nil {
			return err
		}
	}
	out, err := exec.Command(g.Argo.Bin, "action", "-kubeconfig", g.Argo.Cluster.Kubeconfig, "-namespace", cluster.ArgoCDNamespace, "-app", g.app,
		"-resource", "argoproj.io/v1alpha1/rollouts", "-resource-namespace", w.Namespace, "-name", harness.Name, "-action", action).CombinedOutput()
	if err != nil {
		return fmt.Errorf("argocd-live action %s: %v\n%s", action, err, out)
	}
	w.Event("%s, through Argo CD (argocd-live action)", event)
	return nil
}
