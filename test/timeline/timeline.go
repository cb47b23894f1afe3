// Package timeline reads the controller timelines the e2e recorders commit (test/testdata/timelines) and
// derives each frame's analysis verdict from the AnalysisRuns and Experiments themselves: the ground truth
// that e2e (Argo CD v2.14) and test/argocd-v3.6 (Argo CD v3.6.2) hold Argo CD's and Kargo's view against.
// It imports neither Argo CD nor gitops-engine nor Argo Rollouts, so every module can share it whatever
// Argo CD version it builds.
package timeline

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Timeline mirrors harness.Timeline (test/rollouts/harness/record.go); the modules share only the YAML.
type Timeline struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	Summary  string `json:"summary"`
	Outcome  string `json:"outcome"`
	Verdict  string `json:"verdict"`
	// Verification is the outcome the scenario declares for a Kargo verification of the released Freight
	// started at its release (the plugin judges the pinned revision).
	Verification    string  `json:"verification"`
	Controller      string  `json:"controller"`
	Revision        string  `json:"revision"`
	PodTemplateHash string  `json:"podTemplateHash"`
	Frames          []Frame `json:"frames"`
}

// Frame is the world after one tick of the controllers that changed something.
type Frame struct {
	Frame        int              `json:"frame"`
	Time         string           `json:"time"`
	Reconcile    int              `json:"reconcile"`
	Events       []string         `json:"events"`
	Rollout      map[string]any   `json:"rollout"`
	AnalysisRuns []map[string]any `json:"analysisRuns"`
	Experiments  []map[string]any `json:"experiments"`
}

// Versions are the Argo Rollouts releases the recorder modules record with (test/rollouts/harness: v1.8.5,
// test/rollouts-v1.10: v1.10.2), one directory of timelines each.
var Versions = []string{"v1.8.5", "v1.10.2"}

// Load reads every timeline recorded with a Rollouts version from dir/<version>/*.yaml, canary before
// blue-green, then by name. A file that does not decode strictly, or lacks what the verdicts need, is an
// error naming it.
func Load(dir, version string) ([]*Timeline, error) {
	paths, err := filepath.Glob(filepath.Join(dir, version, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*Timeline
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var tl Timeline
		if err := yaml.UnmarshalStrict(raw, &tl); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if err := tl.complete(version); err != nil {
			return nil, fmt.Errorf("%s: not a complete timeline: %v", p, err)
		} else if tl.Name+".yaml" != filepath.Base(p) {
			return nil, fmt.Errorf("%s: not a complete timeline: named %q", p, tl.Name)
		}
		out = append(out, &tl)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Strategy != out[j].Strategy {
			return out[i].Strategy == "canary"
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (tl *Timeline) complete(version string) error {
	switch {
	case len(tl.Frames) == 0:
		return fmt.Errorf("no frames")
	case tl.Verification == "":
		return fmt.Errorf("no declared verification outcome")
	case tl.Revision == "" || tl.PodTemplateHash == "":
		return fmt.Errorf("no revision or pod template hash")
	case !strings.Contains(tl.Controller, "argo-rollouts "+version+","):
		return fmt.Errorf("controller %q is not argo-rollouts %s", tl.Controller, version)
	}
	for i := range tl.Frames {
		if tl.Frames[i].Rollout == nil {
			return fmt.Errorf("frame %d has no rollout", i)
		}
	}
	return nil
}

// ReleasedHash is the pod-template hash of the revision the scenario released: the first current hash,
// after frame 0 (Argo CD applying it), that is not the stable revision of frame 0. It differs from
// PodTemplateHash when the release was rolled back or replaced.
func (tl *Timeline) ReleasedHash() string {
	stable := Str(tl.Frames[0].Rollout, "status", "stableRS")
	for _, f := range tl.Frames {
		if h := Str(f.Rollout, "status", "currentPodHash"); h != "" && h != stable {
			return h
		}
	}
	return tl.PodTemplateHash
}

// RolloutObject is the frame's Rollout as the object Argo CD and gitops-engine take.
func (f *Frame) RolloutObject() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: f.Rollout}
}

// RunObjects are the frame's AnalysisRuns as objects.
func (f *Frame) RunObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, m := range f.AnalysisRuns {
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// Offset is the frame's time relative to frame 0 (Argo CD applying the new revision), "?" if a time
// does not parse.
func (tl *Timeline) Offset(i int) string {
	t0, err0 := time.Parse(time.RFC3339, tl.Frames[0].Time)
	ti, erri := time.Parse(time.RFC3339, tl.Frames[i].Time)
	if err0 != nil || erri != nil {
		return "?"
	}
	return fmt.Sprintf("+%ds", int(ti.Sub(t0).Seconds()))
}

// Str is the field at path as a string ("" when absent; numbers and booleans formatted).
func Str(obj map[string]any, path ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// WantFinalAppHealth is the Application health a script that follows the analysis leaves after the last
// frame: Healthy once the update is promoted or rolled back, Degraded once it is aborted ("" for any
// other outcome, which no health status equals).
func (tl *Timeline) WantFinalAppHealth() string {
	return map[string]string{"promoted": "Healthy", "rolled-back": "Healthy", "aborted": "Degraded"}[tl.Outcome]
}
