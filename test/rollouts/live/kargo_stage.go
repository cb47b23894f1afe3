package live

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// Kargo's kinds (api/v1alpha1).
var (
	kargoProjects   = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "projects"}
	kargoWarehouses = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "warehouses"}
	kargoStages     = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "stages"}
	kargoFreight    = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "freights"}
	kargoPromotions = schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "promotions"}
	analysisTmpls   = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysistemplates"}
)

const (
	// kargoStageName is the one Stage of a scenario's Project, and its Warehouse's name too.
	kargoStageName = "live"
	// kargoNoShard labels the Warehouse for a shard no controller here runs (api/v1alpha1 LabelKeyShard;
	// pkg/controller ResponsibleFor): its subscriptions name the scenario's repository and image, which
	// Kargo must not poll (the image's registry is an outside host); the Freight is created as Kargo's
	// API server creates it instead.
	kargoNoShard = "not-run-here"
)

// kargoProjectOf is the scenario's Kargo Project, whose namespace holds the Stage, the Freight, the
// Promotions and the verification AnalysisRuns. In one cluster it is the Rollout's namespace, which the
// World's Rollouts controllers watch (a Project of its own would need them to watch it too, and the
// plugin's policy for a verification in one namespace reading a Rollout in another); with Kargo's control
// plane (harness.NewTwoClusterEnv) it is the World's namespace there.
func kargoProjectOf(w *harness.World) string { return w.ProjectNamespace() }

// kargoGitURL is the repository in the Warehouse's git subscription and the Freight's commit (Kargo's
// pattern for it is http(s) or ssh; Argo CD reads the same commits from file://).
func kargoGitURL(ns string) string { return "http://127.0.0.1/live/" + ns }

// kargoStage is one scenario's Kargo: its Project, Warehouse, Stage (argocd-update on the live
// Application, our generated verification) and the Freight and Promotions created as Kargo's API server
// creates them (Kargo's webhooks name them and give the Promotion the Stage's steps), read as Kargo's
// controller wrote them.
type kargoStage struct {
	dyn     dynamic.Interface
	ns, app string
	seq     int
	token   int
}

