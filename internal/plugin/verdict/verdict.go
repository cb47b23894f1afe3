// Package verdict judges one revision of an Argo Rollouts Rollout from the live Rollout and the
// AnalysisRuns and Experiments its controller created for that revision, for the metric-provider plugin
// (cmd/rollouts-plugin-metric-analysis-health). It decides with the bundled Lua scripts (package lua),
// evaluated by our engine exactly as Argo CD would evaluate them, so the plugin, the CLI and Argo CD's
// health never disagree: there is one source of truth. It reads plain decoded objects and has no
// Kubernetes client dependency; fetching them is the plugin's job.
//
// Upstream facts (github.com/argoproj/argo-rollouts@v1.8.5): the rollout controller names and labels the
// runs it creates in rollout/analysis.go newAnalysisRunFromRollout and utils/analysis/factory.go
// (StepLabels, BackgroundLabels, PrePromotionLabels, PostPromotionLabels: rollouts-pod-template-hash,
// rollout-type, step-index; annotation rollout.argoproj.io/revision; a controller owner reference), its
// experiments in rollout/experiment.go GetExperimentFromTemplate (rollouts-pod-template-hash label, owner
// reference), and the experiment controller owns the experiment's runs without a hash label
// (experiments/experiment.go).
package verdict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/internal/plugin/field"
	redaction "github.com/analysis-health/analysis-health/internal/plugin/redact"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// Phases of a verdict: the names of the Rollouts AnalysisPhase values the plugin returns.
const (
	Running      = "Running"
	Successful   = "Successful"
	Failed       = "Failed"
	Inconclusive = "Inconclusive"
	Error        = "Error"
)

// Labels and annotations the Rollouts controllers put on what they create (package analysisruns).
const (
	LabelPodTemplateHash = analysisruns.LabelPodTemplateHash
	AnnotationRevision   = analysisruns.AnnotationRevision
)

// TypeExperiment is the run type in the value of an Experiment, and of a run an experiment owns.
const TypeExperiment = analysisruns.Experiment

// Objects are the live objects of one Rollout's namespace. AnalysisRuns and Experiments may include
// objects of other Rollouts and revisions: Judge selects those of the revision itself.
type Objects struct {
	Rollout      map[string]any
	AnalysisRuns []map[string]any
	Experiments  []map[string]any
}

// Options tune a judgement.
type Options struct {
	// Revision is the revision to judge: a pod-template hash (the rollouts-pod-template-hash label) or a
	// revision number (the rollout.argoproj.io/revision annotation). Empty: see Image and Pin.
	Revision string
	// Image is the Freight's image: the revision judged is the one whose pod template runs it, and until
	// the Rollout's spec (as its controller observed it) runs it, the verdict is Running.
	Image string
	// Pin is the revision an earlier measurement of the same verification chose (Verdict.Pin, carried in
	// the measurement's metadata): once set it is the revision judged, whatever the Rollout delivers
	// later, so a rolled-back or replaced Freight is never judged by its successor's analysis. It takes
	// precedence over Revision and Image. Without any of the three, the revision the Rollout delivers at
	// the first judgement is pinned.
	Pin *Pin
	// InconclusiveDegraded applies the scripts' inconclusiveStatus = "Degraded" option: an inconclusive
	// analysis then fails the verification, as it makes the Rollout Degraded in Argo CD. A run cut short
	// (CutShort) then fails it too.
	InconclusiveDegraded bool
	// NoAnalysis is the verdict on a revision fully promoted without any run or experiment of it (the
	// Rollout's first revision, a strategy without analysis, analysis removed in this revision, or one
	// the controller skipped): Successful unless its Policy says otherwise. The message names the case.
	NoAnalysis NoAnalysis
	// MaxValueBytes bounds Verdict.Value; default DefaultMaxValueBytes.
	MaxValueBytes int
	// Redact removes Secret values from every text of the message and the value, before a text is cut or
	// encoded (package redact); nil redacts nothing.
	Redact *redaction.Redactor
	// Engine evaluates the scripts; the zero value is the default profile (engine.Default) with Argo CD's 1 s timeout.
	Engine engine.Engine
}

// DefaultMaxValueBytes keeps a measurement's value small: the controller stores up to ten measurements
// per metric in the AnalysisRun's status (DefaultMeasurementHistoryLimit), and an object must stay far
// below etcd's 1.5 MiB limit.
const DefaultMaxValueBytes = 4096

