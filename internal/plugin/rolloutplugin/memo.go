package rolloutplugin

import (
	"crypto/sha256"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// A fleet's verifications are resumed every pollInterval while the objects they judge change far less
// often (a Rollout's analysis measures every minute or so). Judging runs the Lua health scripts on the
// Rollout and each of its runs, most of a measurement's CPU, so a Running verdict judged from the
// watches is kept, keyed by everything it depends on: the cluster, the identity and resourceVersion of
// every object judged (an object's resourceVersion names its content), and the options. A verdict
// other than Running is never kept; it is confirmed by a direct read anyway (judge).
//
// A Rollout has one entry (its slot), the last judged: each write to one of its runs makes the verdicts
// of the objects before it useless, and kept by key they filled the memo with them. The key is kept as
// its SHA-256, as it holds every object's identity.
type memo struct {
	mu      sync.Mutex
	entries map[string]memoEntry // by memoSlot
}

type memoEntry struct {
	sum [sha256.Size]byte // of the memoKey
	v   verdict.Verdict
}

// memoLimit bounds the entries; past it the memo starts again empty (one entry per verification in
// flight is what a steady state needs).
const memoLimit = 20000

func (m *memo) get(slot, key string) (verdict.Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[slot]
	if !ok || e.sum != sha256.Sum256([]byte(key)) {
		return verdict.Verdict{}, false
	}
	return copyVerdict(e.v), true
}

func (m *memo) put(slot, key string, v verdict.Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil || len(m.entries) >= memoLimit {
		m.entries = map[string]memoEntry{}
	}
	m.entries[slot] = memoEntry{sha256.Sum256([]byte(key)), copyVerdict(v)}
}

func copyVerdict(v verdict.Verdict) verdict.Verdict {
	if v.Pin != nil {
		pin := *v.Pin
		pin.Images = append([]string(nil), pin.Images...)
		v.Pin = &pin
	}
	return v
}

// memoSlot is the Rollout of a judgement on cluster: its entry in the memo.
func memoSlot(cluster string, objs verdict.Objects) string {
	md, _ := objs.Rollout["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return cluster + "\x00" + uid
}

// memoKey is the key of a judgement of objs with opts on cluster; "" when an object lacks the identity
// that would make the key exact.
func memoKey(cluster string, objs verdict.Objects, opts verdict.Options) string {
	var b strings.Builder
	b.WriteString(cluster)
	b.WriteByte(0)
	// opts.Engine is not in it: the plugin judges with the zero value, always
	for _, s := range []string{opts.Revision, opts.Image, opts.NoAnalysis.Policy, strconv.FormatBool(opts.InconclusiveDegraded), strconv.Itoa(opts.MaxValueBytes)} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	if p := opts.Pin; p != nil {
		b.WriteString(p.Hash + "\x00" + p.RolloutRevision + "\x00" + strings.Join(p.Images, ",") + "\x00" + strconv.FormatBool(p.Promoted))
	}
	b.WriteByte(0)
	b.WriteString(opts.Redact.Key())
	b.WriteByte(0)
	id := func(o map[string]any) string {
		md, _ := o["metadata"].(map[string]any)
		uid, _ := md["uid"].(string)
		rv, _ := md["resourceVersion"].(string)
		name, _ := md["name"].(string)
		if uid == "" || rv == "" {
			return ""
		}
		return name + "/" + uid + "/" + rv
	}
	ro := id(objs.Rollout)
	if ro == "" {
		return ""
	}
	b.WriteString(ro)
	for _, list := range [][]map[string]any{objs.AnalysisRuns, objs.Experiments} {
		ids := make([]string, 0, len(list))
		for _, o := range list {
			s := id(o)
			if s == "" {
				return ""
			}
			ids = append(ids, s)
		}
		// the informers' stores list in no particular order; the judgement does not depend on it
		sort.Strings(ids)
		b.WriteByte(0)
		b.WriteString(strings.Join(ids, ","))
	}
	return b.String()
}
