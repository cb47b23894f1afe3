// Package costcases is what the cost benchmarks of every Argo CD VM share (test/argocd-v2.14/cost_bench_test.go
// for v2.14, test/argocd-v3.6/cost_bench_test.go for v3.6; `make bench`, rendered into docs/performance.md
// by internal/bench/benchdoc): the sets of objects measured, the state Argo CD prepares, its conversion of the
// object, and the benchmark bodies. It imports no Argo CD code: each module passes in, as a VM, the calls
// into its own Argo CD, so the two measure the same objects in the same way and differ only there.
//
// Each fixture is measured on the path it takes, per kind:
//   - steady: a Rollout with no analysis in flight, a Successful AnalysisRun or Experiment;
//   - inflight: analysis running or pending, an experiment running;
//   - failed: a Degraded verdict, or an inconclusive one;
//   - legacy: a Rollout of a controller older than v1.0 (no status.phase).
package costcases

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// The paths, in the order a kind's sets are listed.
const (
	Steady   = "steady"
	Inflight = "inflight"
	Failed   = "failed"
	Legacy   = "legacy"
)

// Paths are the paths in their order.
var Paths = []string{Steady, Inflight, Failed, Legacy}

// Set is the fixtures of one kind taking one path.
type Set struct {
	Kind, Path string
	Objs       []*unstructured.Unstructured
}

// Name is the set's part of a benchmark's name (internal/bench/benchdoc parses it).
func (s Set) Name() string { return s.Kind + "/" + s.Path }

// Sets groups the bundled fixtures that keep accepts by kind and path, in the order of ahlua.Kinds and
// Paths, leaving out empty sets. The callers keep the fixtures Argo CD's built-in scripts evaluate without
// a Lua error (some action fixtures lack metadata.generation, on which the built-in Rollout script fails),
// so that every variant runs on the same objects; the path is decided by our script's verdict on the
// source under profile.
func Sets(profile engine.Profile, keep func(*unstructured.Unstructured) bool) ([]Set, error) {
	fixtures, err := ahlua.Fixtures()
	if err != nil {
		return nil, err
	}
	if len(fixtures) == 0 {
		return nil, fmt.Errorf("no fixtures found")
	}
	byName := map[string]*Set{}
	for _, fx := range fixtures {
		m, err := fx.Object()
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{Object: m}
		if !keep(obj) {
			continue
		}
		src, err := ahlua.Health(fx.Kind.Group, fx.Kind.Kind)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fx.Path, err)
		}
		h, err := engine.Engine{Profile: profile}.Health(obj.Object, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fx.Path, err)
		}
		s := Set{Kind: fx.Kind.Kind, Path: Path(fx.Kind.Kind, obj, h)}
		if byName[s.Name()] == nil {
			byName[s.Name()] = &s
		}
		byName[s.Name()].Objs = append(byName[s.Name()].Objs, obj)
	}
	var out []Set
	for _, k := range ahlua.Kinds() {
		for _, p := range Paths {
			if s := byName[k.Kind+"/"+p]; s != nil {
				out = append(out, *s)
			}
		}
	}
	return out, nil
}

// Path is the path an object of kind takes, given our script's verdict h on it. A Rollout's steady or
// inflight is decided by its status (IsSteady), not the verdict: a Rollout still rolling out with no
// analysis running costs what a steady one does.
func Path(kind string, obj *unstructured.Unstructured, h engine.Health) string {
	if phase, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "phase"); kind == "Rollout" && (phase == nil || phase == "") {
		return Legacy
	}
	if h.Status == engine.Degraded || strings.Contains(strings.ToLower(h.Message), "inconclusive") {
		return Failed
	}
	if kind == "Rollout" {
		if IsSteady(obj) {
			return Steady
		}
		return Inflight
	}
	if h.Status == engine.Healthy {
		return Steady
	}
	return Inflight
}

// analysisStatuses are the Rollout status fields holding the phase of an analysis the Rollout runs.
var analysisStatuses = [][]string{
	{"status", "canary", "currentStepAnalysisRunStatus", "status"},
	{"status", "canary", "currentBackgroundAnalysisRunStatus", "status"},
	{"status", "blueGreen", "prePromotionAnalysisRunStatus", "status"},
	{"status", "blueGreen", "postPromotionAnalysisRunStatus", "status"},
}

// IsSteady reports a Rollout with no analysis or experiment in flight, failed or inconclusive: the state a
// Rollout spends most of its life in, and so most of Argo CD's evaluations of its health.
func IsSteady(r *unstructured.Unstructured) bool {
	for _, f := range analysisStatuses {
		if v, found, _ := unstructured.NestedString(r.Object, f...); found && v != "Successful" {
			return false
		}
	}
	if v, _, _ := unstructured.NestedString(r.Object, "status", "canary", "currentExperiment"); v != "" {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(r.Object, "status", "pauseConditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && (m["reason"] == "InconclusiveAnalysisRun" || m["reason"] == "InconclusiveExperiment") {
			return false
		}
	}
	return true
}

// SteadyOf is the steady Rollouts of rollouts, in their order.
func SteadyOf(rollouts []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, r := range rollouts {
		if IsSteady(r) {
			out = append(out, r)
		}
	}
	return out
}
