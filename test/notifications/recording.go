// Package notifications holds what the notifications proofs share: the Applications the live suite
// recorded frame by frame (test/testdata/live/<version>-applications.yaml, written by test/rollouts/live
// RunLive), the ground truth of each scenario read off the committed timelines (which AnalysisRuns of the
// release failed, and their metrics), the checks every Argo CD release's notifications engine must pass on
// them, and the table docs/notifications.md shows. The engines themselves run in the modules that pin
// them: test/argocd-v3.6/notifications (Argo CD v3.6.2) and test/argocd-v2.14/notifications (v2.14.21).
// It imports no Argo CD code, so that both can share it.
package notifications

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Recording is test/testdata/live/<Rollouts version>-applications.yaml: every distinct state of each live
// scenario's Application (with our scripts installed), as the live suite's watch saw it, trimmed by Trim.
type Recording struct {
	ArgoCD   string `json:"argocd"`
	Rollouts string `json:"rollouts"`
	// PersistResourceHealth is the application controller's --persist-resource-health as the live
	// Argo CD ran with it (read from argocd-cmd-params-cm, which generate --format notifications sets).
	PersistResourceHealth bool       `json:"persistResourceHealth"`
	Scenarios             []Scenario `json:"scenarios"`
}

// Scenario is one live scenario's Application, frame by frame.
type Scenario struct {
	Name string `json:"name"`
	// NoAnalysis is the case of a revision promoted without analysis (the plugin proof's no-analysis
	// scenarios, live): it has no recorded timeline, and its truth is that no run of it failed, as the
	// plugin proof asserts of the controllers (no run or experiment of the revision at all).
	NoAnalysis string  `json:"noAnalysis,omitempty"`
	Frames     []Frame `json:"frames"`
}

// Frame is one state of the Application: a watch event that changed what Trim keeps.
type Frame struct {
	Frame int `json:"frame"`
	// Release: seen after Argo CD had applied and compared the release (revision 2), the first frame of
	// the live report's health.
	Release     bool           `json:"release,omitempty"`
	Application map[string]any `json:"application"`
}

// File is the recording's path for a Rollouts version below test/testdata.
func File(testdata, rolloutsVersion string) string {
	return filepath.Join(testdata, "live", rolloutsVersion+"-applications.yaml")
}

// Header is the recording's provenance, the first lines of the file, naming the Argo CD release it was
// recorded from (the Recording's ArgoCD).
func Header(argocd string) string {
	return "# Recorded by test/rollouts/live RunLive from Argo CD " + argocd + "'s application controller beside the Rollouts\n" +
		"# controllers (re-record: make e2e-live UPDATE=1; the live suite compares a run with it): each distinct state\n" +
		"# of every live scenario's Application with our scripts, trimmed to what notification triggers, their\n" +
		"# templates and the notifications controller read (notifications.Trim). Do not edit.\n"
}

// Load reads a recording strictly.
func Load(path string) (*Recording, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := yaml.UnmarshalStrict(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Scenarios) == 0 {
		return nil, fmt.Errorf("%s: no scenarios", path)
	}
	return &r, nil
}

// Marshal is the file's bytes: Header, then the recording.
func (r *Recording) Marshal() ([]byte, error) {
	raw, err := yaml.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append([]byte(Header(r.ArgoCD)), raw...), nil
}

// Scenario is the named scenario, or nil.
func (r *Recording) Scenario(name string) *Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// Trim keeps of an Application what a notification trigger, its template and Argo CD's notifications
// controller read, dropping what changes with every run but means nothing to them (the live run's
// temporary folder in the repository's URL: runDir, replaced by RunPlaceholder):
//   - metadata name and namespace (the subscriptions the proofs add are annotations of their own);
//   - spec project, source and destination (the catalog's templates print the repository);
//   - status health (status, message, lastTransitionTime: the catalog's on-deployed reads it), sync
//     status and revision(s), conditions (the catalog's templates list them), reconciledAt and observedAt
//     (with operationState.finishedAt, Argo CD's notifications controller skips an Application whose
//     sync status is older than its last operation: notification_controller/controller
//     isAppSyncStatusRefreshed), resourceHealthSource;
//   - operationState phase, message, startedAt, finishedAt and syncResult revision(s);
//   - the resources of group argoproj.io (the Rollout and what else our scripts judge; AnalysisTemplates),
//     each with its health, which is where our trigger reads the verdict.
func Trim(app map[string]any, runDir string) map[string]any {
	keep := func(src map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if v, ok := src[k]; ok && v != nil {
				out[k] = v
			}
		}
		return out
	}
	sub := func(m map[string]any, path ...string) map[string]any {
		v, _, _ := unstructured.NestedMap(m, path...)
		return v
	}
	out := map[string]any{
		"apiVersion": app["apiVersion"], "kind": app["kind"],
		"metadata": keep(sub(app, "metadata"), "name", "namespace"),
	}
	spec := keep(sub(app, "spec"), "project", "source", "sources", "destination")
	if src, ok := spec["source"].(map[string]any); ok {
		src = keep(src, "repoURL", "path", "targetRevision")
		if u, ok := src["repoURL"].(string); ok && runDir != "" {
			src["repoURL"] = strings.Replace(u, runDir, RunPlaceholder, 1)
		}
		spec["source"] = src
	}
	out["spec"] = spec
	st := sub(app, "status")
	if st == nil {
		return out
	}
	status := keep(st, "health", "reconciledAt", "observedAt", "resourceHealthSource")
	if s := keep(sub(st, "sync"), "status", "revision", "revisions"); len(s) > 0 {
		status["sync"] = s
	}
	if op := sub(st, "operationState"); op != nil {
		o := keep(op, "phase", "message", "startedAt", "finishedAt")
		if sr := keep(sub(op, "syncResult"), "revision", "revisions"); len(sr) > 0 {
			o["syncResult"] = sr
		}
		status["operationState"] = o
	}
	if conds, ok := st["conditions"].([]any); ok {
		var cs []any
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				cs = append(cs, keep(m, "type", "message"))
			}
		}
		status["conditions"] = cs
	}
	if res, ok := st["resources"].([]any); ok {
		var rs []any
		for _, r := range res {
			if m, ok := r.(map[string]any); ok && m["group"] == "argoproj.io" {
				rs = append(rs, m)
			}
		}
		status["resources"] = rs
	}
	out["status"] = status
	return out
}

