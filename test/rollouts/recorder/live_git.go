// The live suite's delivery: a git repository Argo CD syncs the scenarios' revisions from.

package recorder

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/notifications"
)

// GitDelivery delivers a scenario's revisions as a user's repository and Kargo would: every revision is
// a git commit of the manifests (AnalysisTemplates, Services, the Rollout) followed by the PostSync
// barrier hook from `analysis-health hooks --post-renderer`, and Argo CD syncs it when the Application's
// operation asks for that commit (Kargo's argocd-update). It never writes the cluster's objects itself.
type GitDelivery struct {
	Argo *ArgoCD
	// CLI is the analysis-health binary (for hooks --post-renderer).
	CLI string

	repo     string
	app      string
	deployed []runtime.Object
	dyn      dynamic.Interface

	mu      sync.Mutex
	changes []HealthChange
	last    string
	marked  bool
	stop    context.CancelFunc
	watched chan struct{}
	// Operations are the phases the sync operations ended in, in order (Deploy's, then Release's).
	Operations []string
	releaseSHA string
	// kargo, if set, is told when the release's Promotion starts.
	kargo *kargoDriver
	// delivered is the Rollout's manifest as last committed.
	delivered *v1alpha1.Rollout
	// appFrames are the Application's distinct states (notifications.Trim), as the watch saw them.
	appFrames []notifications.Frame
	// watchedRV is the newest resourceVersion of the Application the watch has processed, and comparedRV
	// the one applied last found Synced at the commit.
	watchedRV, comparedRV int64
}

// AppName is the Application of the World.
func (g *GitDelivery) AppName() string { return g.app }

func (g *GitDelivery) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@127.0.0.1", "GIT_COMMITTER_NAME=e2e",
		"GIT_COMMITTER_EMAIL=e2e@127.0.0.1", "GIT_CONFIG_NOSYSTEM=1", "HOME="+g.repo)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// manifests is the YAML stream of objs as a user's repository holds them (no namespace: the
// Application's destination sets it; no status), through the barrier post-renderer.
func (g *GitDelivery) manifests(objs []runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		switch o.(type) {
		case *v1alpha1.Rollout:
			u["apiVersion"], u["kind"] = v1alpha1.SchemeGroupVersion.String(), "Rollout"
		case *v1alpha1.AnalysisTemplate:
			u["apiVersion"], u["kind"] = v1alpha1.SchemeGroupVersion.String(), "AnalysisTemplate"
		case *corev1.Service:
			u["apiVersion"], u["kind"] = "v1", "Service"
		case *appsv1.Deployment:
			u["apiVersion"], u["kind"] = "apps/v1", "Deployment"
		default:
			return nil, fmt.Errorf("cannot deliver %T through git", o)
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "namespace")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		if ro, ok := o.(*v1alpha1.Rollout); ok && ro.Spec.WorkloadRef != nil {
			unstructured.RemoveNestedField(u, "spec", "template")
		}
		raw, err := yaml.Marshal(u)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(raw)
	}
	cmd := exec.Command(g.CLI, "hooks", "--post-renderer")
	cmd.Stdin = &buf
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("analysis-health hooks --post-renderer: %v\n%s", err, stderr.String())
	}
	return out, nil
}

// commit writes the manifests to the repository and commits them; it returns the commit's SHA.
func (g *GitDelivery) commit(objs []runtime.Object, message string) (string, error) {
	raw, err := g.manifests(objs)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(g.repo, "manifests.yaml"), raw, 0o644); err != nil {
		return "", err
	}
	if _, err := g.git("add", "manifests.yaml"); err != nil {
		return "", err
	}
	if _, err := g.git("commit", "-q", "-m", message); err != nil {
		return "", err
	}
	return g.git("rev-parse", "HEAD")
}

