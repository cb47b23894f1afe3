// Package analysisruns picks, among the AnalysisRuns and Experiments of a namespace, those the Argo
// Rollouts controllers created for one revision of a Rollout, and of each analysis the newest attempt.
// It is the only place in analysis-health that decides which run is "the" run of an analysis: the metric
// plugin (package verdict), the scripts' Go tests and every end-to-end check call it, and a test holds it
// against the run names the rollout controller itself writes into the Rollout's status.
//
// Upstream facts (github.com/argoproj/argo-rollouts@v1.8.5, unchanged in v1.10.2):
//   - rollout/analysis.go newAnalysisRunFromRollout and utils/analysis/factory.go label each run with the
//     revision's pod-template hash (rollouts-pod-template-hash), its type (rollout-type: Step, Background,
//     PrePromotion, PostPromotion) and a step's index (step-index), annotate it with the Rollout's revision
//     number (rollout.argoproj.io/revision), and name it <rollout>-<hash>-<revision>[-<step>|-pre|-post];
//   - utils/analysis/helpers.go CreateWithCollisionCounter names a re-run of the same analysis (a retry, a
//     resume after an inconclusive result) <name>.1, <name>.2, ...: the collision counter is the attempt;
//   - rollout/experiment.go GetExperimentFromTemplate names an experiment <rollout>-<hash>-<revision>-<step>
//     with the same labels, and createExperimentWithCollisionHandling a re-run <name>-1, <name>-2, ...;
//   - experiments/experiment.go owns the experiment's runs, which carry no pod-template hash label.
//
// A rollback to an earlier pod template reuses its hash under a new revision number, so the newest run of
// an analysis is the one of the highest revision number, then of the highest attempt; the creation time
// (one-second resolution) and the name only break ties the controller never makes.
package analysisruns

import (
	"sort"
	"strconv"
	"strings"

	"github.com/analysis-health/analysis-health/internal/plugin/field"
)

// Labels and annotations the Rollouts controllers put on what they create.
const (
	LabelPodTemplateHash = "rollouts-pod-template-hash"
	LabelRolloutType     = "rollout-type"
	LabelStepIndex       = "step-index"
	AnnotationRevision   = "rollout.argoproj.io/revision"
)

// Run types: the rollout-type label's values, and Experiment for a run an experiment of the revision owns.
const (
	Step          = "Step"
	Background    = "Background"
	PrePromotion  = "PrePromotion"
	PostPromotion = "PostPromotion"
	Experiment    = "Experiment"
	// Unlabelled is a run the Rollout owns, with the revision's hash but no rollout-type label.
	Unlabelled = "Unlabelled"
)

// Run is one AnalysisRun of a revision.
type Run struct {
	Object map[string]any
	Name   string
	// Type is Step, Background, PrePromotion, PostPromotion, Experiment or Unlabelled.
	Type string
	// Step is the step index of a Step run, or -1.
	Step int
	// Experiment names the owning experiment of an Experiment run.
	Experiment string
	// Revision is the Rollout revision number the run was created for (0 if not annotated); Attempt the
	// collision counter of its name (0 for the first attempt).
	Revision int
	Attempt  int
}

// Key identifies the analysis a run is an attempt of: its type and step, or for an experiment's run the
// experiment and the analysis' name within it.
func (r Run) Key() string {
	switch r.Type {
	case Step:
		return Step + "/" + strconv.Itoa(r.Step)
	case Experiment:
		return Experiment + "/" + r.Experiment + "/" + strings.TrimPrefix(stripAttempt(r.Name), r.Experiment+"-")
	}
	return r.Type
}

// Revision is what the controllers created for one revision of a Rollout.
type Revision struct {
	// Runs are the newest attempt of each analysis, oldest first (by creation, then name).
	Runs []Run
	// Superseded are the older attempts, which record a verdict someone already acted on (a retry, a
	// resume after an inconclusive result).
	Superseded []Run
	// Experiments are the newest experiment of each experiment step, by name.
	Experiments []map[string]any
}

// Newest returns the newest run of the analysis key (Run.Key), or false.
func (rv Revision) Newest(key string) (Run, bool) {
	for _, r := range rv.Runs {
		if r.Key() == key {
			return r, true
		}
	}
	return Run{}, false
}

