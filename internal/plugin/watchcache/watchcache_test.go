package watchcache

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestTransform: what is stored of an object is what a judgement reads of it (verdict.Reads): a
// Rollout's pod template but its images, managedFields, the last-applied annotation, a run's providers
// and all but its last measurement are dropped.
func TestTransform(t *testing.T) {
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "checkout", "namespace": "shop",
			"annotations":   map[string]any{"rollout.argoproj.io/revision": "2", "kubectl.kubernetes.io/last-applied-configuration": "{…}"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{"replicas": int64(3), "strategy": map[string]any{"canary": map[string]any{"maxSurge": "25%"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "checkout"}},
				"spec": map[string]any{
					"containers":     []any{map[string]any{"name": "app", "image": "shop/checkout:1.2.3", "env": []any{map[string]any{"name": "X"}}}},
					"initContainers": []any{map[string]any{"name": "init", "image": "shop/init:1"}},
					"volumes":        []any{map[string]any{"name": "v"}}}}},
		"status": map[string]any{"currentPodHash": "abc", "selector": "app=checkout"},
	}}
	out, err := Transform(ro)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "checkout", "namespace": "shop",
			"annotations": map[string]any{"rollout.argoproj.io/revision": "2"}},
		"spec": map[string]any{"replicas": int64(3), "strategy": map[string]any{"canary": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{
				"containers":     []any{map[string]any{"image": "shop/checkout:1.2.3"}},
				"initContainers": []any{map[string]any{"image": "shop/init:1"}}}}},
		"status": map[string]any{"currentPodHash": "abc"},
	}
	if got, _ := out.(*Stored).Object(); !reflect.DeepEqual(got, want) {
		t.Errorf("stored %v\nwant %v", got, want)
	}
	run := &unstructured.Unstructured{Object: map[string]any{"kind": "AnalysisRun", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"metrics": []any{map[string]any{"name": "m", "count": int64(3),
			"provider": map[string]any{"prometheus": map[string]any{"query": "sum(rate(…))"}}}}},
		"status": map[string]any{"phase": "Running", "metricResults": []any{map[string]any{"name": "m", "count": int64(2),
			"measurements": []any{map[string]any{"value": "1", "startedAt": "t1"}, map[string]any{"value": "2", "startedAt": "t2"}}}}}}}
	wantRun := map[string]any{"kind": "AnalysisRun", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"metrics": []any{map[string]any{"name": "m", "count": int64(3)}}},
		"status": map[string]any{"phase": "Running", "metricResults": []any{map[string]any{"name": "m", "count": int64(2),
			"measurements": []any{map[string]any{"value": "2"}}}}}}
	out, _ = Transform(run)
	if got, _ := out.(*Stored).Object(); !reflect.DeepEqual(got, wantRun) {
		t.Errorf("stored run %v\nwant %v", got, wantRun)
	}
}

// fakeCluster is a cluster of the objects, served by the fake dynamic client, watched per namespace
// unless all.
func fakeCluster(all bool, objs ...runtime.Object) (*dynamicfake.FakeDynamicClient, Cluster) {
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Rollouts: "RolloutList", AnalysisRuns: "AnalysisRunList", Experiments: "ExperimentList"}, objs...)
	return c, Cluster{ID: "local", Where: "here", Client: func() (dynamic.Interface, error) { return c, nil }, AllNamespaces: all}
}

func object(kind, namespace, name string, labels map[string]any) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labels},
		"status":   map[string]any{"phase": "Running"}}}
}

