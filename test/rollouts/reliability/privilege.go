// The least-privilege and credential tests of the reliability rig.

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	goplugin "github.com/hashicorp/go-plugin"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// privilegeResult: the plugin with exactly the generated Role, and with each of its grants removed.
type privilegeResult struct {
	Scenario string `json:"scenario"`
	// Used is what the plugin asked for with the whole Role (verb resource, from the audit log).
	Used    []string       `json:"used"`
	Full    measStep       `json:"full"`
	Removed []removedGrant `json:"removed"`
}

type removedGrant struct {
	Grant string   `json:"grant"` // "verb resource"
	Step  measStep `json:"measurement"`
	// Logged is the plugin's line about a refused watch (the grants only its informers use)
	Logged string `json:"logged,omitempty"`
}

// directGrants are what the plugin's direct reads use (rolloutplugin read); its informers use the list
// and watch grants of the three resources (package watchcache).
var directGrants = map[string]bool{"get rollouts": true, "get analysisruns": true, "list analysisruns": true, "list experiments": true}

// leastPrivilege runs the plugin as a ServiceAccount bound only by the generated rbac.yaml, on a frame
// whose running experiment names its run (so every read the plugin makes happens), then with each verb of each
// resource of the Role removed in turn, each time in a new plugin process (its watches start afresh):
// without a grant of its direct reads, Error naming the verb and the resource; without one only its
// informers use (list rollouts, the watches), the measurement as with the whole Role, read directly, and
// one logged line naming the verb and the resource. A grant whose removal the plugin does not notice is
// more than it needs.
func leastPrivilege(t *testing.T, r *rig) privilegeResult {
	tl, err := readTimeline(relExperiment)
	if err != nil {
		t.Fatal(err)
	}
	res := privilegeResult{Scenario: relExperiment}
	frame := -1
	for i, f := range tl.Frames {
		for _, e := range f.Experiments {
			runs, _, _ := unstructured.NestedSlice(e, "status", "analysisRuns")
			phase, _, _ := unstructured.NestedString(e, "status", "phase")
			for _, run := range runs {
				if name, _, _ := unstructured.NestedString(run.(map[string]any), "analysisRun"); name != "" && phase == string(v1alpha1.AnalysisPhaseRunning) && frame < 0 {
					frame = i
				}
			}
		}
	}
	if frame < 0 {
		t.Fatalf("%s: no frame with an experiment running its analysis", relExperiment)
	}
	ns := "least-privilege"
	role, err := r.newNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.applyFrame(ns, harness.Name, tl.Frames[frame]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[frame])
	if err != nil {
		t.Fatal(err)
	}
	measure := func() (*v1alpha1.Measurement, time.Time) {
		from := time.Now()
		ar, err := r.verification(ns, harness.Name, kargoverify.FreightImage(ro), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := started{ns: ns, run: ar.Name}
		m := waitMeasurement(t, r, s, 60*time.Second, "measured", func(m *v1alpha1.Measurement) bool { return m.Phase != "" && m.Phase != v1alpha1.AnalysisPhasePending })
		// one measurement per run: the next case's is its own
		_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(context.Background(), ar.Name, metav1.DeleteOptions{})
		return m, from
	}
	goplugin.CleanupClients() // a plugin without watches of this namespace yet
	m, from := measure()
	res.Full = measStep{Phase: string(m.Phase), Message: m.Message, Pinned: m.Metadata["revision"]}
	if m.Phase != v1alpha1.AnalysisPhaseRunning {
		t.Fatalf("with the generated Role: %s %q, want Running (the experiment's analysis is in flight)", m.Phase, m.Message)
	}
	// the audit log records a watch when it ends: the plugin's end with its process
	time.Sleep(2 * time.Second)
	goplugin.CleanupClients()
	time.Sleep(time.Second) // the audit log is written as requests complete
	events, err := r.audit(saUser(relSystemNS, relPluginSA), from, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	refused := 0
	for _, e := range events {
		// the plugin asks first for every namespace at once (watchcache Cluster.AllNamespaces), which a
		// Role refuses: once for each watched resource at most, then the namespace is watched
		if e.ObjectRef.Namespace == "" && e.Verb == "list" && e.ResponseStatus.Code == http.StatusForbidden {
			refused++
			continue
		}
		used[e.Verb+" "+e.ObjectRef.Resource] = true
		if e.ResponseStatus.Code != 200 || e.ObjectRef.Namespace != ns {
			t.Errorf("the plugin's request %s %s: %d in namespace %q", e.Verb, e.RequestURI, e.ResponseStatus.Code, e.ObjectRef.Namespace)
		}
		// an informer's list reads in pages (limit); the direct reads list by label
		if e.Verb == "list" && !strings.Contains(e.RequestURI, "labelSelector=") && !strings.Contains(e.RequestURI, "limit=") {
			t.Errorf("the plugin listed without a label selector: %s", e.RequestURI)
		}
	}
	if refused == 0 || refused > 3 {
		t.Errorf("the plugin was refused %d lists of every namespace, want one to three (a try for each watched resource)", refused)
	}
	for u := range used {
		res.Used = append(res.Used, u)
	}
	sort.Strings(res.Used)
	granted := grants(role)
	for _, g := range granted {
		verb, resource, _ := strings.Cut(g, " ")
		if err := r.setRole(ns, role, g); err != nil {
			t.Fatal(err)
		}
		if err := r.waitAccess(ns, verb, resource, false); err != nil {
			t.Fatal(err)
		}
		goplugin.CleanupClients()
		m, at := measure()
		rg := removedGrant{Grant: g, Step: measStep{Phase: string(m.Phase), Message: m.Message, Pinned: m.Metadata["revision"]}}
		want := fmt.Sprintf("cannot %s resource %q", verb, resource)
		if directGrants[g] {
			if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, want) {
				t.Errorf("without %s: %s %q, want Error saying %s", g, m.Phase, m.Message, want)
			}
		} else {
			if rg.Step != res.Full {
				t.Errorf("without %s: %+v, want what the whole Role gives, %+v", g, rg.Step, res.Full)
			}
			lines := r.pluginLog.wait(at, 20*time.Second, "namespace "+ns+" ", want, "reading directly")
			if len(lines) == 0 {
				t.Errorf("without %s: the plugin logged no line saying %s", g, want)
			} else {
				rg.Logged = lines[0]
			}
		}
		res.Removed = append(res.Removed, rg)
		if !used[g] {
			t.Errorf("the generated Role grants %s, which the plugin did not use", g)
		}
		if err := r.setRole(ns, role); err != nil {
			t.Fatal(err)
		}
		if err := r.waitAccess(ns, verb, resource, true); err != nil {
			t.Fatal(err)
		}
	}
	for u := range used {
		if !contains(granted, u) {
			t.Errorf("the plugin used %s, which the generated Role does not grant", u)
		}
	}
	return res
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// grants lists a Role's "verb resource" pairs.
func grants(role *rbacv1.Role) []string {
	var out []string
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			for _, v := range rule.Verbs {
				out = append(out, v+" "+res)
			}
		}
	}
	sort.Strings(out)
	return out
}