// Verdict is the judgement of a revision.
type Verdict struct {
	Phase   string
	Message string
	// Value is the measurement's value: a JSON string, a sentence that Kargo's UI and Argo Rollouts'
	// dashboard show as it is (sentence.go), within MaxValueBytes.
	Value string
	// Structured is the structured verdict, a Summary as compact JSON within MaxValueBytes: the plugin
	// puts it in the measurement's metadata (Metadata, MetadataVerdict).
	Structured string
	// Revision is the pod-template hash judged (empty if it could not be determined).
	Revision string
	// Pin is what the next judgement of the same verification must be given as Options.Pin (nil until a
	// revision was chosen).
	Pin *Pin
}

// Summary is the structured verdict (Verdict.Structured), and what Value says in words.
type Summary struct {
	// Rollout is "<namespace>/<name>".
	Rollout string `json:"rollout"`
	// Revision is the pod-template hash judged; RolloutRevision the Rollout's revision number for it.
	Revision        string `json:"revision,omitempty"`
	RolloutRevision string `json:"rolloutRevision,omitempty"`
	// Verdict is the phase the plugin returned, Health the Rollout's health by our script.
	Verdict string `json:"verdict"`
	Health  string `json:"health,omitempty"`
	Message string `json:"message,omitempty"`
	// NoAnalysis names the case of a revision fully promoted without analysis (CaseFirstDeployment, …).
	NoAnalysis string     `json:"noAnalysis,omitempty"`
	Runs       []RunValue `json:"runs"`
	// Omitted counts runs, and metrics, left out to keep Value within its bound.
	OmittedRuns    int `json:"omittedRuns,omitempty"`
	OmittedMetrics int `json:"omittedMetrics,omitempty"`
}

// RunValue is one AnalysisRun or Experiment of the revision.
type RunValue struct {
	Name string `json:"name"`
	// Type is Step, Background, PrePromotion, PostPromotion or Experiment; Kind is set for an Experiment
	// object itself (its runs are listed as AnalysisRuns of type Experiment).
	Type    string        `json:"type"`
	Kind    string        `json:"kind,omitempty"`
	Step    *int          `json:"step,omitempty"`
	Phase   string        `json:"phase"`
	Message string        `json:"message,omitempty"`
	Metrics []MetricValue `json:"metrics,omitempty"`
}

// MetricValue is one metric result of a run.
type MetricValue struct {
	Name         string `json:"name"`
	Phase        string `json:"phase"`
	Count        int64  `json:"count"`
	Successful   int64  `json:"successful"`
	Failed       int64  `json:"failed"`
	Inconclusive int64  `json:"inconclusive"`
	Error        int64  `json:"error"`
	DryRun       bool   `json:"dryRun,omitempty"`
	Last         string `json:"last,omitempty"`
	// SuccessCondition and FailureCondition are the metric's, as the run's spec holds them.
	SuccessCondition string `json:"successCondition,omitempty"`
	FailureCondition string `json:"failureCondition,omitempty"`
}

// scripts are the bundled scripts with the options applied.
type scripts struct{ rollout, run, experiment string }

// bundled are the scripts of each InconclusiveDegraded, read once: the text is the same for every
// judgement (each still runs in a fresh sandbox), and read at each it was 8% of the bytes a fleet's
// measurements allocated (a heap profile at 10,000 Rollouts).
var bundled = [2]func() (scripts, error){
	sync.OnceValues(func() (scripts, error) { return readScripts(false) }),
	sync.OnceValues(func() (scripts, error) { return readScripts(true) }),
}

func loadScripts(inconclusiveDegraded bool) (scripts, error) {
	if inconclusiveDegraded {
		return bundled[1]()
	}
	return bundled[0]()
}

func readScripts(inconclusiveDegraded bool) (scripts, error) {
	var s scripts
	for _, x := range []struct {
		kind string
		dst  *string
	}{{"Rollout", &s.rollout}, {"AnalysisRun", &s.run}, {"Experiment", &s.experiment}} {
		src, err := lua.Health("argoproj.io", x.kind)
		if err != nil {
			return s, err
		}
		if inconclusiveDegraded {
			if src, err = lua.SetOptions(src, map[string]any{"inconclusiveStatus": "Degraded"}); err != nil {
				return s, fmt.Errorf("%s script: %w", x.kind, err)
			}
		}
		*x.dst = src
	}
	return s, nil
}

// Judge decides the verdict. An error means the objects could not be judged at all (a script that fails
// to run); a Rollout that cannot be judged yet is a Running verdict, and one whose input is wrong (a
// revision that does not exist) an Error verdict. It judges what Reads keeps of the objects, as the
// plugin's watch cache holds them.
func Judge(objs Objects, opts Options) (Verdict, error) {
	if earlier := opts.NoAnalysis.Earlier; earlier != nil {
		opts.NoAnalysis.Earlier = func() (Objects, error) {
			objs, err := earlier()
			return ProjectObjects(objs), err
		}
	}
	return judge(ProjectObjects(objs), opts)
}