// live waits for the namespace's view.
func live(t testing.TB, wc *Cache, cl Cluster, namespace string) View {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if v, ok := wc.View(cl, namespace); ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s not live within 5s", namespace)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdle: a namespace no measurement asked for in Idle has its informers stopped; asking again starts
// them.
func TestIdle(t *testing.T) {
	_, cl := fakeCluster(false, object("Rollout", "shop", "checkout", nil))
	wc := New(Options{Idle: 200 * time.Millisecond})
	defer wc.Close()
	v := live(t, wc, cl, "shop")
	if _, ok := v.Rollout("checkout"); !ok {
		t.Error("the Rollout is not in the view")
	}
	if got := wc.Spaces(); !reflect.DeepEqual(got, []string{"shop"}) {
		t.Fatalf("spaces watched: %q", got)
	}
	time.Sleep(500 * time.Millisecond)
	if got := wc.Spaces(); len(got) != 0 {
		t.Fatalf("spaces watched after the idle period: %q", got)
	}
	wc.View(cl, "shop")
	if got := wc.Spaces(); !reflect.DeepEqual(got, []string{"shop"}) {
		t.Fatalf("spaces watched after a new measurement: %q", got)
	}
}

// TestAllNamespaces: an identity that may watches every namespace with one informer of each resource,
// and a view answers for its own namespace alone: a run of the same labels in another namespace, or a
// Rollout of the same name, is not its.
func TestAllNamespaces(t *testing.T) {
	hash := map[string]any{"rollouts-pod-template-hash": "abc"}
	c, cl := fakeCluster(true,
		object("Rollout", "shop", "checkout", nil), object("Rollout", "cart", "checkout", nil),
		object("AnalysisRun", "shop", "checkout-abc-2-1", hash), object("AnalysisRun", "cart", "checkout-abc-2-1", hash),
		object("AnalysisRun", "cart", "checkout-abc-2-2", hash), object("Experiment", "cart", "checkout-abc-2-1", hash))
	wc := New(Options{})
	defer wc.Close()
	shop := live(t, wc, cl, "shop")
	cart := live(t, wc, cl, "cart")
	if got := wc.Spaces(); !reflect.DeepEqual(got, []string{""}) {
		t.Errorf("spaces watched: %q, want every namespace at once", got)
	}
	sel := labels.SelectorFromSet(labels.Set{"rollouts-pod-template-hash": "abc"})
	for _, c := range []struct {
		v                 View
		runs, experiments int
	}{{shop, 1, 0}, {cart, 2, 1}} {
		if _, ok := c.v.Rollout("checkout"); !ok {
			t.Errorf("%s: no Rollout", c.v.namespace)
		}
		if got := len(c.v.AnalysisRuns(sel)); got != c.runs {
			t.Errorf("%s: %d runs, want %d", c.v.namespace, got, c.runs)
		}
		if got := len(c.v.Experiments(sel)); got != c.experiments {
			t.Errorf("%s: %d experiments, want %d", c.v.namespace, got, c.experiments)
		}
	}
	if _, ok := shop.AnalysisRun("checkout-abc-2-2"); ok {
		t.Error("shop's view holds cart's run")
	}
	for _, a := range c.Actions() {
		if a.GetNamespace() != "" {
			t.Errorf("%s %s in namespace %s, want every namespace", a.GetVerb(), a.GetResource().Resource, a.GetNamespace())
		}
	}
}

// TestAllNamespacesRefused: an identity refused the list of every namespace (a namespaced install's
// Role) is watched per namespace, the refusal logged once; after Idle every namespace is asked for again.
func TestAllNamespacesRefused(t *testing.T) {
	c, cl := fakeCluster(true, object("Rollout", "shop", "checkout", nil), object("Rollout", "cart", "checkout", nil))
	refuse := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New(`User "system:serviceaccount:argo-rollouts:argo-rollouts" cannot list resource "`+a.GetResource().Resource+`" in API group "argoproj.io" at the cluster scope`))
		}
		return false, nil, nil
	}
	c.PrependReactor("list", "*", refuse)
	var mu sync.Mutex
	var logged []string
	idle := 2 * time.Second
	wc := New(Options{Idle: idle, Logf: func(f string, a ...any) { mu.Lock(); logged = append(logged, fmt.Sprintf(f, a...)); mu.Unlock() }})
	defer wc.Close()
	// the namespace asked for while every namespace was being listed is watched once that is refused,
	// without another measurement
	wc.View(cl, "shop")
	deadline := time.Now().Add(5 * time.Second)
	for !reflect.DeepEqual(wc.Spaces(), []string{"shop"}) {
		if time.Now().After(deadline) {
			t.Fatalf("spaces watched after the refusal: %q, want shop's", wc.Spaces())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, ns := range []string{"shop", "cart"} {
		if _, ok := live(t, wc, cl, ns).Rollout("checkout"); !ok {
			t.Errorf("%s: no Rollout", ns)
		}
	}
	if got := wc.Spaces(); !reflect.DeepEqual(got, []string{"cart", "shop"}) {
		t.Errorf("spaces watched: %q, want each namespace", got)
	}
	mu.Lock()
	if len(logged) != 1 || !strings.Contains(logged[0], "in every namespace of here refused") ||
		!strings.Contains(logged[0], "at the cluster scope") || !strings.Contains(logged[0], "watching each namespace") {
		t.Errorf("logged %q, want one line naming the refusal", logged)
	}
	mu.Unlock()
	clusterLists := func() int {
		n := 0
		for _, a := range c.Actions() {
			if a.GetVerb() == "list" && a.GetNamespace() == "" {
				n++
			}
		}
		return n
	}
	asked := clusterLists()
	if asked == 0 || asked > len(resources) {
		t.Errorf("every namespace was listed %d times, want once for each resource at most", asked)
	}
	// until Idle has passed, every namespace is not asked for again; then it is, and it is logged no more
	for i := 0; i < 5; i++ {
		live(t, wc, cl, "shop")
	}
	if n := clusterLists(); n != asked {
		t.Errorf("every namespace was listed again within Idle (%d lists)", n-asked)
	}
	time.Sleep(idle)
	live(t, wc, cl, "shop")
	deadline = time.Now().Add(5 * time.Second)
	for clusterLists() == asked && time.Now().Before(deadline) {
		wc.View(cl, "shop")
		time.Sleep(10 * time.Millisecond)
	}
	if clusterLists() == asked {
		t.Error("every namespace was not asked for again after Idle")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 {
		t.Errorf("logged %q, want the refusal once", logged)
	}
}

// TestVerificationRunsLeftOut: the analysisruns informer lists and watches every run but Kargo's
// verifications, which the plugin never judges.
func TestVerificationRunsLeftOut(t *testing.T) {
	c, cl := fakeCluster(true,
		object("AnalysisRun", "shop", "checkout-54d7c4976f-2-1", map[string]any{"rollouts-pod-template-hash": "54d7c4976f"}),
		object("AnalysisRun", "shop", "experiment-run", map[string]any{}),
		object("AnalysisRun", "shop", "test.01jd.abc1234", map[string]any{VerificationRuns: "test", "kargo.akuity.io/freight-collection": "abc1234"}))
	wc := New(Options{})
	defer wc.Close()
	v := live(t, wc, cl, "shop")
	for name, want := range map[string]bool{"checkout-54d7c4976f-2-1": true, "experiment-run": true, "test.01jd.abc1234": false} {
		if _, ok := v.AnalysisRun(name); ok != want {
			t.Errorf("run %s in the view: %v, want %v", name, ok, want)
		}
	}
	for _, a := range c.Actions() {
		if a.GetResource() == AnalysisRuns && (a.GetVerb() == "list" || a.GetVerb() == "watch") {
			var sel string
			switch a := a.(type) {
			case k8stesting.ListAction:
				sel = a.GetListRestrictions().Labels.String()
			case k8stesting.WatchAction:
				sel = a.GetWatchRestrictions().Labels.String()
			}
			if sel != "!"+VerificationRuns {
				t.Errorf("%s analysisruns with selector %q", a.GetVerb(), sel)
			}
		}
	}
}

// TestLabelSet: a stored object's labels answer every selector as the labels themselves do
// (labels.Set, the apimachinery reading); a Rollout keeps none, as it is read by name.
func TestLabelSet(t *testing.T) {
	sets := []map[string]string{
		nil,
		{"rollouts-pod-template-hash": "6f8d9c7b5"},
		{"rollouts-pod-template-hash": "6f8d9c7b5", "rollout-type": "Step", "app": "checkout", "a": "", "zz": "1"},
	}
	selectors := []string{"", "rollouts-pod-template-hash=6f8d9c7b5", "rollouts-pod-template-hash!=6f8d9c7b5",
		"rollout-type in (Step,Background)", "rollout-type notin (Step)", "app", "!app", "a=", "zz=1,app=checkout",
		"!" + VerificationRuns, "b", "0"}
	for _, set := range sets {
		raw := map[string]any{}
		for k, v := range set {
			raw[k] = v
		}
		st, _ := Transform(object("AnalysisRun", "shop", "r", raw))
		for _, s := range selectors {
			sel, err := labels.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := sel.Matches(st.(*Stored).labels), sel.Matches(labels.Set(set)); got != want {
				t.Errorf("labels %v, selector %q: %v, want %v", set, s, got, want)
			}
		}
	}
	ro, _ := Transform(object("Rollout", "shop", "checkout", map[string]any{"app": "checkout"}))
	if l := ro.(*Stored).labels; l != nil {
		t.Errorf("a Rollout's labels kept: %q", l)
	}
}
