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
	"sort"
	"strconv"
	"strings"

	"github.com/analysis-health/analysis-health/engine"
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

// Labels and annotations the Rollouts controllers put on what they create.
const (
	LabelPodTemplateHash = "rollouts-pod-template-hash"
	LabelRolloutType     = "rollout-type"
	LabelStepIndex       = "step-index"
	AnnotationRevision   = "rollout.argoproj.io/revision"
)

// Run types in the value: the rollout-type label, or Experiment for a run an experiment owns.
const (
	TypeExperiment = "Experiment"
)

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
	// revision number (the rollout.argoproj.io/revision annotation). Empty: the one the Rollout is
	// delivering (status.currentPodHash).
	Revision string
	// InconclusiveDegraded applies the scripts' inconclusiveStatus = "Degraded" option: an inconclusive
	// analysis then fails the verification, as it makes the Rollout Degraded in Argo CD.
	InconclusiveDegraded bool
	// MaxValueBytes bounds Verdict.Value; default DefaultMaxValueBytes.
	MaxValueBytes int
	// Redact lists strings (Secret values) that must not appear in the message or the value.
	Redact []string
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
	// Value is compact JSON (a Summary) that Kargo's UI can JSON.parse.
	Value string
	// Revision is the pod-template hash judged (empty if it could not be determined).
	Revision string
}

// Summary is what Value holds.
type Summary struct {
	// Rollout is "<namespace>/<name>".
	Rollout string `json:"rollout"`
	// Revision is the pod-template hash judged; RolloutRevision the Rollout's revision number for it.
	Revision        string `json:"revision,omitempty"`
	RolloutRevision string `json:"rolloutRevision,omitempty"`
	// Verdict is the phase the plugin returned, Health the Rollout's health by our script.
	Verdict string     `json:"verdict"`
	Health  string     `json:"health,omitempty"`
	Message string     `json:"message,omitempty"`
	Runs    []RunValue `json:"runs"`
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
}

// scripts are the bundled scripts with the options applied.
type scripts struct{ rollout, run, experiment string }