// Of selects the runs and experiments of the revision with pod-template hash hash among runs and
// experiments (which may hold other Rollouts' and revisions' objects): those the Rollout owns (by name,
// and by uid where both carry one) with that hash, and the runs its selected experiments own.
func Of(rollout map[string]any, runs, experiments []map[string]any, hash string) Revision {
	var rv Revision
	if hash == "" {
		return rv
	}
	md := mapOf(rollout["metadata"])
	name, uid := str(md["name"]), str(md["uid"])
	newestExp := map[string]map[string]any{}
	for _, e := range experiments {
		if !ownedBy(e, "Rollout", name, uid) || label(e, LabelPodTemplateHash) != hash {
			continue
		}
		step := experimentStep(str(mapOf(e["metadata"])["name"]), name, hash)
		if prev, ok := newestExp[step]; !ok || newerExperiment(e, prev) {
			newestExp[step] = e
		}
	}
	expNames := map[string]bool{}
	for _, e := range newestExp {
		rv.Experiments = append(rv.Experiments, e)
		expNames[objName(e)] = true
	}
	sort.Slice(rv.Experiments, func(i, j int) bool { return objName(rv.Experiments[i]) < objName(rv.Experiments[j]) })

	var all []Run
	for _, ar := range runs {
		r := Run{Object: ar, Name: objName(ar), Step: -1, Attempt: attempt(objName(ar), '.'),
			Revision: atoi(str(mapOf(mapOf(ar["metadata"])["annotations"])[AnnotationRevision]))}
		if exp := ownerName(ar, "Experiment"); exp != "" {
			if !expNames[exp] {
				continue
			}
			r.Type, r.Experiment = Experiment, exp
		} else {
			if !ownedBy(ar, "Rollout", name, uid) || label(ar, LabelPodTemplateHash) != hash {
				continue
			}
			r.Type = label(ar, LabelRolloutType)
			if r.Type == "" {
				r.Type = Unlabelled
			}
			if r.Type == Step {
				if i, err := strconv.Atoi(label(ar, LabelStepIndex)); err == nil {
					r.Step = i
				}
			}
		}
		all = append(all, r)
	}
	newest := map[string]int{}
	for i, r := range all {
		if j, ok := newest[r.Key()]; !ok || newer(r, all[j]) {
			newest[r.Key()] = i
		}
	}
	for i, r := range all {
		if newest[r.Key()] == i {
			rv.Runs = append(rv.Runs, r)
		} else {
			rv.Superseded = append(rv.Superseded, r)
		}
	}
	byAge := func(l []Run) {
		sort.Slice(l, func(i, j int) bool {
			a, b := created(l[i].Object), created(l[j].Object)
			if a != b {
				return a < b
			}
			return l[i].Name < l[j].Name
		})
	}
	byAge(rv.Runs)
	byAge(rv.Superseded)
	return rv
}

// newer orders two attempts of one analysis.
func newer(a, b Run) bool {
	if a.Revision != b.Revision {
		return a.Revision > b.Revision
	}
	if a.Attempt != b.Attempt {
		return a.Attempt > b.Attempt
	}
	if ca, cb := created(a.Object), created(b.Object); ca != cb {
		return ca > cb
	}
	return a.Name > b.Name
}

func newerExperiment(a, b map[string]any) bool {
	ra := atoi(str(mapOf(mapOf(a["metadata"])["annotations"])[AnnotationRevision]))
	rb := atoi(str(mapOf(mapOf(b["metadata"])["annotations"])[AnnotationRevision]))
	if ra != rb {
		return ra > rb
	}
	if aa, ab := attempt(objName(a), '-'), attempt(objName(b), '-'); aa != ab {
		return aa > ab
	}
	if ca, cb := created(a), created(b); ca != cb {
		return ca > cb
	}
	return objName(a) > objName(b)
}

// experimentStep is the step index part of an experiment's name <rollout>-<hash>-<revision>-<step>[-n].
func experimentStep(name, rollout, hash string) string {
	rest := strings.TrimPrefix(name, rollout+"-"+hash+"-")
	parts := strings.Split(rest, "-") // <revision>, <step>[, <n>]
	if len(parts) >= 2 {
		return parts[1]
	}
	return rest
}

