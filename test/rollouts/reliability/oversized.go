// The oversized-object test of the reliability rig.

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// oversizedCase is one oversized input: the measurement's time and value.
type oversizedCase struct {
	Case       string `json:"case"`
	Bytes      int    `json:"bytes"`
	Phase      string `json:"phase"`
	LatencyMS  int64  `json:"latencyMs"`
	ValueBytes int    `json:"valueBytes"`
}

// oversized: a Rollout of about 1 MB (its pod template padded with environment variables) and a run of
// the Rollout with 1,000 measurements (the recorded frame's, repeated): the measurement is answered
// within apiTimeout and its value, and the structured verdict in its metadata, are at most 4 KiB each.
func oversized(t *testing.T, r *rig, tl *harness.Timeline) []oversizedCase {
	mid := relMid(t, tl)
	var out []oversizedCase
	for _, c := range []struct {
		name string
		grow func(f *harness.Frame) (int, error)
	}{
		{"a Rollout of 1 MB", func(f *harness.Frame) (int, error) {
			containers, _, _ := unstructured.NestedSlice(f.Rollout, "spec", "template", "spec", "containers")
			c0 := containers[0].(map[string]any)
			var env []any
			for i := 0; i < 1000; i++ {
				env = append(env, map[string]any{"name": fmt.Sprintf("PADDING_%04d", i), "value": strings.Repeat("x", 1000)})
			}
			c0["env"] = env
			if err := unstructured.SetNestedSlice(f.Rollout, containers, "spec", "template", "spec", "containers"); err != nil {
				return 0, err
			}
			raw, err := json.Marshal(f.Rollout)
			return len(raw), err
		}},
		{"a run of 1,000 measurements", func(f *harness.Frame) (int, error) {
			for i, ar := range f.AnalysisRuns {
				results, _, _ := unstructured.NestedSlice(ar, "status", "metricResults")
				if len(results) == 0 {
					continue
				}
				mr := results[0].(map[string]any)
				ms, _ := mr["measurements"].([]any)
				if len(ms) == 0 {
					continue
				}
				var grown []any
				for len(grown) < 1000 {
					grown = append(grown, ms[len(grown)%len(ms)])
				}
				mr["measurements"] = grown
				if err := unstructured.SetNestedSlice(f.AnalysisRuns[i], results, "status", "metricResults"); err != nil {
					return 0, err
				}
				raw, err := json.Marshal(f.AnalysisRuns[i])
				return len(raw), err
			}
			return 0, fmt.Errorf("the frame's runs have no measurement")
		}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			var f harness.Frame
			raw, _ := json.Marshal(tl.Frames[mid])
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			size, err := c.grow(&f)
			if err != nil {
				t.Fatal(err)
			}
			ns := fmt.Sprintf("oversized-%d", len(out))
			if _, err := r.newNamespace(ns); err != nil {
				t.Fatal(err)
			}
			if err := r.applyFrame(ns, harness.Name, f); err != nil {
				t.Fatal(err)
			}
			ro, err := frameRollout(f)
			if err != nil {
				t.Fatal(err)
			}
			ar, err := r.verification(ns, harness.Name, kargoverify.FreightImage(ro), fastPoll)
			if err != nil {
				t.Fatal(err)
			}
			s := started{ns: ns, run: ar.Name, key: ns + "/" + ar.Name}
			m := waitMeasurement(t, r, s, 60*time.Second, "measured", func(m *v1alpha1.Measurement) bool { return m.Phase != "" && m.Phase != v1alpha1.AnalysisPhasePending })
			oc := oversizedCase{Case: c.name, Bytes: size, Phase: string(m.Phase), ValueBytes: len(m.Value)}
			for _, w := range r.ctrl.writes.snapshot() {
				if w.Key == s.key {
					oc.LatencyMS = w.Written.Sub(w.Taken).Milliseconds()
					break
				}
			}
			if m.Phase != v1alpha1.AnalysisPhaseRunning {
				t.Errorf("%s: %s %q, want Running (the analysis is in flight)", c.name, m.Phase, m.Message)
			}
			// the structured verdict, under verdict.MetadataVerdict (the package is not imported here: its
			// dependencies are not the recorders' modules')
			if len(m.Value) > 4096 || len(m.Metadata["verdict"]) > 4096 {
				t.Errorf("%s: a value of %d bytes and a structured verdict of %d", c.name, len(m.Value), len(m.Metadata["verdict"]))
			}
			if oc.LatencyMS <= 0 || time.Duration(oc.LatencyMS)*time.Millisecond >= 10*time.Second {
				t.Errorf("%s: answered in %d ms, apiTimeout is 10s", c.name, oc.LatencyMS)
			}
			_ = r.admin.Argo.ArgoprojV1alpha1().AnalysisRuns(ns).Delete(context.Background(), ar.Name, metav1.DeleteOptions{})
			out = append(out, oc)
		})
	}
	return out
}