func judge(objs Objects, opts Options) (Verdict, error) {
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	noAnalysisPhase, ok := NoAnalysisPhase(opts.NoAnalysis.Policy)
	if !ok {
		return Verdict{}, fmt.Errorf("noAnalysis %q is not one of %s", opts.NoAnalysis.Policy, strings.Join(NoAnalysisPolicies, ", "))
	}
	s, err := loadScripts(opts.InconclusiveDegraded)
	if err != nil {
		return Verdict{}, err
	}
	ro := objs.Rollout
	md := mapOf(ro["metadata"])
	name, ns := str(md["name"]), str(md["namespace"])
	sum := Summary{Rollout: ns + "/" + name, Runs: []RunValue{}}
	pin := opts.Pin.clone()
	finish := func(phase, msg string) (Verdict, error) {
		sum.Verdict = phase
		sum.Message = msg
		if pin != nil {
			sum.Revision, sum.RolloutRevision = pin.Hash, pin.RolloutRevision
		}
		v := Verdict{Phase: phase, Message: redact(msg, opts.Redact), Revision: sum.Revision, Pin: pin}
		v.Structured = encode(sum, opts)
		v.Value = sentence(sum, opts)
		return v, nil
	}

	health, err := opts.Engine.Health(ro, s.rollout)
	if err != nil {
		return Verdict{}, fmt.Errorf("Rollout %s: health script: %w", sum.Rollout, err)
	}
	sum.Health = health.Status
	st := mapOf(ro["status"])
	current := str(st["currentPodHash"])
	stable := str(st["stableRS"])
	// Until the controller has observed the current spec its status describes the previous revision,
	// whose verdict says nothing about the one being delivered, and a revision cannot be chosen yet.
	observed := observedSpec(ro)
	if pin == nil {
		if !observed {
			return finish(Running, "Rollout "+sum.Rollout+": "+health.Message)
		}
		hash, err := revisionHash(opts.Revision, ro, objs, name, current)
		if err != nil {
			return finish(Error, err.Error())
		}
		if hash == "" {
			return finish(Running, "Rollout "+sum.Rollout+" has not reported its current revision yet")
		}
		if opts.Image != "" && opts.Revision == "" {
			images := podImages(ro)
			if len(images) > 0 && !slices.Contains(images, opts.Image) {
				return finish(Running, fmt.Sprintf("waiting for Rollout %s to run the Freight's image %s (its pod template runs %s)", sum.Rollout, opts.Image, strings.Join(images, ", ")))
			}
		}
		pin = &Pin{Hash: hash}
		if hash == current {
			pin.RolloutRevision = str(mapOf(md["annotations"])[AnnotationRevision])
			pin.Images = podImages(ro)
		}
	}
	hash := pin.Hash
	isCurrent := hash == current && observed
	if isCurrent && stable == hash {
		pin.Promoted = true
	}
	if isCurrent && pin.RolloutRevision == "" {
		// pinned before the controller annotated the revision: its number tells a first deployment
		pin.RolloutRevision = str(mapOf(md["annotations"])[AnnotationRevision])
	}

	rv := analysisruns.Of(ro, objs.AnalysisRuns, objs.Experiments, hash)
	type judged struct {
		what   string
		health engine.Health
	}
	var all []judged
	var cutShort []string
	for _, e := range rv.Experiments {
		h, err := opts.Engine.Health(e, s.experiment)
		if err != nil {
			return Verdict{}, fmt.Errorf("Experiment %s: health script: %w", objName(e), err)
		}
		all = append(all, judged{"Experiment " + objName(e), h})
		sum.Runs = append(sum.Runs, RunValue{Name: objName(e), Type: TypeExperiment, Kind: "Experiment",
			Phase: str(mapOf(e["status"])["phase"]), Message: str(mapOf(e["status"])["message"])})
		if pin.RolloutRevision == "" {
			pin.RolloutRevision = str(mapOf(mapOf(e["metadata"])["annotations"])[AnnotationRevision])
		}
	}
	experiments := map[string]map[string]any{}
	for _, e := range rv.Experiments {
		experiments[objName(e)] = e
	}
	for _, r := range rv.Runs {
		h, err := opts.Engine.Health(r.Object, s.run)
		if err != nil {
			return Verdict{}, fmt.Errorf("AnalysisRun %s: health script: %w", r.Name, err)
		}
		what := r.Type + " analysis run " + r.Name
		all = append(all, judged{what, h})
		sum.Runs = append(sum.Runs, runValue(r))
		if pin.RolloutRevision == "" && r.Type != analysisruns.Experiment {
			pin.RolloutRevision = str(mapOf(mapOf(r.Object["metadata"])["annotations"])[AnnotationRevision])
		}
		if h.Status == engine.Healthy {
			if why := CutShort(r, experiments[r.Experiment]); why != "" {
				cutShort = append(cutShort, what+" "+why)
			}
		}
	}

	// Failed before replaced before inconclusive before in flight: a verdict already reached is never
	// hidden by runs still measuring, and a revision that was replaced before it was fully promoted has
	// failed whatever its runs were doing when it went.
	var failed, inconclusive, busy []string
	for _, j := range all {
		switch j.health.Status {
		case engine.Degraded:
			failed = append(failed, j.what+": "+j.health.Message)
		case engine.Suspended:
			inconclusive = append(inconclusive, j.what+": "+j.health.Message)
		case engine.Healthy:
		default:
			busy = append(busy, j.what+": "+j.health.Message)
		}
	}
	inconclusive = append(inconclusive, cutShort...)
	if len(failed) > 0 {
		return finish(Failed, strings.Join(failed, "; "))
	}
	replaced := observed && hash != current
	if replaced && !pin.Promoted && hash != stable {
		return finish(Failed, fmt.Sprintf("revision %s%s was replaced by %s%s before it was fully promoted",
			hash, revisionSuffix(pin.RolloutRevision), current, revisionSuffix(str(mapOf(md["annotations"])[AnnotationRevision]))))
	}
	if isCurrent && health.Status == engine.Degraded {
		return finish(Failed, "Rollout "+sum.Rollout+" is Degraded: "+health.Message)
	}
	if len(inconclusive) > 0 {
		if opts.InconclusiveDegraded {
			return finish(Failed, strings.Join(inconclusive, "; "))
		}
		return finish(Inconclusive, strings.Join(inconclusive, "; "))
	}
	if isCurrent && health.Status == engine.Suspended && pausedInconclusive(st) {
		return finish(Inconclusive, "Rollout "+sum.Rollout+": "+health.Message)
	}
	if len(busy) > 0 {
		return finish(Running, strings.Join(busy, "; "))
	}
	// passed ends a judgement of a revision that was fully promoted with nothing failed, inconclusive
	// or in flight (state: "is fully promoted", ...): Successful when it had runs or experiments, else
	// the NoAnalysis policy's verdict, in a message that names the case. Every Successful verdict goes
	// through here.
	n := len(rv.Runs) + len(rv.Experiments)
	passed := func(state, analysed, after string) (Verdict, error) {
		if n > 0 {
			return finish(Successful, "revision "+hash+" "+state+" "+analysed+after)
		}
		name, why, err := noAnalysisCase(ro, objs, opts.NoAnalysis, pin, isCurrent)
		if err != nil {
			return Verdict{}, fmt.Errorf("Rollout %s: the runs of its earlier revisions: %w", sum.Rollout, err)
		}
		sum.NoAnalysis = name
		policy := strings.ToLower(opts.NoAnalysis.Policy)
		if policy == "" {
			policy = NoAnalysisSuccessful + ", the default"
		}
		return finish(noAnalysisPhase, fmt.Sprintf("revision %s%s %s, and no analysis ran for it: %s (%s)%s; noAnalysis: %s",
			hash, revisionSuffix(pin.RolloutRevision), state, name, why, after, policy))
	}
	if !isCurrent {
		if !observed {
			return finish(Running, "Rollout "+sum.Rollout+": "+health.Message)
		}
		if hash == stable {
			return passed("is the Rollout's stable revision", "and every analysis of it passed", "")
		}
		return passed("was fully promoted", "and every analysis of it passed", "; it has since been replaced by "+current)
	}
	if health.Status == engine.Suspended {
		if gate, err := humanGateMessage(opts.Engine, ro); err != nil {
			return Verdict{}, fmt.Errorf("Rollout %s: health script: %w", sum.Rollout, err)
		} else if gate != "" {
			return finish(Running, fmt.Sprintf("Rollout %s: %s; revision %s is not fully promoted yet (stable revision %s)", sum.Rollout, gate, hash, stable))
		}
	}
	if health.Status != engine.Healthy {
		return finish(Running, "Rollout "+sum.Rollout+" is "+health.Status+": "+health.Message)
	}
	if stable != hash {
		return finish(Running, fmt.Sprintf("revision %s is not fully promoted yet (stable revision %s)", hash, stable))
	}
	if n == 1 {
		return passed("is fully promoted", "and its analysis passed", "")
	}
	after := ""
	if n > 1 {
		after = fmt.Sprintf(" (%d runs)", n)
	}
	return passed("is fully promoted", "and every analysis of it passed", after)
}