// attempt is the collision counter after the last sep of a name, 0 if there is none.
func attempt(name string, sep byte) int {
	i := strings.LastIndexByte(name, sep)
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func stripAttempt(name string) string {
	if attempt(name, '.') > 0 {
		return name[:strings.LastIndexByte(name, '.')]
	}
	return name
}

// EndedWithoutVerdict reports whether the rollout controller has stopped waiting for a run's (or an
// experiment's) verdict, so that the release no longer waits on it:
//   - it terminated it (spec.terminate): the analysis controller then ends the run Successful, "Run
//     Terminated", unless a metric already exceeded its limit (analysis/analysis.go assessRunStatus);
//   - it released it because the revision is fully promoted: rollout/analysis.go
//     reconcileBackgroundAnalysisRun returns no current background run once rolloututil.IsFullyPromoted, so
//     the Rollout's status stops naming it, and the next reconcile terminates it with the other runs that
//     are no longer current (cancelAnalysisRuns). A measurement taken before that reconcile may still fail
//     the run, and the rollout controller then ignores it (canary-background-failed-after-promotion on
//     v1.8.5): the release is done, but the analysis did not pass, which the plugin's verdict (package
//     verdict, strict) still reports.
//
// It is the one rule of this for every check of a revision's release: test/timeline's verdicts of the
// recorded frames, and the recorder's ground truth at each tick. test/timeline
// TestEndedWithoutVerdictIsTheControllers holds it to the recorded frames.
func EndedWithoutVerdict(rollout, run map[string]any) bool {
	if mapOf(run["spec"])["terminate"] == true {
		return true
	}
	status := mapOf(rollout["status"])
	if str(status["stableRS"]) == "" || str(status["stableRS"]) != str(status["currentPodHash"]) {
		return false
	}
	name := objName(run)
	for _, current := range StatusRefs(rollout) {
		if current == name {
			return false
		}
	}
	return true
}

// StatusRefs are the runs the Rollout's status names as its current ones, by run type: what the rollout
// controller itself considers the newest run of each analysis of the current revision
// (rollout/analysis.go reconcileAnalysisRuns; status.canary.currentStepAnalysisRunStatus,
// currentBackgroundAnalysisRunStatus, status.blueGreen.prePromotionAnalysisRunStatus,
// postPromotionAnalysisRunStatus), and the current experiment under Experiment. The step run's status
// outlives its step (an abort resets currentStepIndex but keeps it), so its step is the run's own.
func StatusRefs(rollout map[string]any) map[string]string {
	st := mapOf(rollout["status"])
	canary, bg := mapOf(st["canary"]), mapOf(st["blueGreen"])
	out := map[string]string{}
	add := func(typ string, v any) {
		if n := str(mapOf(v)["name"]); n != "" {
			out[typ] = n
		}
	}
	add(Step, canary["currentStepAnalysisRunStatus"])
	add(Background, canary["currentBackgroundAnalysisRunStatus"])
	add(PrePromotion, bg["prePromotionAnalysisRunStatus"])
	add(PostPromotion, bg["postPromotionAnalysisRunStatus"])
	if n := str(canary["currentExperiment"]); n != "" {
		out[Experiment] = n
	}
	return out
}

// Owned reports whether the Rollout owns o (by name, and by uid where both carry one).
func Owned(rollout, o map[string]any) bool {
	md := mapOf(rollout["metadata"])
	return ownedBy(o, "Rollout", str(md["name"]), str(md["uid"]))
}

func ownedBy(o map[string]any, kind, name, uid string) bool {
	for _, ref := range listOf(mapOf(o["metadata"])["ownerReferences"]) {
		r := mapOf(ref)
		if str(r["kind"]) == kind && str(r["name"]) == name && (uid == "" || str(r["uid"]) == "" || str(r["uid"]) == uid) {
			return true
		}
	}
	return false
}

func ownerName(o map[string]any, kind string) string {
	for _, ref := range listOf(mapOf(o["metadata"])["ownerReferences"]) {
		if r := mapOf(ref); str(r["kind"]) == kind {
			return str(r["name"])
		}
	}
	return ""
}

func label(o map[string]any, key string) string {
	return str(mapOf(mapOf(o["metadata"])["labels"])[key])
}
func objName(o map[string]any) string { return str(mapOf(o["metadata"])["name"]) }
func created(o map[string]any) string { return str(mapOf(o["metadata"])["creationTimestamp"]) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// The scripts' reading of a decoded object (package field).
var mapOf, listOf, str = field.Map, field.List, field.Str
