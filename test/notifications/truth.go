package notifications

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/analysis-health/analysis-health/test/timeline"
)

// Run is an AnalysisRun of the release that reached a verdict, read off the committed timeline of the
// same scenario on the same Rollouts controllers (test/testdata/timelines/<version>): the ground truth,
// from the AnalysisRun objects themselves, that the notifications are held to.
type Run struct {
	Name  string `json:"name"`
	Phase string `json:"phase"` // Failed, Error or Inconclusive
	// Metrics are the run's metrics whose phase is the run's verdict (status.metricResults).
	Metrics []string `json:"metrics"`
	// Experiment is the Experiment that owns the run, "" for a Rollout's own.
	Experiment string `json:"experiment,omitempty"`
	// NamedByRollout: some frame's Rollout object names the run (its status points at it). When none
	// does, no Application can: the Rollout is what Argo CD manages and reports on (argo-rollouts#4009:
	// the controller clears status.canary.currentExperiment in the write that aborts the update).
	NamedByRollout bool `json:"namedByRollout"`
}

// Truth is a scenario's ground truth.
type Truth struct {
	Scenario string
	// Runs are the release's runs that reached Failed, Error or Inconclusive, by first verdict.
	Runs []Run
}

// Failed are the runs Failed or Error.
func (t Truth) Failed() []Run {
	var out []Run
	for _, r := range t.Runs {
		if r.Phase != "Inconclusive" {
			out = append(out, r)
		}
	}
	return out
}

// Notified are the runs a trigger must notify: the failed ones, and with inconclusive the inconclusive
// ones too.
func (t Truth) Notified(inconclusive bool) []Run {
	if inconclusive {
		return t.Runs
	}
	return t.Failed()
}

// Summary names the runs and their verdicts, or "passed" when none failed.
func (t Truth) Summary() string {
	if len(t.Runs) == 0 {
		return "no run Failed, Error or Inconclusive"
	}
	var parts []string
	for _, r := range t.Runs {
		s := fmt.Sprintf("%s %s (%s)", r.Name, r.Phase, strings.Join(quoted(r.Metrics), ", "))
		if r.Experiment != "" {
			s += ", of Experiment " + r.Experiment
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = `"` + n + `"`
	}
	return out
}

// Truths reads the ground truth of every named scenario from the timelines of a Rollouts version.
func Truths(timelines, rolloutsVersion string, scenarios []string) (map[string]Truth, error) {
	tls, err := timeline.Load(timelines, rolloutsVersion)
	if err != nil {
		return nil, err
	}
	byName := map[string]*timeline.Timeline{}
	for _, tl := range tls {
		byName[tl.Name] = tl
	}
	out := map[string]Truth{}
	for _, name := range scenarios {
		tl := byName[name]
		if tl == nil {
			return nil, fmt.Errorf("no timeline %s/%s/%s.yaml", timelines, rolloutsVersion, name)
		}
		out[name] = truthOf(tl)
	}
	return out, nil
}

func truthOf(tl *timeline.Timeline) Truth {
	t := Truth{Scenario: tl.Name}
	seen := map[string]bool{}
	for _, f := range tl.Frames {
		for _, ar := range f.AnalysisRuns {
			name, phase := timeline.Str(ar, "metadata", "name"), timeline.Str(ar, "status", "phase")
			// the release's runs: named after its pod template hash (rollout/analysis.go, experiments)
			if seen[name] || !strings.Contains(name, "-"+tl.PodTemplateHash+"-") {
				continue
			}
			if phase != "Failed" && phase != "Error" && phase != "Inconclusive" {
				continue
			}
			seen[name] = true
			r := Run{Name: name, Phase: phase}
			results, _ := ar["status"].(map[string]any)["metricResults"].([]any)
			for _, m := range results {
				mr, _ := m.(map[string]any)
				if mr["phase"] == phase {
					r.Metrics = append(r.Metrics, fmt.Sprint(mr["name"]))
				}
			}
			sort.Strings(r.Metrics)
			md, _ := ar["metadata"].(map[string]any)
			owners, _ := md["ownerReferences"].([]any)
			for _, o := range owners {
				if om, _ := o.(map[string]any); om["kind"] == "Experiment" {
					r.Experiment = fmt.Sprint(om["name"])
				}
			}
			for _, g := range tl.Frames {
				raw, _ := json.Marshal(g.Rollout)
				if strings.Contains(string(raw), `"`+name+`"`) {
					r.NamedByRollout = true
					break
				}
			}
			t.Runs = append(t.Runs, r)
		}
	}
	return t
}