func revisionSuffix(rev string) string {
	if rev == "" {
		return ""
	}
	return " (revision " + rev + ")"
}

// podImages are the images of the Rollout's pod template (containers and init containers), as Kargo's
// argocd-update or kustomize-set-image would have written the Freight's image there.
func podImages(ro map[string]any) []string {
	spec := mapOf(mapOf(mapOf(ro["spec"])["template"])["spec"])
	var out []string
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range listOf(spec[field]) {
			if img := str(mapOf(c)["image"]); img != "" {
				out = append(out, img)
			}
		}
	}
	return out
}

// observedSpec mirrors the generation gates of the Rollout script (observedGeneration, and the workload
// generation of a workloadRef Rollout); they hold for every revision, not only for the one the script
// judges.
func observedSpec(ro map[string]any) bool {
	st, md := mapOf(ro["status"]), mapOf(ro["metadata"])
	observed, err1 := strconv.ParseInt(str(st["observedGeneration"]), 10, 64)
	generation, err2 := strconv.ParseInt(str(md["generation"]), 10, 64)
	if err1 == nil && err2 == nil && observed < generation {
		return false
	}
	if mapOf(ro["spec"])["workloadRef"] != nil {
		if want, ok := mapOf(md["annotations"])["rollout.argoproj.io/workload-generation"]; ok && str(want) != str(st["workloadObservedGeneration"]) {
			return false
		}
	}
	return true
}

