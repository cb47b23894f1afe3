package timeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
)

// TestNewestRunIsTheControllers holds the one rule of "the newest run of an analysis" (package
// analysisruns, which the plugin, the scripts' tests and every e2e check call) against the rollout
// controller's own answer: on every recorded frame of every timeline of both Rollouts versions, wherever
// the Rollout's status names a current run (status.canary.currentStepAnalysisRunStatus,
// currentBackgroundAnalysisRunStatus, status.blueGreen.prePromotionAnalysisRunStatus,
// postPromotionAnalysisRunStatus, status.canary.currentExperiment), the newest run of that analysis for
// the current revision is the run it names.
func TestNewestRunIsTheControllers(t *testing.T) {
	checked := map[string]int{}
	for v, tls := range recordedTimelines(t) {
		for _, tl := range tls {
			for i, f := range tl.Frames {
				hash := Str(f.Rollout, "status", "currentPodHash")
				rv := analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, hash)
				for typ, name := range analysisruns.StatusRefs(f.Rollout) {
					if typ == analysisruns.Experiment {
						found := false
						for _, e := range rv.Experiments {
							found = found || Str(e, "metadata", "name") == name
						}
						if !found && experimentExists(f, name) {
							t.Errorf("%s %s frame %d: the status names experiment %s, not the revision's newest", v, tl.Name, i, name)
						}
						checked[typ]++
						continue
					}
					// the named run's own analysis (type and step), among every run of the revision
					var key string
					for _, r := range append(append([]analysisruns.Run{}, rv.Runs...), rv.Superseded...) {
						if r.Name == name {
							key = r.Key()
						}
					}
					if key == "" {
						if exists(f, name) {
							t.Errorf("%s %s frame %d: the status names %s (%s), which is not a run of the current revision", v, tl.Name, i, name, typ)
						}
						continue
					}
					if r, _ := rv.Newest(key); r.Name != name {
						t.Errorf("%s %s frame %d: the status names %s as the %s run, analysisruns picks %s", v, tl.Name, i, name, key, r.Name)
					}
					checked[typ]++
				}
			}
		}
	}
	// every kind of reference was compared on some frame, or the test proves nothing about it
	for _, key := range []string{analysisruns.Step, analysisruns.Background, analysisruns.PrePromotion, analysisruns.PostPromotion, analysisruns.Experiment} {
		if checked[key] == 0 {
			t.Errorf("no frame names a %s run: nothing was compared", key)
		}
	}
	t.Logf("compared on frames: %v", checked)
}

func experimentExists(f Frame, name string) bool {
	for _, e := range f.Experiments {
		if Str(e, "metadata", "name") == name {
			return true
		}
	}
	return false
}

func exists(f Frame, name string) bool {
	for _, ar := range f.AnalysisRuns {
		if Str(ar, "metadata", "name") == name {
			return true
		}
	}
	return false
}

// selectsRuns are the files, outside package analysisruns, allowed to read the pod-template hash label
// (the key by which a revision's runs are told apart), with why: none of them picks a revision's runs
// or the newest attempt of an analysis. A new file that reads it fails the test, so the rule cannot
// be written a second time unnoticed.
var selectsRuns = map[string]string{
	"internal/plugin/verdict/verdict.go":               "re-exports the label's name; resolves a revision number to its hash",
	"internal/plugin/rolloutplugin/plugin.go":          "the API label selector that fetches the candidates analysisruns then selects from",
	"internal/plugin/rolloutplugin/noanalysis.go":      "lists every revision's runs (the label's presence) for the verdict's \"analysis removed\" message",
	"internal/plugin/verdict/noanalysis.go":            "names the newest run of an *earlier* revision in the \"analysis removed\" message; the judged revision's runs are analysisruns'",
	"internal/plugin/verdict/noanalysis_test.go":       "builds test objects",
	"internal/plugin/rolloutplugin/noanalysis_test.go": "builds test objects",
	"internal/gate/hooks/hooks.go":                     "labels Argo CD must not copy into a hook's AnalysisRun",
	"internal/bench/worstcase/worstcase.go":            "a benchmark object's labels",
	"test/kube-apiserver-v1.34/main.go":                "which Pods the simulated kubelet holds unready",
	"test/rollouts/harness/tick.go":                    "which Pods the simulated kubelet holds unready",
	"test/rollouts/harness/objects.go":                 "a comment on Services' selectors",
	"test/timeline/verdicts_test.go":                   "builds test objects",
	"internal/plugin/verdict/verdict_test.go":          "builds test objects",
	"internal/plugin/watchcache/watchcache_test.go":    "builds test objects",
	"internal/plugin/verdict/sentence_test.go":         "builds test objects",
	"test/rollouts/live/kargoui.go":                    "lists every run of the pinned revision, to check that the words name at least one of them",
	"test/rollouts/tokenrotation/rotation_test.go":     "names each run's revision in a failure's diagnostics",
}

