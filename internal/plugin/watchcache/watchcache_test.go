package watchcache

import (
	"reflect"
	"testing"
	"time"

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

// TestIdle: a namespace no measurement asked for in Idle has its informers stopped; asking again starts
// them.
func TestIdle(t *testing.T) {
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Rollouts: "RolloutList", AnalysisRuns: "AnalysisRunList", Experiments: "ExperimentList"},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "checkout", "namespace": "shop"}}})
	wc := New(Options{Idle: 200 * time.Millisecond})
	defer wc.Close()
	newClient := func() (dynamic.Interface, error) { return c, nil }
	deadline := time.Now().Add(5 * time.Second)
	var v View
	for ok := false; !ok; {
		if time.Now().After(deadline) {
			t.Fatal("not live within 5s")
		}
		v, ok = wc.View("local", "here", newClient, "shop", "checkout")
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := v.Rollout("checkout"); !ok {
		t.Error("the Rollout is not in the view")
	}
	if n := wc.Namespaces(); n != 1 {
		t.Fatalf("%d namespaces watched", n)
	}
	time.Sleep(500 * time.Millisecond)
	if n := wc.Namespaces(); n != 0 {
		t.Fatalf("%d namespaces watched after the idle period", n)
	}
	wc.View("local", "here", newClient, "shop", "checkout")
	if n := wc.Namespaces(); n != 1 {
		t.Fatalf("%d namespaces watched after a new measurement", n)
	}
}

// TestVerificationRunsLeftOut: the analysisruns informer lists and watches every run but Kargo's
// verifications, which the plugin never judges.
func TestVerificationRunsLeftOut(t *testing.T) {
	run := func(name string, labels map[string]any) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "AnalysisRun",
			"metadata": map[string]any{"name": name, "namespace": "shop", "labels": labels}}}
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Rollouts: "RolloutList", AnalysisRuns: "AnalysisRunList", Experiments: "ExperimentList"},
		run("checkout-54d7c4976f-2-1", map[string]any{"rollouts-pod-template-hash": "54d7c4976f"}),
		run("experiment-run", map[string]any{}),
		run("test.01jd.abc1234", map[string]any{VerificationRuns: "test", "kargo.akuity.io/freight-collection": "abc1234"}))
	wc := New(Options{})
	defer wc.Close()
	deadline := time.Now().Add(5 * time.Second)
	var v View
	for ok := false; !ok; {
		if time.Now().After(deadline) {
			t.Fatal("not live within 5s")
		}
		v, ok = wc.View("local", "here", func() (dynamic.Interface, error) { return c, nil }, "shop", "checkout")
		time.Sleep(10 * time.Millisecond)
	}
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

// TestOnlyRolloutsAskedFor: of a namespace's Rollouts the view holds those a measurement asked for; one
// asked for after the informers started is held after the Rollouts are listed again, without an event
// of its own.
func TestOnlyRolloutsAskedFor(t *testing.T) {
	rollout := func(name string) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": name, "namespace": "shop", "uid": name + "-uid"},
			"status":   map[string]any{"currentPodHash": "abc"}}}
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Rollouts: "RolloutList", AnalysisRuns: "AnalysisRunList", Experiments: "ExperimentList"},
		rollout("checkout"), rollout("cart"), rollout("search"))
	wc := New(Options{})
	defer wc.Close()
	newClient := func() (dynamic.Interface, error) { return c, nil }
	live := func(name string) View {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if v, ok := wc.View("local", "here", newClient, "shop", name); ok {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatal("not live within 5s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	v := live("checkout")
	if ro, ok := v.Rollout("checkout"); !ok || ro["status"] == nil {
		t.Errorf("the Rollout asked for is not in the view: %v", ro)
	}
	for _, name := range []string{"cart", "search"} {
		if _, ok := v.Rollout(name); ok {
			t.Errorf("Rollout %s, not asked for, is in the view", name)
		}
		obj, ok, _ := v.s.watched[0].Load().inf.GetStore().GetByKey("shop/" + name)
		if st, stored := obj.(*Stored); !ok || !stored || st.raw != nil {
			t.Errorf("Rollout %s, not asked for, is stored as %T", name, obj)
		}
	}
	lists := func() int {
		n := 0
		for _, a := range c.Actions() {
			if a.GetResource() == Rollouts && a.GetVerb() == "list" {
				n++
			}
		}
		return n
	}
	before := lists()
	v = live("cart")
	if _, ok := v.Rollout("cart"); ok {
		t.Fatal("Rollout cart was held before the Rollouts were listed again")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v = live("cart")
		if _, ok := v.Rollout("cart"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Rollout cart, asked for, is not in the view within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := v.Rollout("checkout"); !ok {
		t.Error("Rollout checkout left the view")
	}
	if n := lists() - before; n != 1 {
		t.Errorf("the Rollouts were listed %d times for a Rollout asked for later, want 1", n)
	}
	// a name that does not exist is listed for once, not at every measurement
	before = lists()
	for i := 0; i < 3; i++ {
		v = live("gone")
		v.Rollout("gone")
	}
	if n := lists() - before; n != 1 {
		t.Errorf("the Rollouts were listed %d times for a missing Rollout, want 1", n)
	}
}
