package analysisruns

import (
	"fmt"
	"testing"
)

func obj(name, kind, owner, hash, typ, step, rev, created string) map[string]any {
	labels := map[string]any{}
	if hash != "" {
		labels[LabelPodTemplateHash] = hash
	}
	if typ != "" {
		labels[LabelRolloutType] = typ
	}
	if step != "" {
		labels[LabelStepIndex] = step
	}
	return map[string]any{"metadata": map[string]any{
		"name": name, "labels": labels, "creationTimestamp": created,
		"annotations":     map[string]any{AnnotationRevision: rev},
		"ownerReferences": []any{map[string]any{"kind": kind, "name": owner, "uid": "u-" + owner}},
	}}
}

var rollout = map[string]any{"metadata": map[string]any{"name": "app", "uid": "u-app"}}

func TestOf(t *testing.T) {
	const t0, t1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:10Z"
	for _, tc := range []struct {
		name        string
		runs, exps  []map[string]any
		hash        string
		newest      map[string]string // key -> name
		superseded  int
		experiments []string
	}{
		{name: "retry beats the first attempt, even created in the same second",
			runs: []map[string]any{obj("app-h-2-1", "Rollout", "app", "h", Step, "1", "2", t0), obj("app-h-2-1.1", "Rollout", "app", "h", Step, "1", "2", t0)},
			hash: "h", newest: map[string]string{"Step/1": "app-h-2-1.1"}, superseded: 1},
		{name: "attempt 10 is newer than attempt 9 (not by name)",
			runs: []map[string]any{obj("app-h-2.9", "Rollout", "app", "h", Background, "", "2", t1), obj("app-h-2.10", "Rollout", "app", "h", Background, "", "2", t0)},
			hash: "h", newest: map[string]string{"Background": "app-h-2.10"}, superseded: 1},
		{name: "a rollback to the same hash: the higher revision wins over a higher attempt",
			runs: []map[string]any{obj("app-h-2-1.3", "Rollout", "app", "h", Step, "1", "2", t0), obj("app-h-4-1", "Rollout", "app", "h", Step, "1", "4", t1)},
			hash: "h", newest: map[string]string{"Step/1": "app-h-4-1"}, superseded: 1},
		{name: "other hashes, other Rollouts and other steps are apart",
			runs: []map[string]any{obj("app-h-2-1", "Rollout", "app", "h", Step, "1", "2", t0), obj("app-h-2-3", "Rollout", "app", "h", Step, "3", "2", t1),
				obj("app-g-1-1", "Rollout", "app", "g", Step, "1", "1", t1), obj("other-h-2-1", "Rollout", "other", "h", Step, "1", "2", t1),
				obj("app-h-2-pre", "Rollout", "app", "h", PrePromotion, "", "2", t1), obj("loose", "Rollout", "app", "h", "", "", "2", t1)},
			hash: "h", newest: map[string]string{"Step/1": "app-h-2-1", "Step/3": "app-h-2-3", "PrePromotion": "app-h-2-pre", "Unlabelled": "loose"}},
		{name: "runs of the newest experiment only",
			exps: []map[string]any{obj("app-h-2-0", "Rollout", "app", "h", "", "", "2", t0), obj("app-h-2-0-1", "Rollout", "app", "h", "", "", "2", t0)},
			runs: []map[string]any{obj("app-h-2-0-smoke", "Experiment", "app-h-2-0", "", "", "", "", t0), obj("app-h-2-0-1-smoke", "Experiment", "app-h-2-0-1", "", "", "", "", t1)},
			hash: "h", newest: map[string]string{"Experiment/app-h-2-0-1/smoke": "app-h-2-0-1-smoke"}, experiments: []string{"app-h-2-0-1"}},
		{name: "no hash, nothing", runs: []map[string]any{obj("app-h-2-1", "Rollout", "app", "h", Step, "1", "2", t0)}, hash: "", newest: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv := Of(rollout, tc.runs, tc.exps, tc.hash)
			got := map[string]string{}
			for _, r := range rv.Runs {
				got[r.Key()] = r.Name
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.newest) {
				t.Errorf("newest %v, want %v", got, tc.newest)
			}
			if len(rv.Superseded) != tc.superseded {
				t.Errorf("%d superseded, want %d", len(rv.Superseded), tc.superseded)
			}
			var exps []string
			for _, e := range rv.Experiments {
				exps = append(exps, objName(e))
			}
			if fmt.Sprint(exps) != fmt.Sprint(tc.experiments) {
				t.Errorf("experiments %v, want %v", exps, tc.experiments)
			}
			for k, n := range tc.newest {
				if r, ok := rv.Newest(k); !ok || r.Name != n {
					t.Errorf("Newest(%q) = %q, %v", k, r.Name, ok)
				}
			}
		})
	}
}

func TestStatusRefs(t *testing.T) {
	ro := map[string]any{"status": map[string]any{"currentStepIndex": int64(1), "canary": map[string]any{
		"currentStepAnalysisRunStatus":       map[string]any{"name": "a-1"},
		"currentBackgroundAnalysisRunStatus": map[string]any{"name": "a-bg"},
		"currentExperiment":                  "a-exp",
	}, "blueGreen": map[string]any{"prePromotionAnalysisRunStatus": map[string]any{"name": "a-pre"}}}}
	want := map[string]string{"Step": "a-1", "Background": "a-bg", "Experiment": "a-exp", "PrePromotion": "a-pre"}
	if got := StatusRefs(ro); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func TestAttempt(t *testing.T) {
	for name, want := range map[string]int{"checkout-abc-2-0": 0, "checkout-abc-2-0.1": 1, "checkout-abc-2-0.12": 12, "a.b": 0, "": 0, "x.-1": 0} {
		if got := attempt(name, '.'); got != want {
			t.Errorf("attempt(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestEndedWithoutVerdict(t *testing.T) {
	run := func(name string, terminate bool) map[string]any {
		r := obj(name, "Rollout", "app", "abc", Background, "", "2", "")
		if terminate {
			r["spec"] = map[string]any{"terminate": true}
		}
		return r
	}
	status := func(stable, current, background string) map[string]any {
		st := map[string]any{"stableRS": stable, "currentPodHash": current}
		if background != "" {
			st["canary"] = map[string]any{"currentBackgroundAnalysisRunStatus": map[string]any{"name": background}}
		}
		return map[string]any{"status": st}
	}
	for _, tc := range []struct {
		name    string
		rollout map[string]any
		run     map[string]any
		want    bool
	}{
		{"terminated", status("old", "abc", "bg"), run("bg", true), true},
		{"running, during the update", status("old", "abc", "bg"), run("bg", false), false},
		{"running, promoted, still named current", status("abc", "abc", "bg"), run("bg", false), false},
		{"running, promoted, released", status("abc", "abc", ""), run("bg", false), true},
		{"promoted, another run named", status("abc", "abc", "bg.1"), run("bg", false), true},
		{"no stable revision yet", status("", "", ""), run("bg", false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EndedWithoutVerdict(tc.rollout, tc.run); got != tc.want {
				t.Errorf("%v, want %v", got, tc.want)
			}
		})
	}
}