// setRole stores the generated Role without the grants "verb resource" (none: the Role as generated), one
// rule per resource, which grants the same.
func (r *rig) setRole(ns string, generated *rbacv1.Role, without ...string) error {
	ctx := context.Background()
	cur, err := r.admin.Kube.RbacV1().Roles(ns).Get(ctx, generated.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Rules = nil
	for _, rule := range generated.Rules {
		for _, res := range rule.Resources {
			var verbs []string
			for _, v := range rule.Verbs {
				if !contains(without, v+" "+res) {
					verbs = append(verbs, v)
				}
			}
			if len(verbs) > 0 {
				cur.Rules = append(cur.Rules, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: []string{res}, Verbs: verbs})
			}
		}
	}
	_, err = r.admin.Kube.RbacV1().Roles(ns).Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// secretResult: with kubeconfigSecret, what the plugin's own identity read, and the remote one's.
type secretResult struct {
	Measurements int      `json:"measurements"`
	Local        []string `json:"local"`  // requests of the plugin's identity on the controller's cluster
	Remote       []string `json:"remote"` // of the identity of the kubeconfig in the Secret
}

// kubeconfigSecretReads: the plugin's own identity may read everything (cluster-admin), and reads only the
// one Secret; the Rollout is read with the identity of the generated multi-cluster rbac.yaml.
func kubeconfigSecretReads(t *testing.T, r *rig, tl *harness.Timeline) secretResult {
	ns := "kubeconfig-secret"
	ctx := context.Background()
	if _, err := r.admin.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	docs, err := r.generated(ns, "rbac.yaml", "--kubeconfig-secret", "workload", "--kubeconfig-key", "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	remoteSA := ""
	for _, raw := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ServiceAccount":
			var sa corev1.ServiceAccount
			if err := yaml.UnmarshalStrict(raw, &sa); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			remoteSA = sa.Name
		case "Role":
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict(raw, &role); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.RbacV1().Roles(ns).Create(ctx, &role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict(raw, &rb); err != nil {
				t.Fatal(err)
			}
			if _, err := r.admin.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("rbac.yaml holds a %s", meta.Kind)
		}
	}
	if remoteSA == "" {
		t.Fatal("the multi-cluster rbac.yaml holds no ServiceAccount")
	}
	// the bound, expiring token rbac.yaml says to mint (TokenRequest), in a kubeconfig of the https
	// server with its certificate-authority-data: what the plugin accepts
	dir := t.TempDir()
	kc, err := r.kubeconfig(ns, remoteSA, r.pluginPx, dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.admin.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "workload"},
		Data: map[string][]byte{"kubeconfig": raw}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.usePlugin(r.localKC); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.usePlugin(r.pluginKC); err != nil {
			t.Fatal(err)
		}
	}()
	mid := relMid(t, tl)
	if err := r.applyFrame(ns, harness.Name, tl.Frames[mid]); err != nil {
		t.Fatal(err)
	}
	ro, err := frameRollout(tl.Frames[mid])
	if err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	ar, err := r.verification(ns, harness.Name, kargoverify.FreightImage(ro), map[string]any{"pollInterval": "2s",
		"kubeconfigSecret": map[string]any{"name": "workload", "key": "kubeconfig"}})
	if err != nil {
		t.Fatal(err)
	}
	s := started{ns: ns, run: ar.Name, key: ns + "/" + ar.Name}
	waitMeasurement(t, r, s, 60*time.Second, "Running", func(m *v1alpha1.Measurement) bool { return m.Phase == v1alpha1.AnalysisPhaseRunning })
	time.Sleep(5 * time.Second) // two more resumes
	_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(ctx, ar.Name, metav1.DeleteOptions{})
	time.Sleep(time.Second)
	to := time.Now()
	var res secretResult
	for _, w := range r.ctrl.writes.snapshot() {
		if w.Key == s.key {
			res.Measurements++
			if w.Measurement.Phase != v1alpha1.AnalysisPhaseRunning {
				t.Errorf("measurement %s %q", w.Measurement.Phase, w.Measurement.Message)
			}
		}
	}
	local, err := r.audit(saUser(relSystemNS, relLocalSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range local {
		res.Local = append(res.Local, fmt.Sprintf("%s %s %s/%s", e.Verb, e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name))
		if e.Verb != "get" || e.ObjectRef.Resource != "secrets" || e.ObjectRef.Namespace != ns || e.ObjectRef.Name != "workload" {
			t.Errorf("the plugin's own identity did %s %s", e.Verb, e.RequestURI)
		}
	}
	if len(local) < res.Measurements || res.Measurements < 2 {
		t.Errorf("%d reads of the Secret for %d measurements", len(local), res.Measurements)
	}
	remote, err := r.audit(saUser(ns, remoteSA), from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range remote {
		res.Remote = append(res.Remote, e.Verb+" "+e.ObjectRef.Resource)
		if e.ObjectRef.Resource == "secrets" || e.ResponseStatus.Code != 200 {
			t.Errorf("the remote identity: %s %s %d", e.Verb, e.RequestURI, e.ResponseStatus.Code)
		}
	}
	res.Local, res.Remote = countLines(res.Local), countLines(res.Remote)
	return res
}

// countLines is each distinct line once, with its count.
func countLines(lines []string) []string {
	n := map[string]int{}
	for _, l := range lines {
		n[l]++
	}
	var out []string
	for l, c := range n {
		out = append(out, fmt.Sprintf("%s ×%d", l, c))
	}
	sort.Strings(out)
	return out
}