func loadScripts(inconclusiveDegraded bool) (scripts, error) {
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
// revision that does not exist) an Error verdict.
func Judge(objs Objects, opts Options) (Verdict, error) {
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	s, err := loadScripts(opts.InconclusiveDegraded)
	if err != nil {
		return Verdict{}, err
	}
	ro := objs.Rollout
	md := mapOf(ro["metadata"])
	name, ns := str(md["name"]), str(md["namespace"])
	sum := Summary{Rollout: ns + "/" + name, Runs: []RunValue{}}
	finish := func(phase, msg string) (Verdict, error) {
		sum.Verdict = phase
		sum.Message = msg
		v := Verdict{Phase: phase, Message: redact(msg, opts.Redact), Revision: sum.Revision}
		v.Value = encode(sum, opts)
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
	// whose verdict says nothing about the one being delivered.
	if !observedSpec(ro) {
		return finish(Running, "Rollout "+sum.Rollout+": "+health.Message)
	}

	hash, err := revisionHash(opts.Revision, ro, objs, name, current)
	if err != nil {
		return finish(Error, err.Error())
	}
	sum.Revision = hash
	if hash == "" {
		return finish(Running, "Rollout "+sum.Rollout+" has not reported its current revision yet")
	}
	if hash == current {
		sum.RolloutRevision = str(mapOf(md["annotations"])[AnnotationRevision])
	}

	runs, experiments := select_(objs, ro, hash)
	type judged struct {
		what   string
		health engine.Health
	}
	var all []judged
	for _, e := range experiments {
		h, err := opts.Engine.Health(e, s.experiment)
		if err != nil {
			return Verdict{}, fmt.Errorf("Experiment %s: health script: %w", objName(e), err)
		}
		all = append(all, judged{"Experiment " + objName(e), h})
		sum.Runs = append(sum.Runs, RunValue{Name: objName(e), Type: TypeExperiment, Kind: "Experiment",
			Phase: str(mapOf(e["status"])["phase"]), Message: str(mapOf(e["status"])["message"])})
		if sum.RolloutRevision == "" {
			sum.RolloutRevision = str(mapOf(mapOf(e["metadata"])["annotations"])[AnnotationRevision])
		}
	}
	for _, r := range runs {
		h, err := opts.Engine.Health(r.obj, s.run)
		if err != nil {
			return Verdict{}, fmt.Errorf("AnalysisRun %s: health script: %w", objName(r.obj), err)
		}
		all = append(all, judged{r.typ + " analysis run " + objName(r.obj), h})
		sum.Runs = append(sum.Runs, runValue(r))
		if sum.RolloutRevision == "" {
			sum.RolloutRevision = str(mapOf(mapOf(r.obj["metadata"])["annotations"])[AnnotationRevision])
		}
	}

	// Failed before inconclusive before in flight: a verdict already reached is never hidden by runs
	// still measuring.
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
	if len(failed) > 0 {
		return finish(Failed, strings.Join(failed, "; "))
	}
	if hash == current && health.Status == engine.Degraded {
		return finish(Failed, "Rollout "+sum.Rollout+" is Degraded: "+health.Message)
	}
	if len(inconclusive) > 0 {
		return finish(Inconclusive, strings.Join(inconclusive, "; "))
	}
	if hash == current && health.Status == engine.Suspended && pausedInconclusive(st) {
		return finish(Inconclusive, "Rollout "+sum.Rollout+": "+health.Message)
	}
	if len(busy) > 0 {
		return finish(Running, strings.Join(busy, "; "))
	}
	if hash != current {
		if hash == stable {
			return finish(Successful, fmt.Sprintf("revision %s is the Rollout's stable revision and every analysis of it passed", hash))
		}
		return finish(Failed, fmt.Sprintf("revision %s was replaced by %s before it was fully promoted", hash, current))
	}
	if health.Status != engine.Healthy {
		return finish(Running, "Rollout "+sum.Rollout+" is "+health.Status+": "+health.Message)
	}
	if stable != hash {
		return finish(Running, fmt.Sprintf("revision %s is not fully promoted yet (stable revision %s)", hash, stable))
	}
	n := len(runs) + len(experiments)
	msg := fmt.Sprintf("revision %s is fully promoted and every analysis of it passed (%d runs)", hash, n)
	if n == 1 {
		msg = fmt.Sprintf("revision %s is fully promoted and its analysis passed", hash)
	} else if n == 0 {
		msg = fmt.Sprintf("revision %s is fully promoted; it had no analysis", hash)
	}
	return finish(Successful, msg)
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
	owned := func(o map[string]any) bool { return ownedBy(o, "Rollout", rollout, uid(ro)) }
	for _, list := range [][]map[string]any{objs.AnalysisRuns, objs.Experiments} {
		for _, o := range list {
			if !owned(o) {
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

type run struct {
	obj  map[string]any
	typ  string
	step *int
}

// select_ returns the revision's runs and experiments. Of the Rollout's own runs of one type (and step)
// only the newest counts: an aborted and retried revision gets new runs, and the old ones record a
// verdict someone already acted on.
func select_(objs Objects, ro map[string]any, hash string) ([]run, []map[string]any) {
	rmd := mapOf(ro["metadata"])
	rollout, rolloutUID := str(rmd["name"]), uid(ro)
	var experiments []map[string]any
	expNames := map[string]bool{}
	for _, e := range objs.Experiments {
		if ownedBy(e, "Rollout", rollout, rolloutUID) && str(mapOf(mapOf(e["metadata"])["labels"])[LabelPodTemplateHash]) == hash {
			experiments = append(experiments, e)
			expNames[objName(e)] = true
		}
	}
	newest := map[string]run{}
	var expRuns []run
	for _, ar := range objs.AnalysisRuns {
		md := mapOf(ar["metadata"])
		labels := mapOf(md["labels"])
		if exp := controllerName(ar, "Experiment"); exp != "" && expNames[exp] {
			expRuns = append(expRuns, run{obj: ar, typ: TypeExperiment})
			continue
		}
		if !ownedBy(ar, "Rollout", rollout, rolloutUID) || str(labels[LabelPodTemplateHash]) != hash {
			continue
		}
		r := run{obj: ar, typ: str(labels[LabelRolloutType])}
		if r.typ == "" {
			r.typ = "Unlabelled"
		}
		key := r.typ
		if i, err := strconv.Atoi(str(labels[LabelStepIndex])); err == nil {
			r.step = &i
			key += "/" + strconv.Itoa(i)
		}
		if prev, ok := newest[key]; !ok || newer(ar, prev.obj) {
			newest[key] = r
		}
	}
	var runs []run
	for _, r := range newest {
		runs = append(runs, r)
	}
	runs = append(runs, expRuns...)
	sort.Slice(runs, func(i, j int) bool {
		a, b := created(runs[i].obj), created(runs[j].obj)
		if a != b {
			return a < b
		}
		return objName(runs[i].obj) < objName(runs[j].obj)
	})
	sort.Slice(experiments, func(i, j int) bool { return objName(experiments[i]) < objName(experiments[j]) })
	return runs, experiments
}

func newer(a, b map[string]any) bool {
	ca, cb := created(a), created(b)
	if ca != cb {
		return ca > cb
	}
	return objName(a) > objName(b)
}

// created is the RFC 3339 creation timestamp, which sorts as text.
func created(o map[string]any) string { return str(mapOf(o["metadata"])["creationTimestamp"]) }

func ownedBy(o map[string]any, kind, name, ownerUID string) bool {
	for _, ref := range listOf(mapOf(o["metadata"])["ownerReferences"]) {
		r := mapOf(ref)
		if str(r["kind"]) == kind && str(r["name"]) == name && (ownerUID == "" || str(r["uid"]) == "" || str(r["uid"]) == ownerUID) {
			return true
		}
	}
	return false
}

func controllerName(o map[string]any, kind string) string {
	for _, ref := range listOf(mapOf(o["metadata"])["ownerReferences"]) {
		r := mapOf(ref)
		if str(r["kind"]) == kind {
			return str(r["name"])
		}
	}
	return ""
}

func runValue(r run) RunValue {
	st := mapOf(r.obj["status"])
	v := RunValue{Name: objName(r.obj), Type: r.typ, Step: r.step, Phase: str(st["phase"]), Message: str(st["message"])}
	for _, m := range listOf(st["metricResults"]) {
		mr := mapOf(m)
		mv := MetricValue{Name: str(mr["name"]), Phase: str(mr["phase"]), Count: num(mr["count"]), Successful: num(mr["successful"]),
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

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// str reads a scalar as text, as the scripts do.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func num(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}
