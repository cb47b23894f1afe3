package harness

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Frame is the state after one reconcile that changed something (or the first state after Argo CD
// applied the new revision, before the controller saw it).
type Frame struct {
	Frame     int      `json:"frame"`
	Time      string   `json:"time"`
	Reconcile int      `json:"reconcile"`
	Events    []string `json:"events"`
	// Rollout, AnalysisRuns and Experiments are the objects as stored in the API server (normalised, see
	// normalise).
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns,omitempty"`
	Experiments  []map[string]any `json:"experiments,omitempty"`
}

// StartRecording records the current state as frame 0 (Argo CD's view right after it applied the new
// revision, before the controller saw it). Earlier ticks (the initial deployment) are not recorded.
func (w *World) StartRecording() error {
	w.Recording = true
	w.Reconciles = 0
	return w.record()
}

func (w *World) record() error {
	// first sightings are noted whether recording or not, so creation times are the same either way
	ro := w.Rollout()
	ars := w.AnalysisRuns()
	exps := w.Experiments()
	now := w.Clock()
	for _, o := range []metav1.Object{ro} {
		w.see(o, now)
	}
	for i := range ars {
		w.see(&ars[i], now)
	}
	for i := range exps {
		w.see(&exps[i], now)
	}
	if !w.Recording {
		w.events = nil
		return nil
	}
	rom, err := w.normalise(ro, "Rollout")
	if err != nil {
		return err
	}
	var arms, exms []map[string]any
	for i := range ars {
		m, err := w.normalise(&ars[i], "AnalysisRun")
		if err != nil {
			return err
		}
		arms = append(arms, m)
	}
	for i := range exps {
		m, err := w.normalise(&exps[i], "Experiment")
		if err != nil {
			return err
		}
		exms = append(exms, m)
	}
	if n := len(w.frames); n > 0 && len(w.events) == 0 {
		last := w.frames[n-1]
		if reflect.DeepEqual(last.Rollout, rom) && reflect.DeepEqual(last.AnalysisRuns, arms) && reflect.DeepEqual(last.Experiments, exms) {
			// a reconcile that wrote nothing leaves Argo CD with the same objects: nothing to record
			return nil
		}
	}
	events := w.events
	if len(w.frames) > 0 {
		events = append(events, "rollout controller reconcile")
	}
	w.frames = append(w.frames, Frame{
		Frame:        len(w.frames),
		Time:         now.UTC().Format(time.RFC3339),
		Reconcile:    w.Reconciles,
		Events:       events,
		Rollout:      rom,
		AnalysisRuns: arms,
		Experiments:  exms,
	})
	w.events = nil
	return nil
}

func (w *World) see(o metav1.Object, now time.Time) {
	if _, ok := w.firstSeen[o.GetUID()]; !ok {
		w.firstSeen[o.GetUID()] = now
	}
}

// fakeUID is a UID derived from kind and name, so regenerated timelines are identical.
func fakeUID(kind, name string) string {
	sum := sha256.Sum256([]byte(kind + "/" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// normalise turns a typed object into the JSON-shaped map Argo CD would read from the API server (with
// apiVersion and kind), minus what depends on the run rather than on the controllers: resourceVersion,
// managedFields, the wall-clock creationTimestamp (replaced by the fake time of first sighting), the
// random UIDs (derived from kind and name), the scenario's namespace (recorded as Namespace) and the
// metrics server's port (recorded as Host).
func (w *World) normalise(obj metav1.Object, kind string) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	raw = []byte(strings.ReplaceAll(string(raw), w.env.Metrics.Addr(), Host))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	m["kind"] = kind
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return nil, errors.New("no metadata")
	}
	delete(md, "resourceVersion")
	delete(md, "managedFields")
	md["namespace"] = Namespace
	md["uid"] = fakeUID(kind, obj.GetName())
	if t, ok := w.firstSeen[obj.GetUID()]; ok {
		md["creationTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	if st, ok := m["status"].(map[string]any); ok && kind == "AnalysisRun" {
		// the analysis controller measures a run's metrics in parallel goroutines and, on a run's first
		// measurements, appends their results in the order they finish: sorted by name here
		if mrs, ok := st["metricResults"].([]any); ok {
			sort.SliceStable(mrs, func(i, j int) bool {
				return fmt.Sprint(mrs[i].(map[string]any)["name"]) < fmt.Sprint(mrs[j].(map[string]any)["name"])
			})
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if ref, ok := r.(map[string]any); ok {
				ref["uid"] = fakeUID(fmt.Sprint(ref["kind"]), fmt.Sprint(ref["name"]))
			}
		}
	}
	return m, nil
}

// Frames recorded so far.
func (w *World) Frames() []Frame { return w.frames }

// SyncErrors the controllers logged.
func (w *World) SyncErrors() []string { return w.syncErrors }

// RefusedWrites is how many AnalysisRun/Experiment writes the guard refused to the recorder.
func (w *World) RefusedWrites() int {
	w.refusedMu.Lock()
	defer w.refusedMu.Unlock()
	return w.refused
}