// RunPlaceholder stands for the live run's temporary folder in a recorded repoURL.
const RunPlaceholder = "/live"

// Same reports whether two trimmed Applications are equal.
func Same(a, b map[string]any) bool { return reflect.DeepEqual(a, b) }

// ResourceHealth is the health status and message of the resource of group argoproj.io and the kind in
// the frame's Application, "" if it has none (v3 without --persist-resource-health).
func (f Frame) ResourceHealth(kind string) (status, message string, ok bool) {
	res, _, _ := unstructured.NestedSlice(f.Application, "status", "resources")
	for _, r := range res {
		m, _ := r.(map[string]any)
		if m["kind"] != kind {
			continue
		}
		h, _ := m["health"].(map[string]any)
		if h == nil {
			return "", "", false
		}
		s, _ := h["status"].(string)
		msg, _ := h["message"].(string)
		return s, msg, true
	}
	return "", "", false
}

// AppHealth is the Application's status.health.status.
func (f Frame) AppHealth() string {
	s, _, _ := unstructured.NestedString(f.Application, "status", "health", "status")
	return s
}

// Stable is what a re-run of the live suite must reproduce of a scenario: from the release on, the
// Application's health and the Rollout's health in status.resources (with its message when Degraded or
// Suspended: what a notification carries), each collapsed to its changes. The rest (timestamps,
// revisions, how many states a sync passes through, the messages of analysis in flight) varies with the
// machine's speed, as in the live report (recorder LiveReport.stable).
func (s Scenario) Stable() (app, rollout []string) {
	for _, f := range s.Frames {
		if !f.Release {
			continue
		}
		if h := f.AppHealth(); len(app) == 0 || app[len(app)-1] != h {
			app = append(app, h)
		}
		st, msg, ok := f.ResourceHealth("Rollout")
		h := "(no health in status.resources)"
		if ok {
			h = st
			if st == "Degraded" || st == "Suspended" {
				h += ": " + msg
			}
		}
		if len(rollout) == 0 || rollout[len(rollout)-1] != h {
			rollout = append(rollout, h)
		}
	}
	return app, rollout
}

// ReleaseRevision is the revision Argo CD compared the Application at in the release's first frame, or "".
func (s Scenario) ReleaseRevision() string {
	for _, f := range s.Frames {
		if f.Release {
			r, _, _ := unstructured.NestedString(f.Application, "status", "sync", "revision")
			return r
		}
	}
	return ""
}

// Refailed is the scenario's frames up to fired (the frame at which a trigger fired), then the last frame
// before it of the same synced revision whose Rollout was not Degraded (its analysis in flight), and the
// fired frame again: a retry of the revision that fails again, which oncePer must not notify a second
// time. It is built from recorded states because no recorded scenario fails twice in one revision.
func (s Scenario) Refailed(fired int) (*Scenario, error) {
	if fired <= 0 || fired >= len(s.Frames) {
		return nil, fmt.Errorf("%s: frame %d of %d", s.Name, fired, len(s.Frames))
	}
	// the revision of the sync, or, while Kargo's sync runs without a result yet (Kargo clears the
	// previous operationState when it starts one), the revision the Application is compared at
	rev := func(f Frame) string {
		if r, _, _ := unstructured.NestedString(f.Application, "status", "operationState", "syncResult", "revision"); r != "" {
			return r
		}
		r, _, _ := unstructured.NestedString(f.Application, "status", "sync", "revision")
		return r
	}
	want := rev(s.Frames[fired])
	inFlight := -1
	for i := fired - 1; i >= 0 && rev(s.Frames[i]) == want; i-- {
		if st, _, ok := s.Frames[i].ResourceHealth("Rollout"); ok && st != "Degraded" {
			inFlight = i
			break
		}
	}
	if want == "" || inFlight < 0 {
		return nil, fmt.Errorf("%s: no frame before %d of its synced revision %q with the Rollout not Degraded", s.Name, fired, want)
	}
	out := &Scenario{Name: s.Name + "-refailed"}
	for _, f := range append(append(append([]Frame(nil), s.Frames[:fired+1]...), s.Frames[inFlight]), s.Frames[fired]) {
		f.Frame = len(out.Frames)
		out.Frames = append(out.Frames, f)
	}
	return out, nil
}
