// The live suite's delivery: a git repository Argo CD syncs the scenarios' revisions from.

package live

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

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/notifications"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// GitDelivery delivers a scenario's revisions as a user's repository and Kargo would: every revision is
// a git commit of the manifests (AnalysisTemplates, Services, the Rollout) followed by the PostSync
// barrier hook from `analysis-health hooks --post-renderer`, and Argo CD syncs it when the Application's
// operation asks for that commit (Kargo's argocd-update). It never writes the cluster's objects itself.
type GitDelivery struct {
	Argo *installs.ArgoCD
	// CLI is the analysis-health binary (for hooks --post-renderer).
	CLI string

	repo     string
	app      string
	deployed []runtime.Object
	dyn      dynamic.Interface

	mu      sync.Mutex
	changes []installs.HealthChange
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
	// workload, if set, is the workload cluster Argo CD deploys to (a cluster Secret) and the plugin reads
	// (the Project's kubeconfig Secret); nil: Argo CD's own cluster.
	workload *workloadCluster
	// watchedRV is the newest resourceVersion of the Application the watch has processed, and comparedRV
	// the one applied last found Synced at the commit.
	watchedRV, comparedRV int64
}

// destination is the Application's destination server: the workload cluster as Argo CD's cluster Secret
// names it, or Argo CD's own cluster.
func (g *GitDelivery) destination() string {
	if g.workload != nil {
		return g.workload.server
	}
	return "https://kubernetes.default.svc"
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
func (g *GitDelivery) start(w *harness.World, objs []runtime.Object) (string, error) {
	g.deployed = objs
	for _, o := range objs {
		if ro, ok := o.(*v1alpha1.Rollout); ok {
			g.delivered = ro.DeepCopy()
		}
	}
	if g.delivered == nil {
		return "", fmt.Errorf("no Rollout among the objects to deliver")
	}
	g.app = harness.App + "-" + w.Namespace
	g.dyn = w.ControlPlane().Dynamic // Argo CD's Applications are where Kargo is
	g.repo = filepath.Join(g.Argo.Dir, "repo-"+w.Namespace)
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
	meta := map[string]any{"name": g.app, "namespace": cluster.ArgoCDNamespace}
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
			"destination": map[string]any{"server": g.destination(), "namespace": w.Namespace},
		},
	}}
	ctx := context.Background()
	if _, err := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Create(ctx, app, metav1.CreateOptions{}); err != nil {
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
func (g *GitDelivery) Deploy(w *harness.World, objs []runtime.Object) error {
	sha, err := g.start(w, objs)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := g.argocdUpdate("live."+w.Namespace+".deploy", sha); err != nil {
		return err
	}
	// the sync's apply, seen on every object (the controllers' first reconcile must find the templates,
	// as after a user's kubectl apply of the whole stream)
	return g.waitFor("Argo CD applied revision 1", func() (bool, error) {
		for _, o := range objs {
			var err error
			switch o := o.(type) {
			case *v1alpha1.Rollout:
				_, err = w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			case *v1alpha1.AnalysisTemplate:
				_, err = w.Recorder.Argo.ArgoprojV1alpha1().AnalysisTemplates(w.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			case *corev1.Service:
				_, err = w.Recorder.Kube.CoreV1().Services(w.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			case *appsv1.Deployment:
				_, err = w.Recorder.Kube.AppsV1().Deployments(w.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
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
func (g *GitDelivery) Release(w *harness.World, ro *v1alpha1.Rollout, event string) error {
	sha, err := g.commit(g.withRollout(ro), "release: "+kargoverify.FreightImage(ro))
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
func (g *GitDelivery) DeployRelease(w *harness.World, objs []runtime.Object, event string) error {
	sha, err := g.start(w, objs)
	if err != nil {
		return err
	}
	return g.release(w, g.delivered, sha, "the first release", event)
}

// Deliver commits a change of the last delivered Rollout and syncs it as revision 1 was (argocd-update,
// not recorded: a Freight promoted before the scenario's release), and returns once Argo CD applied it.
func (g *GitDelivery) Deliver(w *harness.World, mutate func(*v1alpha1.Rollout), event string) error {
	ro := g.delivered.DeepCopy()
	mutate(ro)
	if err := g.waitOperation(); err != nil {
		return err
	}
	sha, err := g.commit(g.withRollout(ro), "earlier Freight: "+kargoverify.FreightImage(ro))
	if err != nil {
		return err
	}
	g.delivered = ro.DeepCopy()
	if err := g.argocdUpdate("live."+w.Namespace+".earlier", sha); err != nil {
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
// Health seen from then on as recorded.
func (g *GitDelivery) release(w *harness.World, ro *v1alpha1.Rollout, sha, what, event string) error {
	g.releaseSHA = sha
	if g.kargo != nil && g.kargo.real != nil {
		if err := g.kargo.promoteRelease(w, sha, kargoverify.FreightImage(ro)); err != nil {
			return err
		}
	} else {
		if err := g.argocdUpdate(promotionName(w.Namespace), sha); err != nil {
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
	g.changes = append(g.changes, installs.HealthChange{Status: g.last, Recorded: true})
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
func (g *GitDelivery) applied(w *harness.World, ro *v1alpha1.Rollout, sha, what string) error {
	ctx := context.Background()
	want := ro.Spec.Template.Spec.Containers
	if err := g.waitFor("Argo CD applied "+what, func() (bool, error) {
		live, err := w.Recorder.Argo.ArgoprojV1alpha1().Rollouts(w.Namespace).Get(ctx, harness.Name, metav1.GetOptions{})
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
		app, err := g.dyn.Resource(cluster.ApplicationGVR).Namespace(cluster.ArgoCDNamespace).Get(ctx, g.app, metav1.GetOptions{})
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
func (g *GitDelivery) Update(w *harness.World, mutate func(*v1alpha1.Rollout), event string) error {
	ro := g.delivered.DeepCopy()
	mutate(ro)
	sha, err := g.commit(g.withRollout(ro), "the previous Freight again: "+kargoverify.FreightImage(ro))
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
		if out, err := exec.Command(g.Argo.Bin, "terminate-op", "-kubeconfig", g.Argo.Cluster.Kubeconfig, "-namespace", cluster.ArgoCDNamespace,
			"-app", g.app).CombinedOutput(); err != nil {
			return fmt.Errorf("argocd-live terminate-op: %v\n%s", err, out)
		}
		w.Event("user aborts the release's Promotion and terminates its sync (argocd app terminate-op, through Argo CD)")
	}
	if err := g.waitOperation(); err != nil {
		return err
	}
	if g.kargo != nil && g.kargo.real != nil {
		if err := g.kargo.promoteRollback(w, sha, kargoverify.FreightImage(ro)); err != nil {
			return err
		}
	} else {
		if err := g.argocdUpdate(promotionName(w.Namespace)+".rollback", sha); err != nil {
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