// start commits revision 1 and creates the Application at it, unsynced, with the watch of its health and
// the hooks' collector: the Stage before its first Promotion. It returns the commit.
func (g *GitDelivery) start(w *World, objs []runtime.Object) (string, error) {
	g.deployed = objs
	for _, o := range objs {
		if ro, ok := o.(*v1alpha1.Rollout); ok {
			g.delivered = ro.DeepCopy()
		}
	}
	if g.delivered == nil {
		return "", fmt.Errorf("no Rollout among the objects to deliver")
	}
	g.app = App + "-" + w.ns
	g.dyn = w.c.Dynamic
	g.repo = filepath.Join(g.Argo.dir, "repo-"+w.ns)
	if err := os.MkdirAll(g.repo, 0o755); err != nil {
		return "", err
	}
	if _, err := g.git("init", "-q", "-b", "main"); err != nil {
		return "", err
	}
	sha, err := g.commit(objs, "revision 1: "+imageOf(objs))
	if err != nil {
		return "", err
	}
	meta := map[string]any{"name": g.app, "namespace": ArgoCDNamespace}
	if k := g.kargo; k != nil && k.program != nil {
		if k.real, err = setupKargo(w, g, k.bins, k.healthOnly); err != nil {
			return "", err
		}
		// argocd-update updates only an Application that names the Stage (argocd_updater.go authorizeFn)
		meta["annotations"] = map[string]any{"kargo.akuity.io/authorized-stage": k.real.ns + ":" + kargoStageName}
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": meta,
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": "file://" + g.repo, "path": ".", "targetRevision": sha},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": w.ns},
		},
	}}
	ctx := context.Background()
	if _, err := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Create(ctx, app, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if err := g.watch(); err != nil {
		return "", err
	}
	go g.collectHooks(w)
	return sha, nil
}