func kargoObj(kind string, meta map[string]any, rest map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": kind, "metadata": meta}
	for k, v := range rest {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

// setupKargo creates the scenario's Project (in the Rollout's namespace, labelled as a Project
// namespace first, as Kargo's Project webhook requires of an existing namespace), the Warehouse, our
// generated AnalysisTemplate and the Stage with our generated verification.
func setupKargo(w *harness.World, d *GitDelivery, bins kargoverify.PluginBinaries, healthOnly bool) (*kargoStage, error) {
	ctx := context.Background()
	ks := &kargoStage{dyn: w.ControlPlane().Dynamic, ns: kargoProjectOf(w), app: d.app}
	patch := `{"metadata":{"labels":{"kargo.akuity.io/project":"true"}}}`
	if _, err := w.ControlPlane().Kube.CoreV1().Namespaces().Patch(ctx, ks.ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return nil, err
	}
	if _, err := ks.dyn.Resource(kargoProjects).Create(ctx, kargoObj("Project", map[string]any{"name": ks.ns}, nil), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("Kargo Project %s: %w", ks.ns, err)
	}
	wh := kargoObj("Warehouse", map[string]any{"name": kargoStageName, "namespace": ks.ns, "labels": map[string]any{"kargo.akuity.io/shard": kargoNoShard}},
		map[string]any{"spec": map[string]any{"interval": "24h", "freightCreationPolicy": "Manual", "subscriptions": []any{
			map[string]any{"git": map[string]any{"repoURL": kargoGitURL(ks.ns)}},
			map[string]any{"image": map[string]any{"repoURL": harness.ImageRepo}},
		}}})
	if _, err := ks.dyn.Resource(kargoWarehouses).Namespace(ks.ns).Create(ctx, wh, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("Kargo Warehouse: %w", err)
	}
	// generate --format kargo: the AnalysisTemplate into the Project namespace, the snippet into the Stage
	dir, err := os.MkdirTemp("", "kargo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kargo")
	args := []string{"generate", "--format", "kargo", "--project", ks.ns, "--rollout", harness.Name, "--namespace", w.Namespace,
		"--plugin-location", "file://" + bins.Plugin, "--image-repo", harness.ImageRepo, "--rollouts-values", "none", "--out", out}
	if d.workload != nil {
		args = append(args, "--kubeconfig-secret", workloadSecret)
	}
	if msg, err := exec.Command(bins.CLI, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("analysis-health generate --format kargo: %v: %s", err, msg)
	}
	if d.workload != nil && !healthOnly {
		// the docs' multi-cluster steps: rbac.yaml on the workload cluster, the Secret in the Project
		if err := d.workload.grant(w, filepath.Join(out, "rbac.yaml"), ks.ns); err != nil {
			return nil, err
		}
	}
	var tmpl unstructured.Unstructured
	if err := readYAML(filepath.Join(out, "analysis-template.yaml"), &tmpl.Object); err != nil {
		return nil, err
	}
	if _, err := ks.dyn.Resource(analysisTmpls).Namespace(ks.ns).Create(ctx, &tmpl, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("the generated AnalysisTemplate: %w", err)
	}
	var snippet map[string]any
	if err := readYAML(filepath.Join(out, "stage-verification.yaml"), &snippet); err != nil {
		return nil, err
	}
	verification, _, _ := unstructured.NestedMap(snippet, "spec", "verification")
	if verification == nil {
		return nil, fmt.Errorf("generate --format kargo: no spec.verification in stage-verification.yaml")
	}
	step := map[string]any{"uses": "argocd-update", "config": map[string]any{"apps": []any{map[string]any{
		"name": ks.app, "namespace": cluster.ArgoCDNamespace,
		"sources": []any{map[string]any{"repoURL": "file://" + d.repo, "updateTargetRevision": true,
			"desiredRevision": fmt.Sprintf(`${{ commitFrom(%q).ID }}`, kargoGitURL(ks.ns))}},
	}}}}
	spec := map[string]any{
		"requestedFreight": []any{map[string]any{"origin": map[string]any{"kind": "Warehouse", "name": kargoStageName},
			"sources": map[string]any{"direct": true}}},
		"promotionTemplate": map[string]any{"spec": map[string]any{"steps": []any{step}}},
		"verification":      verification,
	}
	if healthOnly {
		delete(spec, "verification")
	}
	st := kargoObj("Stage", map[string]any{"name": kargoStageName, "namespace": ks.ns}, map[string]any{"spec": spec})
	if _, err := ks.dyn.Resource(kargoStages).Namespace(ks.ns).Create(ctx, st, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("Kargo Stage: %w", err)
	}
	return ks, nil
}

func readYAML(path string, into *map[string]any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// promote creates the Freight of commit sha with image (the name is Kargo's Freight webhook's,
// api.GenerateFreightID) and a Promotion of it to the Stage (named, and given the Stage's steps, by
// Kargo's Promotion webhook), as Kargo's API server creates them for a user's promote; it returns the
// Promotion's name.
func (ks *kargoStage) promote(sha, image string) (freight, promotion string, err error) {
	ctx := context.Background()
	ks.seq++
	repo, tag, _ := strings.Cut(image, ":")
	f := kargoObj("Freight", map[string]any{"name": "requested-" + strconv.Itoa(ks.seq), "namespace": ks.ns}, map[string]any{
		"origin":  map[string]any{"kind": "Warehouse", "name": kargoStageName},
		"commits": []any{map[string]any{"repoURL": kargoGitURL(ks.ns), "id": sha}},
		"images":  []any{map[string]any{"repoURL": repo, "tag": tag}},
	})
	created, err := ks.dyn.Resource(kargoFreight).Namespace(ks.ns).Create(ctx, f, metav1.CreateOptions{})
	if err != nil {
		return "", "", fmt.Errorf("Kargo Freight: %w", err)
	}
	p := kargoObj("Promotion", map[string]any{"name": "requested-" + strconv.Itoa(ks.seq), "namespace": ks.ns}, map[string]any{
		"spec": map[string]any{"stage": kargoStageName, "freight": created.GetName()}})
	// Kargo's Promotion webhook reads the Freight through its manager's cache (v1.11.2
	// pkg/webhook/kubernetes/promotion/webhook.go validate: api.GetFreight, then IsFreightAvailable), which
	// may not hold a Freight created a moment ago: a user promotes Freight a Warehouse found long before, so
	// that denial is retried, for a few seconds, and no other
	deadline := time.Now().Add(10 * time.Second)
	for {
		promo, err := ks.dyn.Resource(kargoPromotions).Namespace(ks.ns).Create(ctx, p, metav1.CreateOptions{})
		if err == nil {
			return created.GetName(), promo.GetName(), nil
		}
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "Freight is not available to this Stage") || time.Now().After(deadline) {
			return "", "", fmt.Errorf("Kargo Promotion: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// abort is the user's abort of a running Promotion (api/v1alpha1 AnnotationKeyAbort, an
// AbortPromotionRequest), as `kargo abort promotion` sets it.
func (ks *kargoStage) abort(promotion string) error {
	patch := `{"metadata":{"annotations":{"kargo.akuity.io/abort":"{\"action\":\"terminate\"}"}}}`
	_, err := ks.dyn.Resource(kargoPromotions).Namespace(ks.ns).Patch(context.Background(), promotion, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// settlePromotion asks Kargo to reconcile the Promotion until its phase is terminal (an abort is handled
// when the Promotion reconciler next runs it) and returns the phase.
func (ks *kargoStage) settlePromotion(name string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := ks.refresh(kargoPromotions, name); err != nil {
			return "", err
		}
		p, err := ks.dyn.Resource(kargoPromotions).Namespace(ks.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		if kargoTerminal(phase) {
			return phase, nil
		}
		if time.Now().After(deadline) {
			return phase, fmt.Errorf("Kargo's Promotion %s/%s still %s 60 s after its abort", ks.ns, name, phase)
		}
	}
}

// refresh asks Kargo's controller to reconcile obj (api/v1alpha1 AnnotationKeyRefresh) and waits until
// its status records the token as handled: the sync point after every tick, so that every state of the
// Application and the analysis is assessed by Kargo before the next tick.
func (ks *kargoStage) refresh(gvr schema.GroupVersionResource, name string) error {
	ctx := context.Background()
	ks.token++
	token := fmt.Sprintf("%d-%d", time.Now().UnixNano(), ks.token)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"kargo.akuity.io/refresh":%q}}}`, token)
	res := ks.dyn.Resource(gvr).Namespace(ks.ns)
	if _, err := res.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	if gvr == kargoPromotions {
		// the Promotion reconciler records the token only when it runs the Promotion: not once it is
		// terminal, nor while it waits for the Stage to make it current (pkg/controller/promotions
		// Reconcile's early returns); it then only gets the reconcile it asked for
		deadline = time.Now().Add(3 * time.Second)
	}
	for {
		o, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h, _, _ := unstructured.NestedString(o.Object, "status", "lastHandledRefresh"); h == token {
			return nil
		}
		if phase, _, _ := unstructured.NestedString(o.Object, "status", "phase"); gvr == kargoPromotions && (kargoTerminal(phase) || time.Now().After(deadline)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Kargo's controller did not handle the refresh of %s %s/%s in 60 s", gvr.Resource, ks.ns, name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KargoState is what Kargo's controller wrote, read at one frame.
type KargoState struct {
	// Promotion is the Promotion's status.phase.
	Promotion string `json:"promotion"`
	// Health is the Stage's status.health.status ("" when Kargo has not assessed it since the Promotion).
	Health string `json:"health"`
	// Verification is the phase of the current Freight's latest verification in the Stage's
	// status.freightHistory, and AnalysisRun the run it names.
	Verification string `json:"verification,omitempty"`
	AnalysisRun  string `json:"analysisRun,omitempty"`
	// Verified: the Freight's status.verifiedIn holds the Stage.
	Verified bool `json:"verified"`
}

// read is Kargo's status of the Promotion, the Stage and the Freight.
func (ks *kargoStage) read(promotion, freight string) (KargoState, error) {
	ctx := context.Background()
	var s KargoState
	p, err := ks.dyn.Resource(kargoPromotions).Namespace(ks.ns).Get(ctx, promotion, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	s.Promotion, _, _ = unstructured.NestedString(p.Object, "status", "phase")
	st, err := ks.dyn.Resource(kargoStages).Namespace(ks.ns).Get(ctx, kargoStageName, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	s.Health, _, _ = unstructured.NestedString(st.Object, "status", "health", "status")
	history, _, _ := unstructured.NestedSlice(st.Object, "status", "freightHistory")
	if len(history) > 0 {
		current, _ := history[0].(map[string]any)
		items, _, _ := unstructured.NestedMap(current, "items")
		mine := false
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && m["name"] == freight {
				mine = true
			}
		}
		if vs, _, _ := unstructured.NestedSlice(current, "verificationHistory"); mine && len(vs) > 0 {
			v, _ := vs[0].(map[string]any)
			s.Verification, _, _ = unstructured.NestedString(v, "phase")
			s.AnalysisRun, _, _ = unstructured.NestedString(v, "analysisRun", "name")
		}
	}
	f, err := ks.dyn.Resource(kargoFreight).Namespace(ks.ns).Get(ctx, freight, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	_, s.Verified, _ = unstructured.NestedMap(f.Object, "status", "verifiedIn", kargoStageName)
	return s, nil
}
