package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"
)

// Every template needs both run args: a use that forgets one fails run creation (MergeArgs is what the
// controllers call when they build a run from templates), and with them each metric names its run.
func TestTemplatesKeyRuns(t *testing.T) {
	m, err := NewMetricsServer()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, tmpl := range Templates(m) {
		t.Run(tmpl.Name, func(t *testing.T) {
			if _, err := analysisutil.MergeArgs(nil, tmpl.Spec.Args); err == nil {
				t.Errorf("a use without args resolves; want an error")
			}
			onlyUse := []v1alpha1.Argument{{Name: argUse, Value: Ptr("pre")}}
			if _, err := analysisutil.MergeArgs(onlyUse, tmpl.Spec.Args); err == nil {
				t.Errorf("a use without the revision resolves; want an error")
			}
			args, err := analysisutil.MergeArgs([]v1alpha1.Argument{
				{Name: argRevision, Value: Ptr("6d4f8b7c9")}, {Name: argUse, Value: Ptr("step-1")},
			}, tmpl.Spec.Args)
			if err != nil {
				t.Fatal(err)
			}
			for _, metric := range tmpl.Spec.Metrics {
				e, err := EndpointOf(metric, args)
				if err != nil {
					t.Fatal(err)
				}
				if e.Run != "6d4f8b7c9/step-1" || e.Metric == "" || strings.ContainsAny(e.Metric, "?{") {
					t.Errorf("metric %s: endpoint %+v, want a bare metric and run %q", metric.Name, e, "6d4f8b7c9/step-1")
				}
			}
		})
	}
}

// The server counts per metric and run, and answers from the metric's one script whichever run asks.
func TestMetricsServerCountsPerRun(t *testing.T) {
	m, err := NewMetricsServer()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Script("success-rate", OK(0.1), OK(0.2), OK(0.3))
	m.Script("latency_p99", OK(0.4))
	get := func(path string, q url.Values) string {
		t.Helper()
		resp, err := http.Get("http://" + m.Addr() + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	web := func(rev, use string) url.Values { return url.Values{argRevision: {rev}, argUse: {use}} }
	prom := func(rev, use string) url.Values {
		return url.Values{"query": {`latency_p99{revision="` + rev + `",use="` + use + `"}`}}
	}
	var values []float64
	for _, q := range []url.Values{web("a", "step-1"), web("a", "step-1"), web("b", "step-1")} {
		var v struct{ Value float64 }
		if err := json.Unmarshal([]byte(get("/web/success-rate", q)), &v); err != nil {
			t.Fatal(err)
		}
		values = append(values, v.Value)
	}
	if want := []float64{0.1, 0.2, 0.3}; !equalFloats(values, want) {
		t.Errorf("answers %v, want %v (one script for every run)", values, want)
	}
	if body := get("/prometheus/api/v1/query", prom("a", "background")); !strings.Contains(body, `"0.4"`) {
		t.Errorf("prometheus answer %s, want the scripted 0.4", body)
	}
	got := m.Requests()
	want := map[Endpoint]int{
		{Metric: "success-rate", Run: "a/step-1"}:    2,
		{Metric: "success-rate", Run: "b/step-1"}:    1,
		{Metric: "latency_p99", Run: "a/background"}: 1,
	}
	if len(got) != len(want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	for e, n := range want {
		if got[e] != n {
			t.Errorf("requests of %+v: %d, want %d (all: %v)", e, got[e], n, got)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