func pausedInconclusive(st map[string]any) bool {
	for _, p := range listOf(st["pauseConditions"]) {
		switch str(mapOf(p)["reason"]) {
		case "InconclusiveAnalysisRun", "InconclusiveExperiment":
			return true
		}
	}
	return false
}

// revisionHash resolves Options.Revision to a pod-template hash.
func revisionHash(rev string, ro map[string]any, objs Objects, rollout, current string) (string, error) {
	if rev == "" || rev == current {
		return current, nil
	}
	if rev == str(mapOf(mapOf(ro["metadata"])["annotations"])[AnnotationRevision]) {
		return current, nil
	}
	for _, list := range [][]map[string]any{objs.AnalysisRuns, objs.Experiments} {
		for _, o := range list {
			if !analysisruns.Owned(ro, o) {
				continue
			}
			md := mapOf(o["metadata"])
			hash := str(mapOf(md["labels"])[LabelPodTemplateHash])
			if hash == rev || str(mapOf(md["annotations"])[AnnotationRevision]) == rev {
				return hash, nil
			}
		}
	}
	if rev == str(mapOf(ro["status"])["stableRS"]) {
		return rev, nil
	}
	return "", fmt.Errorf("revision %q is neither the current revision of Rollout %s (%s) nor that of any of its analysis runs or experiments", rev, rollout, current)
}

func runValue(r analysisruns.Run) RunValue {
	st := mapOf(r.Object["status"])
	v := RunValue{Name: r.Name, Type: r.Type, Phase: str(st["phase"]), Message: str(st["message"])}
	if r.Step >= 0 {
		step := r.Step
		v.Step = &step
	}
	conditions := map[string]map[string]any{}
	for _, m := range listOf(mapOf(r.Object["spec"])["metrics"]) {
		conditions[str(mapOf(m)["name"])] = mapOf(m)
	}
	for _, m := range listOf(st["metricResults"]) {
		mr := mapOf(m)
		spec := conditions[str(mr["name"])]
		mv := MetricValue{SuccessCondition: str(spec["successCondition"]), FailureCondition: str(spec["failureCondition"]), Name: str(mr["name"]), Phase: str(mr["phase"]), Count: num(mr["count"]), Successful: num(mr["successful"]),
			Failed: num(mr["failed"]), Inconclusive: num(mr["inconclusive"]), Error: num(mr["error"]), DryRun: mr["dryRun"] == true}
		if ms := listOf(mr["measurements"]); len(ms) > 0 {
			mv.Last = str(mapOf(ms[len(ms)-1])["value"])
		}
		v.Metrics = append(v.Metrics, mv)
	}
	return v
}

func objName(o map[string]any) string { return str(mapOf(o["metadata"])["name"]) }
func uid(o map[string]any) string     { return str(mapOf(o["metadata"])["uid"]) }

// The scripts' reading of a decoded object (package field).
var mapOf, listOf, str = field.Map, field.List, field.Str

func num(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}