// Deploy commits revision 1, creates the Application and syncs it (argocd-update), and returns once
// Argo CD applied the Rollout.
func (g *GitDelivery) Deploy(w *World, objs []runtime.Object) error {
	sha, err := g.start(w, objs)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := g.argocdUpdate("live."+w.ns+".deploy", sha); err != nil {
		return err
	}
	// the sync's apply, seen on every object (the controllers' first reconcile must find the templates,
	// as after a user's kubectl apply of the whole stream)
	return g.waitFor("Argo CD applied revision 1", func() (bool, error) {
		for _, o := range objs {
			var err error
			switch o := o.(type) {
			case *v1alpha1.Rollout:
				_, err = w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Get(ctx, o.Name, metav1.GetOptions{})
			case *v1alpha1.AnalysisTemplate:
				_, err = w.c.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.ns).Get(ctx, o.Name, metav1.GetOptions{})
			case *corev1.Service:
				_, err = w.c.Kube.CoreV1().Services(w.ns).Get(ctx, o.Name, metav1.GetOptions{})
			case *appsv1.Deployment:
				_, err = w.c.Kube.AppsV1().Deployments(w.ns).Get(ctx, o.Name, metav1.GetOptions{})
			}
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// Release commits revision 2 (the deployed Rollout as ro), syncs it, waits until Argo CD applied it and
// evaluated the applied state, and marks the health seen from then on as recorded.
func (g *GitDelivery) Release(w *World, ro *v1alpha1.Rollout, event string) error {
	sha, err := g.commit(g.withRollout(ro), "release: "+freightImage(ro))
	if err != nil {
		return err
	}
	g.delivered = ro.DeepCopy()
	// the previous operation (the last delivered revision's, with its PostSync barrier) ended before
	// the release
	if err := g.waitOperation(); err != nil {
		return err
	}
	return g.release(w, ro, sha, "the release", event)
}

// DeployRelease is the Stage's first Promotion: it commits the objects, creates the Application and
// releases them (as Release), so that the recorded release is the one that creates the Rollout.
func (g *GitDelivery) DeployRelease(w *World, objs []runtime.Object, event string) error {
	sha, err := g.start(w, objs)
	if err != nil {
		return err
	}
	return g.release(w, g.delivered, sha, "the first release", event)
}

// Deliver commits a change of the last delivered Rollout and syncs it as revision 1 was (argocd-update,
// not recorded: a Freight promoted before the scenario's release), and returns once Argo CD applied it.
func (g *GitDelivery) Deliver(w *World, mutate func(*v1alpha1.Rollout), event string) error {
	ro := g.delivered.DeepCopy()
	mutate(ro)
	if err := g.waitOperation(); err != nil {
		return err
	}
	sha, err := g.commit(g.withRollout(ro), "earlier Freight: "+freightImage(ro))
	if err != nil {
		return err
	}
	g.delivered = ro.DeepCopy()
	if err := g.argocdUpdate("live."+w.ns+".earlier", sha); err != nil {
		return err
	}
	if err := g.applied(w, ro, sha, "an earlier Freight"); err != nil {
		return err
	}
	w.Event("%s", event)
	return nil
}

// withRollout is the deployed objects with ro for the Rollout.
func (g *GitDelivery) withRollout(ro *v1alpha1.Rollout) []runtime.Object {
	var objs []runtime.Object
	for _, o := range g.deployed {
		if _, ok := o.(*v1alpha1.Rollout); ok {
			o = ro
		}
		objs = append(objs, o)
	}
	return objs
}

// imageOf is the image of the Rollout among objs.
func imageOf(objs []runtime.Object) string {
	for _, o := range objs {
		if ro, ok := o.(*v1alpha1.Rollout); ok && len(ro.Spec.Template.Spec.Containers) > 0 {
			return ro.Spec.Template.Spec.Containers[0].Image
		}
	}
	return ""
}

// release promotes the commit sha, whose Rollout is ro, as the scenario's release (through Kargo's
// controller, or the model's argocd-update), waits until Argo CD applied and evaluated it, and marks the
// health seen from then on as recorded.
func (g *GitDelivery) release(w *World, ro *v1alpha1.Rollout, sha, what, event string) error {
	g.releaseSHA = sha
	if g.kargo != nil && g.kargo.real != nil {
		if err := g.kargo.promoteRelease(w, sha, freightImage(ro)); err != nil {
			return err
		}
	} else {
		if err := g.argocdUpdate(promotionName(w.ns), sha); err != nil {
			return err
		}
		if g.kargo != nil {
			g.kargo.startPromotion(w, sha)
		}
	}
	if err := g.applied(w, ro, sha, what); err != nil {
		return err
	}
	// the watch runs behind the reads of applied: the health it last saw may be older than the state
	// applied found (seen on this machine: revision 1's Healthy marked as the release's first health)
	if err := g.waitFor("the watch saw the compared Application", func() (bool, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.watchedRV >= g.comparedRV, nil
	}); err != nil {
		return err
	}
	g.mu.Lock()
	g.marked = true
	g.changes = append(g.changes, HealthChange{Status: g.last, Recorded: true})
	if n := len(g.appFrames); n > 0 {
		// the state Argo CD compared the applied release in: the first of the release
		g.appFrames[n-1].Release = true
	}
	g.mu.Unlock()
	w.Event("%s", event)
	return nil
}

// applied waits until Argo CD applied the commit sha (the live Rollout runs ro's image) and a comparison
// found the Application Synced at it: Argo CD's health is of the applied Rollout once its comparison,
// which computes health and sync status in one pass over its cache of the cluster, finds the Application
// Synced at the commit (a comparison over a cache that still held the previous Rollout finds it OutOfSync).
func (g *GitDelivery) applied(w *World, ro *v1alpha1.Rollout, sha, what string) error {
	ctx := context.Background()
	want := ro.Spec.Template.Spec.Containers
	if err := g.waitFor("Argo CD applied "+what, func() (bool, error) {
		live, err := w.c.Argo.ArgoprojV1alpha1().Rollouts(w.ns).Get(ctx, Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) { // a first release creates it
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return len(live.Spec.Template.Spec.Containers) > 0 && len(want) > 0 && live.Spec.Template.Spec.Containers[0].Image == want[0].Image, nil
	}); err != nil {
		return err
	}
	var seen string
	err := g.waitFor("Argo CD compared the applied "+what, func() (bool, error) {
		if err := g.Refresh(w); err != nil {
			return false, err
		}
		app, err := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Get(ctx, g.app, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st, _, _ := unstructured.NestedString(app.Object, "status", "sync", "status")
		rev, _, _ := unstructured.NestedString(app.Object, "status", "sync", "revision")
		phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
		msg, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "message")
		seen = fmt.Sprintf("sync %s at %s (want %s), operation %s %q", st, rev, sha, phase, msg)
		if st == "Synced" && rev == sha {
			// etcd's revisions: resourceVersions of one object increase as integers (the API server of
			// the suite is a real one on etcd)
			n, err := strconv.ParseInt(app.GetResourceVersion(), 10, 64)
			if err != nil {
				return false, fmt.Errorf("resourceVersion %q: %w", app.GetResourceVersion(), err)
			}
			g.mu.Lock()
			g.comparedRV = n
			g.mu.Unlock()
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last seen: %s", err, seen)
	}
	return nil
}

// Update delivers a later change of the Rollout (the scenario syncing the previous image back) as Kargo
// promotes the previous Freight: a commit of the manifests with ro, and an argocd-update of it. While the
// release's sync still runs (its barrier waits for a Healthy Rollout), Kargo starts no other Promotion to
// the Stage and argocd-update waits for a foreign operation to end (argocd_updater.go mustPerformUpdate),
// so the user first aborts the release's Promotion and terminates its sync (`argocd app terminate-op`,
// through the Argo CD program).
func (g *GitDelivery) Update(w *World, mutate func(*v1alpha1.Rollout), event string) error {
	ro := g.delivered.DeepCopy()
	mutate(ro)
	sha, err := g.commit(g.withRollout(ro), "the previous Freight again: "+freightImage(ro))
	if err != nil {
		return err
	}
	g.delivered = ro.DeepCopy()
	if _, pending, err := g.OperationPhase(); err != nil {
		return err
	} else if pending {
		if g.kargo != nil {
			if err := g.kargo.abortRelease(); err != nil {
				return err
			}
		}
		if out, err := exec.Command(g.Argo.bin, "terminate-op", "-kubeconfig", g.Argo.cluster.Kubeconfig, "-namespace", ArgoCDNamespace,
			"-app", g.app).CombinedOutput(); err != nil {
			return fmt.Errorf("argocd-live terminate-op: %v\n%s", err, out)
		}
		w.Event("user aborts the release's Promotion and terminates its sync (argocd app terminate-op, through Argo CD)")
	}
	if err := g.waitOperation(); err != nil {
		return err
	}
	if g.kargo != nil && g.kargo.real != nil {
		if err := g.kargo.promoteRollback(w, sha, freightImage(ro)); err != nil {
			return err
		}
	} else {
		if err := g.argocdUpdate(promotionName(w.ns)+".rollback", sha); err != nil {
			return err
		}
		if g.kargo != nil {
			g.kargo.startRollback(w, sha)
		}
	}
	if err := g.applied(w, ro, sha, "revision 3"); err != nil {
		return err
	}
	w.Event("%s, promoted by Kargo through git and Argo CD", event)
	return nil
}

// argocdUpdate is Kargo's argocd-update step starting a sync (pkg/promotion/runner/builtin/
// argocd_updater.go syncApplication): the desired revision into the Application's source, and an
// operation syncing it, with Kargo's info; the operation's outcome is waited for by waitOperation.
func (g *GitDelivery) argocdUpdate(promotion, sha string) error {
	patch := fmt.Sprintf(`{"spec":{"source":{"targetRevision":%q}},"operation":{"initiatedBy":{"username":"kargo"},`+
		`"info":[{"name":"Reason","value":"Promotion triggered a sync of this Application resource."},{"name":%q,"value":%q}],`+
		`"sync":{"revision":%q}}}`, sha, stage.PromotionInfoKey, promotion, sha)
	_, err := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Patch(context.Background(), g.app, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// OperationPhase is the Application's status.operationState.phase, and whether an operation is pending.
func (g *GitDelivery) OperationPhase() (phase string, pending bool, err error) {
	app, err := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Get(context.Background(), g.app, metav1.GetOptions{})
	if err != nil {
		return "", false, err
	}
	phase, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "phase")
	_, pending = app.Object["operation"]
	return phase, pending, nil
}

func (g *GitDelivery) operationMessage() string {
	app, err := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace).Get(context.Background(), g.app, metav1.GetOptions{})
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
func (g *GitDelivery) Refresh(w *World) error {
	apps := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace)
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
	apps := g.dyn.Resource(ApplicationGVR).Namespace(ArgoCDNamespace)
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
				trimmed := notifications.Trim(u.Object, g.Argo.dir)
				n, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
				g.mu.Lock()
				if n > g.watchedRV {
					g.watchedRV = n
				}
				if st != g.last {
					g.last = st
					g.changes = append(g.changes, HealthChange{Status: st, Recorded: g.marked})
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
func (g *GitDelivery) collectHooks(w *World) {
	cms := w.c.Kube.CoreV1().ConfigMaps(w.ns)
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
func (g *GitDelivery) Health() []HealthChange {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]HealthChange(nil), g.changes...)
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
func (g *GitDelivery) Finish(w *World) {
	if g.stop != nil {
		g.stop()
		<-g.watched
	}
}

// RunAction runs Argo CD's resource action on the Rollout in the Argo CD program (`argocd-live action`:
// the action's Lua from the installed argocd-cm or the built-ins, and the server's patch), as a user's
// `argocd app actions run` reaches argocd-server: the Rollout's status is written by Argo CD, not by the
// recorder, whose clients refuse that write in the live suite.
func (g *GitDelivery) RunAction(w *World, action, event string) error {
	if action == "retry" && g.kargo != nil {
		if err := g.kargo.userRetried(w); err != nil {
			return err
		}
	}
	out, err := exec.Command(g.Argo.bin, "action", "-kubeconfig", g.Argo.cluster.Kubeconfig, "-namespace", ArgoCDNamespace,
		"-resource", "argoproj.io/v1alpha1/rollouts", "-resource-namespace", w.ns, "-name", Name, "-action", action).CombinedOutput()
	if err != nil {
		return fmt.Errorf("argocd-live action %s: %v\n%s", action, err, out)
	}
	w.Event("%s, through Argo CD (argocd-live action)", event)
	return nil
}