// TestOneRuleForTheRunsOfARevision proves the former copies of "the newest run of the revision" are gone
// (verdict's own selection, the recorder's ground truth and verdict string, the verdict tests' truth and
// test/timeline's attempt counter): every Go file of the repository that reads the pod-template hash
// label is in selectsRuns, and every file that chooses among runs calls analysisruns.
func TestOneRuleForTheRunsOfARevision(t *testing.T) {
	root := filepath.Join("..", "..")
	label := regexp.MustCompile(`DefaultRolloutUniqueLabelKey|LabelPodTemplateHash|rollouts-pod-template-hash`)
	users := map[string]bool{}
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/plugin/analysisruns" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || rel == "test/timeline/oracle_test.go" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), "analysisruns.Of(") {
			users[rel] = true
		}
		if !label.Match(raw) {
			return nil
		}
		seen[rel] = true
		if _, ok := selectsRuns[rel]; !ok {
			t.Errorf("%s reads the pod-template hash label: select a revision's runs with analysisruns.Of, or add it to selectsRuns with the reason it does not", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range selectsRuns {
		if !seen[rel] {
			t.Errorf("%s no longer reads the label: remove it from selectsRuns", rel)
		}
	}
	// the callers the rule is for
	for _, rel := range []string{"internal/plugin/verdict/verdict.go", "test/timeline/verdicts.go", "test/rollouts/kargoverify/verification.go", "test/rollouts/harness/record.go"} {
		if !users[rel] {
			t.Errorf("%s does not call analysisruns.Of", rel)
		}
	}
}

// recordedTimelines are the committed timelines of every Rollouts version, by version.
func recordedTimelines(t *testing.T) map[string][]*Timeline {
	t.Helper()
	out := map[string][]*Timeline{}
	for _, v := range Versions {
		tls, err := Load(filepath.Join("..", "testdata", "timelines"), v)
		if err != nil {
			t.Fatal(err)
		}
		if len(tls) == 0 {
			t.Fatalf("no timelines for %s", v)
		}
		out[v] = tls
	}
	return out
}

// TestEndedWithoutVerdictIsTheControllers holds the rule of a run the release no longer waits on (package
// analysisruns EndedWithoutVerdict, which the replay's verdicts and the recorder's ground truth call)
// against the controllers' own answer, on every recorded frame of both Rollouts versions. For a run or
// experiment of the current revision still measuring that the rule calls ended:
//   - terminated (spec.terminate): the analysis controller ends it Successful;
//   - released by the promotion: the rollout controller never acts on it again: in every later frame the
//     Rollout keeps the same stable revision, is not aborted, and names it as no current run.
func TestEndedWithoutVerdictIsTheControllers(t *testing.T) {
	checked := map[string]int{}
	for v, tls := range recordedTimelines(t) {
		for _, tl := range tls {
			last := tl.Frames[len(tl.Frames)-1]
			final := map[string]map[string]any{}
			for _, o := range append(append([]map[string]any{}, last.AnalysisRuns...), last.Experiments...) {
				final[Str(o, "metadata", "name")] = o
			}
			for i, f := range tl.Frames {
				rv := analysisruns.Of(f.Rollout, f.AnalysisRuns, f.Experiments, Str(f.Rollout, "status", "currentPodHash"))
				objs := rv.Experiments
				for _, r := range rv.Runs {
					objs = append(objs, r.Object)
				}
				for _, o := range objs {
					name, phase := Str(o, "metadata", "name"), Str(o, "status", "phase")
					if phase == "Successful" || phase == "Failed" || phase == "Error" || phase == "Inconclusive" ||
						!analysisruns.EndedWithoutVerdict(f.Rollout, o) {
						continue
					}
					if Str(o, "spec", "terminate") == "true" {
						checked["terminated"]++
						if got := Str(final[name], "status", "phase"); got != "Successful" {
							t.Errorf("%s %s frame %d: %s was terminated while %s, and ended %q", v, tl.Name, i, name, phase, got)
						}
						continue
					}
					checked["released"]++
					if err := actedOnAfter(tl, i, name); err != nil {
						t.Errorf("%s %s: %s is called released at frame %d, but %v", v, tl.Name, name, i, err)
					}
				}
			}
		}
	}
	if checked["terminated"] == 0 || checked["released"] == 0 {
		t.Fatalf("checked %v: a kind of ended run never occurs, and its check tests nothing", checked)
	}
	t.Logf("frames with a run ended without a verdict: %v", checked)
}

// actedOnAfter is an error if, in a frame after frame i, the rollout controller acts on run: the Rollout
// has another stable revision, is aborted, or names the run as a current one.
func actedOnAfter(tl *Timeline, i int, run string) error {
	stable := Str(tl.Frames[i].Rollout, "status", "stableRS")
	for j := i + 1; j < len(tl.Frames); j++ {
		ro := tl.Frames[j].Rollout
		named := false
		for _, n := range analysisruns.StatusRefs(ro) {
			named = named || n == run
		}
		if Str(ro, "status", "stableRS") != stable || Str(ro, "status", "abort") == "true" || named {
			return fmt.Errorf("the controller acts on it at frame %d (stable %q, abort %q, named %v)",
				j, Str(ro, "status", "stableRS"), Str(ro, "status", "abort"), named)
		}
	}
	return nil
}
