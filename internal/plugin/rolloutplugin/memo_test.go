package rolloutplugin

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/plugin/redact"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

func obj(name, uid, rv string) map[string]any {
	md := map[string]any{"name": name, "uid": uid}
	if rv != "" {
		md["resourceVersion"] = rv
	}
	return map[string]any{"metadata": md}
}

// TestMemoKey: the key changes with every input the judgement reads, and only with them.
func TestMemoKey(t *testing.T) {
	base := func() (verdict.Objects, verdict.Options) {
		return verdict.Objects{
			Rollout:      obj("checkout", "u1", "10"),
			AnalysisRuns: []map[string]any{obj("a", "u2", "11"), obj("b", "u3", "12")},
			Experiments:  []map[string]any{obj("e", "u4", "13")},
		}, verdict.Options{Revision: "54d7c4976f", Pin: &verdict.Pin{Hash: "54d7c4976f", RolloutRevision: "2"}}
	}
	o, opts := base()
	key := memoKey("local", o, opts)
	if key == "" {
		t.Fatal("no key for versioned objects")
	}
	same := map[string]func(*verdict.Objects, *verdict.Options){
		"runs in another order": func(o *verdict.Objects, _ *verdict.Options) {
			o.AnalysisRuns[0], o.AnalysisRuns[1] = o.AnalysisRuns[1], o.AnalysisRuns[0]
		},
	}
	other := map[string]func(*verdict.Objects, *verdict.Options){
		"the Rollout changed":   func(o *verdict.Objects, _ *verdict.Options) { o.Rollout = obj("checkout", "u1", "14") },
		"the Rollout recreated": func(o *verdict.Objects, _ *verdict.Options) { o.Rollout = obj("checkout", "u9", "10") },
		"a run changed":         func(o *verdict.Objects, _ *verdict.Options) { o.AnalysisRuns[1] = obj("b", "u3", "15") },
		"a run more": func(o *verdict.Objects, _ *verdict.Options) {
			o.AnalysisRuns = append(o.AnalysisRuns, obj("c", "u5", "16"))
		},
		"a run gone":            func(o *verdict.Objects, _ *verdict.Options) { o.AnalysisRuns = o.AnalysisRuns[:1] },
		"an experiment changed": func(o *verdict.Objects, _ *verdict.Options) { o.Experiments[0] = obj("e", "u4", "17") },
		"another pin": func(_ *verdict.Objects, p *verdict.Options) {
			p.Pin = &verdict.Pin{Hash: "6f8d9c7b5", RolloutRevision: "3"}
		},
		"the pin promoted":         func(_ *verdict.Objects, p *verdict.Options) { p.Pin.Promoted = true },
		"no pin":                   func(_ *verdict.Objects, p *verdict.Options) { p.Pin = nil },
		"another image":            func(_ *verdict.Objects, p *verdict.Options) { p.Image = "registry.example.internal/checkout:2" },
		"inconclusive degraded":    func(_ *verdict.Objects, p *verdict.Options) { p.InconclusiveDegraded = true },
		"another no-analysis rule": func(_ *verdict.Objects, p *verdict.Options) { p.NoAnalysis.Policy = "failed" },
		"a secret to redact":       func(_ *verdict.Objects, p *verdict.Options) { p.Redact = redact.New("s3cr3t") },
		"a value bound":            func(_ *verdict.Objects, p *verdict.Options) { p.MaxValueBytes = 100 },
		"a run moved to experiment": func(o *verdict.Objects, _ *verdict.Options) {
			o.Experiments = append(o.Experiments, o.AnalysisRuns[0])
			o.AnalysisRuns = o.AnalysisRuns[1:]
		},
	}
	for name, f := range same {
		o, opts := base()
		f(&o, &opts)
		if got := memoKey("local", o, opts); got != key {
			t.Errorf("%s: another key", name)
		}
	}
	for name, f := range other {
		o, opts := base()
		f(&o, &opts)
		if got := memoKey("local", o, opts); got == key || got == "" {
			t.Errorf("%s: key %q, want a new one", name, got)
		}
	}
	if memoKey("secret shop/kubeconfig 1f", o, opts) == key {
		t.Error("another cluster: the same key")
	}
	o.AnalysisRuns[0] = obj("a", "u2", "")
	if k := memoKey("local", o, opts); k != "" {
		t.Errorf("a run without a resourceVersion: key %q, want none", k)
	}
}

// TestMemoSlot: a Rollout keeps one entry, its last judgement: the judgement of its objects before a
// change is gone, not kept beside the new one, and another Rollout's entry is its own.
func TestMemoSlot(t *testing.T) {
	objs := func(rv string) verdict.Objects {
		return verdict.Objects{Rollout: obj("checkout", "u1", "10"), AnalysisRuns: []map[string]any{obj("a", "u2", rv)}}
	}
	var m memo
	before, after := objs("11"), objs("12")
	slot := memoSlot("local", before)
	if memoSlot("local", after) != slot {
		t.Fatal("the same Rollout in another slot")
	}
	m.put(slot, memoKey("local", before, verdict.Options{}), verdict.Verdict{Phase: verdict.Running, Message: "before"})
	m.put(slot, memoKey("local", after, verdict.Options{}), verdict.Verdict{Phase: verdict.Running, Message: "after"})
	if _, ok := m.get(slot, memoKey("local", before, verdict.Options{})); ok {
		t.Error("the judgement before the run changed is still kept")
	}
	if v, ok := m.get(slot, memoKey("local", after, verdict.Options{})); !ok || v.Message != "after" {
		t.Errorf("the last judgement: %+v, %v", v, ok)
	}
	other := verdict.Objects{Rollout: obj("cart", "u7", "10")}
	if s := memoSlot("local", other); s == slot {
		t.Error("another Rollout in the same slot")
	}
	if memoSlot("secret shop/kubeconfig 1f", before) == slot {
		t.Error("another cluster in the same slot")
	}
	if len(m.entries) != 1 {
		t.Errorf("%d entries for one Rollout", len(m.entries))
	}
}
