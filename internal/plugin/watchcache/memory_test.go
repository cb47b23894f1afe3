package watchcache

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The objects measured: the frame of the reliability load's scenario (test/rollouts/reliability relScenario)
// whose objects are the largest, as Argo Rollouts v1.10.2's controllers recorded them: a Rollout with its
// AnalysisRuns and Experiments.
const memoryScenario = "../../../test/testdata/timelines/v1.10.2/canary-step-successful.yaml"

// recordedObjects are the JSON of the Rollout and of its runs and experiments in the largest frame.
func recordedObjects(tb testing.TB) (rollout []byte, others [][]byte) {
	tb.Helper()
	raw, err := os.ReadFile(memoryScenario)
	if err != nil {
		tb.Fatal(err)
	}
	var tl struct {
		Frames []struct {
			Rollout      map[string]any   `json:"rollout"`
			AnalysisRuns []map[string]any `json:"analysisRuns"`
			Experiments  []map[string]any `json:"experiments"`
		} `json:"frames"`
	}
	if err := yaml.Unmarshal(raw, &tl); err != nil {
		tb.Fatal(err)
	}
	best := -1
	for _, f := range tl.Frames {
		ro, err := yaml.Marshal(f.Rollout)
		if err != nil {
			tb.Fatal(err)
		}
		size, objs := len(ro), [][]byte{}
		for _, o := range append(f.AnalysisRuns, f.Experiments...) {
			j, err := yaml.YAMLToJSON(mustYAML(tb, o))
			if err != nil {
				tb.Fatal(err)
			}
			size += len(j)
			objs = append(objs, j)
		}
		if size > best {
			best = size
			if rollout, err = yaml.YAMLToJSON(ro); err != nil {
				tb.Fatal(err)
			}
			others = objs
		}
	}
	return rollout, others
}

func mustYAML(tb testing.TB, o any) []byte {
	raw, err := yaml.Marshal(o)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// decode is the object as the dynamic client decodes it from the API server's JSON.
func decode(tb testing.TB, raw []byte) *unstructured.Unstructured {
	obj, err := k8sruntime.Decode(unstructured.UnstructuredJSONScheme, raw)
	if err != nil {
		tb.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRetainedPerRollout reports the heap a cached Rollout with its runs and experiments keeps
// (B/rollout): decoded as they are (objects), as the cache kept them before issue 48 (before: the decoded
// objects without managedFields, the last-applied annotation and the pod template but its images), and
// as it keeps them now (after: verdict.Reads' projection).
func BenchmarkRetainedPerRollout(b *testing.B) {
	rollout, others := recordedObjects(b)
	for _, c := range []struct {
		name      string
		transform func(any) (any, error)
	}{
		{"objects", func(o any) (any, error) { return o, nil }},
		{"before", transformBefore},
		{"after", Transform},
	} {
		b.Run(c.name, func(b *testing.B) {
			const n = 200
			for i := 0; i < b.N; i++ {
				kept := make([]any, 0, n*(1+len(others)))
				start := heap()
				for j := 0; j < n; j++ {
					for _, raw := range append([][]byte{rollout}, others...) {
						o, err := c.transform(decode(b, raw))
						if err != nil {
							b.Fatal(err)
						}
						kept = append(kept, o)
					}
				}
				b.ReportMetric(float64(heap()-start)/n, "B/rollout")
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(float64(len(others)), "runs/rollout")
		})
	}
}

// BenchmarkNamespaceOf500 reports the heap the cache keeps (B/namespace) for a namespace of 500 Rollouts,
// each with the recorded runs and experiments, when a verification names one of them: every object as
// verdict.Reads' projection, watched across namespaces.
func BenchmarkNamespaceOf500(b *testing.B) {
	rollout, others := recordedObjects(b)
	const n = 500
	var objs []k8sruntime.Object
	for j := 0; j < n; j++ {
		suffix := fmt.Sprintf("-%03d", j)
		ro := decode(b, rollout)
		ro.SetName(ro.GetName() + suffix)
		ro.SetNamespace("shop")
		objs = append(objs, ro)
		for _, raw := range others {
			o := decode(b, raw)
			o.SetName(o.GetName() + suffix)
			o.SetNamespace("shop")
			objs = append(objs, o)
		}
	}
	for i := 0; i < b.N; i++ {
		c, cl := fakeCluster(true, objs...)
		verified := objs[0].(*unstructured.Unstructured).GetName()
		start := heap()
		wc := New(Options{})
		if _, ok := live(b, wc, cl, "shop").Rollout(verified); !ok {
			b.Fatal("the verified Rollout is not in the view")
		}
		b.ReportMetric(float64(heap()-start), "B/namespace")
		wc.Close()
		runtime.KeepAlive(c)
	}
}

// transformBefore is what the cache stored of an object before issue 48 (its Transform then), kept
// here as the benchmark's point of comparison.
func transformBefore(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(nil)
	if ann := u.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			u.SetAnnotations(ann)
		}
	}
	if u.GetKind() != "Rollout" {
		return u, nil
	}
	spec, _ := u.Object["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		return u, nil
	}
	podSpec, _ := tmpl["spec"].(map[string]any)
	slim := map[string]any{}
	for _, field := range []string{"containers", "initContainers"} {
		cs, _ := podSpec[field].([]any)
		var keep []any
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			if cm == nil {
				continue
			}
			k := map[string]any{}
			for _, f := range []string{"name", "image"} {
				if x, ok := cm[f]; ok {
					k[f] = x
				}
			}
			keep = append(keep, k)
		}
		if keep != nil {
			slim[field] = keep
		}
	}
	spec["template"] = map[string]any{"spec": slim}
	return u, nil
}
