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

// TestTransform: what is stored of a Rollout keeps what the judgement reads (its spec but the pod
// template's, the images, status, labels and annotations) and drops the rest.
func TestTransform(t *testing.T) {
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "checkout", "namespace": "shop",
			"annotations":   map[string]any{"rollout.argoproj.io/revision": "2", "kubectl.kubernetes.io/last-applied-configuration": "{…}"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{"replicas": int64(3), "strategy": map[string]any{"canary": map[string]any{}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "checkout"}},
				"spec": map[string]any{
					"containers":     []any{map[string]any{"name": "app", "image": "shop/checkout:1.2.3", "env": []any{map[string]any{"name": "X"}}}},
					"initContainers": []any{map[string]any{"name": "init", "image": "shop/init:1"}},
					"volumes":        []any{map[string]any{"name": "v"}}}}},
		"status": map[string]any{"currentPodHash": "abc"},
	}}
	out, err := Transform(ro)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	want := map[string]any{"spec": map[string]any{
		"containers":     []any{map[string]any{"name": "app", "image": "shop/checkout:1.2.3"}},
		"initContainers": []any{map[string]any{"name": "init", "image": "shop/init:1"}}}}
	if tmpl := got.Object["spec"].(map[string]any)["template"]; !reflect.DeepEqual(tmpl, want) {
		t.Errorf("template %v", tmpl)
	}
	if got.GetManagedFields() != nil || got.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] != "" ||
		got.GetAnnotations()["rollout.argoproj.io/revision"] != "2" {
		t.Errorf("metadata %v", got.Object["metadata"])
	}
	if got.Object["spec"].(map[string]any)["replicas"] != int64(3) || got.Object["status"] == nil {
		t.Errorf("spec or status lost: %v", got.Object)
	}
	run := &unstructured.Unstructured{Object: map[string]any{"kind": "AnalysisRun", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"metrics": []any{}}}}
	if out, _ := Transform(run); !reflect.DeepEqual(out.(*unstructured.Unstructured).Object["spec"], map[string]any{"metrics": []any{}}) {
		t.Errorf("a run's spec changed: %v", out)
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
		v, ok = wc.View("local", "here", newClient, "shop")
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
	wc.View("local", "here", newClient, "shop")
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
		v, ok = wc.View("local", "here", func() (dynamic.Interface, error) { return c, nil }, "shop")
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
