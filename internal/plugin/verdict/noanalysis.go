package verdict

import (
	"fmt"
	"strings"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
)

// Values of NoAnalysis.Policy: the verdict on a revision that was fully promoted without any analysis
// of it (argo-rollouts#3984 asks that an AnalysisRun be the definitive result, first deployment
// included). Successful is the default, the plugin's behaviour before the option existed.
const (
	NoAnalysisSuccessful   = "successful"
	NoAnalysisInconclusive = "inconclusive"
	NoAnalysisFailed       = "failed"
)

// NoAnalysisPolicies are the values of the policy, the default first.
var NoAnalysisPolicies = []string{NoAnalysisSuccessful, NoAnalysisInconclusive, NoAnalysisFailed}

// NoAnalysisPhase is the verdict phase a policy gives (any case; empty is the default), and false for
// a value that is not a policy.
func NoAnalysisPhase(policy string) (string, bool) {
	switch strings.ToLower(policy) {
	case "", NoAnalysisSuccessful:
		return Successful, true
	case NoAnalysisInconclusive:
		return Inconclusive, true
	case NoAnalysisFailed:
		return Failed, true
	}
	return "", false
}

// The cases of a revision fully promoted without analysis, as the message and Summary.NoAnalysis name
// them.
const (
	// CaseFirstDeployment: the Rollout's first revision. The rollout controller runs no analysis while
	// status.stableRS is empty (rollout/analysis.go reconcileAnalysisRuns, initialDeploy) and promotes the
	// first ReplicaSet at once (rollout/sync.go shouldFullPromote, "Initial deploy").
	CaseFirstDeployment = "first deployment"
	// CaseNoAnalysisInStrategy: the strategy names no analysis at all.
	CaseNoAnalysisInStrategy = "no analysis in the strategy"
	// CaseAnalysisRemoved: the strategy names none, but an earlier revision of the Rollout ran some.
	CaseAnalysisRemoved = "analysis removed"
	// CaseAnalysisNotRun: the strategy names analysis (or, for a revision no longer current, cannot be
	// read any more) and the controller ran none for this revision: a rollback to a revision it released
	// before (rollout/analysis.go skips analysis for one within scaleDownDelay or the rollback window, and
	// rollout/canary.go skips the steps of a return to the stable ReplicaSet), or a full promotion before
	// the first analysis started.
	CaseAnalysisNotRun = "analysis not run"
)

// NoAnalysis tunes the verdict on a revision fully promoted without any analysis of it.
type NoAnalysis struct {
	// Policy is one of NoAnalysisPolicies; empty is NoAnalysisSuccessful.
	Policy string
	// Earlier, if set, lists the Rollout namespace's runs and experiments of any revision, for callers
	// whose Objects hold only the judged revision's (the plugin lists by its pod-template hash). It is
	// called only when the revision was promoted without analysis and its strategy names none, to tell
	// CaseAnalysisRemoved from CaseNoAnalysisInStrategy; Judge fails with its error.
	Earlier func() (Objects, error)
}

// noAnalysisCase says why revision hash, which has no run and no experiment, had no analysis, from
// what the controllers wrote: the Rollout's revision annotation (the pin's), its strategy when the
// revision is the current one (the spec is then that revision's), and the runs of its other revisions.
func noAnalysisCase(ro map[string]any, objs Objects, opts NoAnalysis, pin *Pin, isCurrent bool) (name, why string, err error) {
	if isCurrent {
		if strategy, names := strategyAnalysis(ro); !names {
			runs, exps := objs.AnalysisRuns, objs.Experiments
			if opts.Earlier != nil {
				earlier, err := opts.Earlier()
				if err != nil {
					return "", "", err
				}
				runs, exps = append(append([]map[string]any(nil), runs...), earlier.AnalysisRuns...), append(append([]map[string]any(nil), exps...), earlier.Experiments...)
			}
			if earlier := newestEarlierAnalysis(ro, runs, exps, pin.Hash); earlier != "" {
				return CaseAnalysisRemoved, fmt.Sprintf("its %s names no analysis any more, while %s", strategy, earlier), nil
			}
			return CaseNoAnalysisInStrategy, noAnalysisFields(strategy), nil
		}
	}
	if pin.RolloutRevision == "1" {
		return CaseFirstDeployment, "revision 1 is the Rollout's first, and Argo Rollouts runs no analysis until a Rollout has a stable revision", nil
	}
	if !isCurrent {
		return CaseAnalysisNotRun, "the controller ran none for it, and its strategy is no longer in the Rollout's spec", nil
	}
	return CaseAnalysisNotRun, "its strategy names analysis, but the controller ran none for this revision, as for a rollback to a revision it had released, or a full promotion", nil
}

// strategyAnalysis names the Rollout's strategy ("canary strategy", "blueGreen strategy", or "strategy"
// for neither) and reports whether it names anything the controller would create a run or an
// experiment for: a canary's background analysis (with templates: without, rollout/analysis.go
// reconcileBackgroundAnalysisRun creates none), analysis steps and experiment steps, a blue-green's
// pre- and post-promotion analysis. A Rollout without either strategy names none.
func strategyAnalysis(ro map[string]any) (strategy string, names bool) {
	spec := mapOf(mapOf(ro["spec"])["strategy"])
	if c := mapOf(spec["canary"]); c != nil {
		if len(listOf(mapOf(c["analysis"])["templates"])) > 0 {
			return "canary strategy", true
		}
		for _, s := range listOf(c["steps"]) {
			if step := mapOf(s); step["analysis"] != nil || step["experiment"] != nil {
				return "canary strategy", true
			}
		}
		return "canary strategy", false
	}
	if bg := mapOf(spec["blueGreen"]); bg != nil {
		return "blueGreen strategy", bg["prePromotionAnalysis"] != nil || bg["postPromotionAnalysis"] != nil
	}
	return "strategy", false
}

func noAnalysisFields(strategy string) string {
	switch strategy {
	case "canary strategy":
		return "its canary strategy has no analysis step, background analysis or experiment step"
	case "blueGreen strategy":
		return "its blueGreen strategy has no prePromotionAnalysis or postPromotionAnalysis"
	}
	return "it has neither a canary nor a blueGreen strategy"
}

// newestEarlierAnalysis finds, among the runs and experiments the Rollout owns, the one of the highest
// revision number with another pod-template hash than hash, and says what it was ("revision 2 ran
// AnalysisRun checkout-…-2-1"); empty when there is none.
func newestEarlierAnalysis(ro map[string]any, runs, exps []map[string]any, hash string) string {
	best, revision, what := -1, "", ""
	for _, list := range []struct {
		kind string
		objs []map[string]any
	}{{"AnalysisRun", runs}, {"Experiment", exps}} {
		for _, o := range list.objs {
			md := mapOf(o["metadata"])
			h := str(mapOf(md["labels"])[analysisruns.LabelPodTemplateHash])
			if h == "" || h == hash || !analysisruns.Owned(ro, o) {
				continue
			}
			rev := str(mapOf(md["annotations"])[AnnotationRevision])
			n := int(num(rev))
			// the lowest name among those of the newest revision, so the message does not depend on
			// the order of the list
			if n > best || (n == best && list.kind+" "+objName(o) < what) {
				best, revision, what = n, rev, list.kind+" "+objName(o)
			}
		}
	}
	switch {
	case what == "":
		return ""
	case revision == "":
		return "an earlier revision ran " + what
	}
	return "revision " + revision + " ran " + what
}
