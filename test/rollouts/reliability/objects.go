// The reliability rig's objects: the frames it applies, the verification runs it creates, its audit log.

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// timeline reads a recorded timeline of this build's Rollouts version.
func readTimeline(name string) (*harness.Timeline, error) {
	raw, err := os.ReadFile(filepath.Join(harness.TimelineDir(), name+".yaml"))
	if err != nil {
		return nil, err
	}
	var tl harness.Timeline
	if err := yaml.Unmarshal(raw, &tl); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &tl, nil
}

// midFrame is the first frame whose analysis of the released revision is in flight (the verification's
// verdict is Running), and the frame after which the last one is all that follows.
func midFrame(tl *harness.Timeline) (int, error) {
	for i, f := range tl.Frames {
		if i == 0 {
			continue
		}
		for _, r := range analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, tl.PodTemplateHash).Runs {
			if phase, _, _ := unstructured.NestedString(r.Object, "status", "phase"); phase == string(v1alpha1.AnalysisPhaseRunning) {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no frame with the analysis of %s in flight", tl.Name, tl.PodTemplateHash)
}

// applyFrame stores frame f of a timeline in namespace ns as the controllers stored it, the Rollout named
// Name: the Rollout (and its status), its Experiments and AnalysisRuns, created or replaced. Recorded
// uids are replaced by the server's; a name other than the recorded one replaces it everywhere it occurs
// as the start of a string (the Rollout's name, its runs', their owners').
func (r *rig) applyFrame(ns, name string, f harness.Frame) error {
	ctx := context.Background()
	uids := map[string]string{}
	conv := func(o map[string]any) (*unstructured.Unstructured, error) {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if name != harness.Name {
			raw = bytes.ReplaceAll(raw, []byte(`"`+harness.Name), []byte(`"`+name))
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		u.SetNamespace(ns)
		u.SetResourceVersion("")
		u.SetCreationTimestamp(metav1.Time{})
		u.SetManagedFields(nil)
		refs := u.GetOwnerReferences()
		for i := range refs {
			if real, ok := uids[string(refs[i].UID)]; ok {
				refs[i].UID = types.UID(real)
			}
		}
		u.SetOwnerReferences(refs)
		return u, nil
	}
	store := func(res schema.GroupVersionResource, o map[string]any, status bool) error {
		u, err := conv(o)
		if err != nil {
			return err
		}
		recorded := string(u.GetUID())
		u.SetUID("")
		c := r.admin.Dynamic.Resource(res).Namespace(ns)
		cur, err := c.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if cur, err = c.Create(ctx, u, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		case err != nil:
			return err
		default:
			u.SetResourceVersion(cur.GetResourceVersion())
			u.SetUID(cur.GetUID())
			if cur, err = c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		}
		uids[recorded] = string(cur.GetUID())
		if status {
			u.SetResourceVersion(cur.GetResourceVersion())
			u.SetUID(cur.GetUID())
			if _, err := c.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("status of %s %s/%s: %w", res.Resource, ns, u.GetName(), err)
			}
		}
		return nil
	}
	// the Rollout CRD has a status subresource; AnalysisRuns and Experiments store their status with the
	// object (manifests/crds)
	if err := store(rolloutsRes, f.Rollout, true); err != nil {
		return err
	}
	for _, e := range f.Experiments {
		if err := store(experimentsRes, e, false); err != nil {
			return err
		}
	}
	for _, ar := range f.AnalysisRuns {
		if err := store(analysisRunsRes, ar, false); err != nil {
			return err
		}
	}
	return nil
}

// grantPlugin applies the generated rbac.yaml for namespace ns (analysis-health generate --format kargo,
// the plugin's identity as the Rollouts service account), and returns its Role.
func (r *rig) grantPlugin(ns string) (*rbacv1.Role, error) {
	objs, err := r.generated(ns, "rbac.yaml", "--rollouts-service-account", relSystemNS+"/"+relPluginSA)
	if err != nil {
		return nil, err
	}
	var role *rbacv1.Role
	ctx := context.Background()
	for _, raw := range objs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
		switch meta.Kind {
		case "Role":
			role = &rbacv1.Role{}
			if err := yaml.UnmarshalStrict(raw, role); err != nil {
				return nil, err
			}
			if _, err := r.admin.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict(raw, &rb); err != nil {
				return nil, err
			}
			if _, err := r.admin.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("rbac.yaml holds a %s", meta.Kind)
		}
	}
	if role == nil {
		return nil, fmt.Errorf("rbac.yaml holds no Role")
	}
	return role, nil
}

// generated runs analysis-health generate --format kargo for the Rollout of namespace ns and returns the
// documents of one of its files.
func (r *rig) generated(ns, file string, extra ...string) ([][]byte, error) {
	dir, err := os.MkdirTemp("", "kargo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kargo")
	args := append([]string{"generate", "--format", "kargo", "--project", ns, "--rollout", harness.Name, "--namespace", ns,
		"--plugin-location", "file://" + r.bins.Plugin, "--image-repo", harness.ImageRepo, "--rollouts-values", "none", "--out", out}, extra...)
	if out, err := exec.Command(r.bins.CLI, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("analysis-health %s: %v: %s", strings.Join(args, " "), err, out)
	}
	raw, err := os.ReadFile(filepath.Join(out, file))
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs, nil
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// Verification creates a Kargo verification run (verificationRun: our generated template and Stage
// snippet, as Kargo builds the run) for Rollout name in ns, with config overrides of the plugin's
// (pollInterval, apiTimeout, kubeconfigSecret).
func (r *rig) verification(ns, name, image string, config map[string]any) (*v1alpha1.AnalysisRun, error) {
	ar, err := r.verificationObject(ns, name, image, config)
	if err != nil {
		return nil, err
	}
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Create(context.Background(), ar, metav1.CreateOptions{})
}

// verificationObject is the run verification creates.
func (r *rig) verificationObject(ns, name, image string, config map[string]any) (*v1alpha1.AnalysisRun, error) {
	r.mu.Lock()
	tmpl := r.runTemplate[ns]
	r.mu.Unlock()
	if tmpl == nil {
		var err error
		if tmpl, err = r.bins.VerificationRun(ns, "rel", image); err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.runTemplate[ns] = tmpl
		r.mu.Unlock()
	}
	ar := tmpl.DeepCopy()
	ar.Name = fmt.Sprintf("%s-%s-%d", name, ar.Name[:3], time.Now().UnixNano()%1e9)
	for i, a := range ar.Spec.Args {
		if a.Name == "rollout-name" {
			ar.Spec.Args[i].Value = harness.Ptr(name)
		}
	}
	for i, m := range ar.Spec.Metrics {
		var c map[string]any
		if err := json.Unmarshal(m.Provider.Plugin[kargoverify.PluginName], &c); err != nil {
			return nil, err
		}
		for k, v := range config {
			c[k] = v
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		ar.Spec.Metrics[i].Provider.Plugin = map[string]json.RawMessage{kargoverify.PluginName: raw}
	}
	return ar, nil
}

// noopVerification is our verification with its metric served by the do-nothing plugin
// (../cmd/noop-metric-plugin): the controller's plugin path without any plugin's work.
func (r *rig) noopVerification(ns, name, image string) (*v1alpha1.AnalysisRun, error) {
	ar, err := r.verificationObject(ns, name, image, nil)
	if err != nil {
		return nil, err
	}
	for i := range ar.Spec.Metrics {
		ar.Spec.Metrics[i].Provider.Plugin = map[string]json.RawMessage{noopPluginName: json.RawMessage("{}")}
	}
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Create(context.Background(), ar, metav1.CreateOptions{})
}

// directVerification is our verification with its metric served by our plugin started with
// --watch=false (directPluginName).
func (r *rig) directVerification(ns, name, image string) (*v1alpha1.AnalysisRun, error) {
	ar, err := r.verificationObject(ns, name, image, nil)
	if err != nil {
		return nil, err
	}
	for i, m := range ar.Spec.Metrics {
		if cfg, ok := m.Provider.Plugin[kargoverify.PluginName]; ok {
			ar.Spec.Metrics[i].Provider.Plugin = map[string]json.RawMessage{directPluginName: cfg}
		}
	}
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Create(context.Background(), ar, metav1.CreateOptions{})
}

// webVerification is the verification a Kargo user writes instead of ours: the same run (Kargo's labels,
// the Stage's args) with one metric of Argo Rollouts' built-in web provider, querying the metrics server
// every loadPollInterval for as long as the run lasts (no count: an interval metric without one measures
// until the run is terminated, v1alpha1 Metric.EffectiveCount).
func (r *rig) webVerification(ns, name, image string) (*v1alpha1.AnalysisRun, error) {
	ar, err := r.verificationObject(ns, name, image, nil)
	if err != nil {
		return nil, err
	}
	ar.Spec.Metrics = []v1alpha1.Metric{{
		Name:             "success-rate",
		Interval:         v1alpha1.DurationString(loadPollInterval.String()),
		SuccessCondition: "result >= 0.95",
		Provider:         v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: r.metrics.URL(webMetric), JSONPath: "{$.value}"}},
	}}
	created, err := r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Create(context.Background(), ar, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	r.ctrl.writes.setInterval(ns+"/"+created.Name, loadPollInterval)
	return created, nil
}

// newNamespace makes a namespace whose Rollout the plugin may read, by the generated rbac.yaml.
func (r *rig) newNamespace(ns string) (*rbacv1.Role, error) {
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return r.grantPlugin(ns)
}

// Run reads a run back.
func (r *rig) run(ns, name string) (*v1alpha1.AnalysisRun, error) {
	return r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// lastMeasurement is the run's last measurement of its one metric, nil before the first.
func lastMeasurement(ar *v1alpha1.AnalysisRun) *v1alpha1.Measurement {
	if len(ar.Status.MetricResults) == 0 || len(ar.Status.MetricResults[0].Measurements) == 0 {
		return nil
	}
	ms := ar.Status.MetricResults[0].Measurements
	return &ms[len(ms)-1]
}

// waitRun polls the run until cond holds, or fails after timeout.
func (r *rig) waitRun(ns, name string, timeout time.Duration, what string, cond func(*v1alpha1.AnalysisRun) bool) (*v1alpha1.AnalysisRun, error) {
	deadline := time.Now().Add(timeout)
	var last *v1alpha1.AnalysisRun
	for time.Now().Before(deadline) {
		ar, err := r.run(ns, name)
		if err == nil {
			last = ar
			if cond(ar) {
				return ar, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	desc := "not found"
	if last != nil {
		raw, _ := json.Marshal(last.Status)
		desc = string(raw)
	}
	return last, fmt.Errorf("run %s/%s: not %s within %s (status %s)", ns, name, what, timeout, desc)
}

// denied waits until the API server's authorizer says the plugin may not verb resource in ns (RBAC's
// caches follow a Role's change within moments).
func (r *rig) waitAccess(ns, verb, resource string, allowed bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               saUser(relSystemNS, relPluginSA),
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + relSystemNS, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: "argoproj.io", Resource: resource}}}
		got, err := r.admin.Kube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed == allowed {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s %s in %s: not allowed=%v after 30s", verb, resource, ns, allowed)
}

// audit reads the audit log's requests by user, received in [from, to].
func (r *rig) audit(user string, from, to time.Time) ([]cluster.Request, error) {
	all, _, err := cluster.AuditRequests(r.opts.AuditLog, 0, user)
	if err != nil {
		return nil, err
	}
	var out []cluster.Request
	for _, e := range all {
		if !e.Received.Time.Before(from) && !e.Received.Time.After(to) {
			out = append(out, e)
		}
	}
	return out, nil
}

// rollout converts a frame's Rollout.
func frameRollout(f harness.Frame) (*v1alpha1.Rollout, error) {
	var ro v1alpha1.Rollout
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(f.Rollout, &ro); err != nil {
		return nil, err
	}
	return &ro, nil
}
