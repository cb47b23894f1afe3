// Package inspect analyses the Rollouts of rendered manifests (helm template, kustomize build) the way the
// Argo Rollouts controller will treat them: every analysis source with its templates, arguments and
// analysisRunMetadata; whether each referenced template is in the input; dry-run metrics; pauses that wait
// for a person; and the least time from an Argo CD sync to full promotion, which is how long a PostSync
// barrier (and Kargo's argocd-update step) will wait when everything passes.
//
// Upstream paths are relative to github.com/argoproj/argo-rollouts@v1.8.5.
package inspect

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// DefaultKargoTimeout is the default timeout of Kargo's argocd-update step (pkg/promotion/runner/builtin
// argocd_updater.go, DefaultTimeout), raised per step with retry.timeout.
const DefaultKargoTimeout = 5 * time.Minute

// Annotation marks an AnalysisTemplate (or ClusterAnalysisTemplate) that no Rollout runs as a
// verification to run after every sync: `hooks --mode analysisrun` turns it into a PostSync AnalysisRun.
const Annotation = "analysis-health.argoproj.io/verify"

// Kinds of the objects inspect reads.
const (
	group           = "argoproj.io"
	KindRollout     = "Rollout"
	KindTemplate    = "AnalysisTemplate"
	KindClusterTmpl = "ClusterAnalysisTemplate"
)

// Severities of a Problem. Errors are what the controllers will reject or abort on; warnings are what
// will hold a sync barrier or a Kargo promotion longer than expected.
const (
	Error   = "error"
	Warning = "warning"
)

// Options tune the checks.
type Options struct {
	// KargoTimeout is the argocd-update step timeout the estimate is compared with.
	KargoTimeout time.Duration
	// KnownTemplates name templates that exist in the cluster without being in the input (platform
	// ClusterAnalysisTemplates, say), in TemplateGrammar: they count as present, and their metrics as
	// unknown.
	KnownTemplates []string
	// ArgoCDSyncTimeout is Argo CD's controller.sync.timeout.seconds; 0 (the default) is no timeout.
	ArgoCDSyncTimeout time.Duration
}

// Report is everything inspect found, in input order.
type Report struct {
	Rollouts  []Rollout  `json:"rollouts"`
	Templates []Template `json:"templates"`
	Problems  []Problem  `json:"problems"`
}

// Rollout is one Rollout of the input.
type Rollout struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Where     string `json:"where"`
	// Strategy is canary, blueGreen, or none.
	Strategy string     `json:"strategy"`
	Steps    int        `json:"steps,omitempty"`
	Analyses []Analysis `json:"analyses"`
	// IndefinitePauses are the places where the rollout waits for a person (field paths).
	IndefinitePauses []string `json:"indefinitePauses"`
	Estimate         Estimate `json:"estimate"`
	// Kargo is the Kargo pipeline timing for this Rollout (kargo.go).
	Kargo *KargoTiming `json:"kargo"`
}

// Analysis is one analysis source of a Rollout.
type Analysis struct {
	// Path is the field path of the source, e.g. spec.strategy.canary.steps[2].analysis.
	Path string `json:"path"`
	// Type is the rollout-type label the Rollouts controller puts on the AnalysisRun (Step, Background,
	// PrePromotion, PostPromotion), or Experiment for an experiment's analysis.
	Type      string        `json:"type"`
	Templates []TemplateRef `json:"templates"`
	Args      []Arg         `json:"args"`
	// Metrics are the metric names of the referenced templates (nested templates included).
	Metrics []string `json:"metrics"`
	// DryRunMetrics are the metrics that are measured but never fail the analysis.
	DryRunMetrics       []string `json:"dryRunMetrics"`
	AnalysisRunMetadata Metadata `json:"analysisRunMetadata"`
	StartingStep        *int32   `json:"startingStep,omitempty"`
	// Duration is the least time the analysis takes when every measurement passes, or "until
	// terminated" for metrics without a count, or "unknown".
	Duration string `json:"duration"`
}

// TemplateRef is one template an analysis references.
type TemplateRef struct {
	Name         string `json:"name"`
	ClusterScope bool   `json:"clusterScope"`
	// Present is whether the template is in the input (or named with KnownTemplates).
	Present bool `json:"present"`
}

// Arg is one argument an analysis passes; ValueFrom describes a value the controller fills in.
type Arg struct {
	Name      string `json:"name"`
	Value     string `json:"value,omitempty"`
	ValueFrom string `json:"valueFrom,omitempty"`
}

// Metadata is analysisRunMetadata.
type Metadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Estimate is the least time from a sync to full promotion.
type Estimate struct {
	Minimum        string `json:"minimum"`
	MinimumSeconds int64  `json:"minimumSeconds"`
	// Indefinite is true when the rollout stops until a person promotes it.
	Indefinite bool `json:"indefinite"`
	// KargoRetryTimeout is the argocd-update retry.timeout this rollout needs behind a PostSync barrier;
	// empty when Indefinite.
	KargoRetryTimeout string `json:"kargoRetryTimeout,omitempty"`
	Parts             []Part `json:"parts"`
	// NotCounted lists what the estimate leaves out because it cannot be known from the manifests.
	NotCounted []string `json:"notCounted"`
}

// Part is one contribution to an Estimate.
type Part struct {
	Path     string `json:"path"`
	What     string `json:"what"`
	Duration string `json:"duration"`
}

// Template is an AnalysisTemplate or ClusterAnalysisTemplate of the input.
type Template struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Where     string `json:"where"`
	// UsedBy lists "<rollout>: <path>" for every analysis that runs it.
	UsedBy []string `json:"usedBy"`
	// Verify is whether the template carries Annotation: "true".
	Verify bool `json:"verify"`
}

// Problem is something that will make a Rollout Degraded, or hold a sync or promotion.
type Problem struct {
	Severity string `json:"severity"`
	// Object is "Rollout <namespace/>name".
	Object  string `json:"object"`
	Where   string `json:"where"`
	Message string `json:"message"`
	// MissingTemplate marks a referenced template that is not in the input: a warning, since it may exist
	// in the cluster (a platform ClusterAnalysisTemplate); hooks --require-templates makes it an error.
	MissingTemplate bool `json:"-"`
}

// Failed reports whether the report has a problem (what --strict fails on).
func (r *Report) Failed() bool { return len(r.Problems) > 0 }

// Errors returns the error-severity problems.
func (r *Report) Errors() []Problem {
	var out []Problem
	for _, p := range r.Problems {
		if p.Severity == Error {
			out = append(out, p)
		}
	}
	return out
}

type template struct {
	id   objectID
	spec templateSpec
	// verify is whether the template carries Annotation: "true"; err is its spec's decoding error.
	verify bool
	err    error
	out    *Template
}

// objectID is what inspect keeps of an object besides the parts of its spec it reads: the identity its
// report and problems name.
type objectID struct {
	kind, namespace, name, where string
}

func idOf(o manifest.Object) objectID {
	return objectID{kind: o.Kind(), namespace: o.Namespace(), name: o.Name(), where: o.Where()}
}

// rolloutEntry is a Rollout as inspect keeps it: its identity and the decoded parts of its spec.
type rolloutEntry struct {
	id   objectID
	spec rolloutSpec
	err  error
}

// Entry is what inspect needs of one AnalysisTemplate, ClusterAnalysisTemplate or Rollout: a few hundred
// bytes, where the decoded object is many times its manifest's size. Summarize makes one.
type Entry struct {
	t *template
	r *rolloutEntry
}

// Summarize keeps what inspect needs of o; ok is false for an object inspect does not read. It may run
// on any goroutine.
func Summarize(o manifest.Object) (e Entry, ok bool) {
	if o.Group() != group {
		return Entry{}, false
	}
	switch o.Kind() {
	case KindTemplate, KindClusterTmpl:
		t := &template{id: idOf(o)}
		if err := decodeInto(o.Object["spec"], &t.spec); err != nil {
			t.err = fmt.Errorf("%s: %s %s: spec: %v", o.Where(), o.Kind(), o.Name(), err)
		}
		ann, _ := meta(o.Object)["annotations"].(map[string]any)
		v, _ := ann[Annotation].(string)
		t.verify = v == "true"
		return Entry{t: t}, true
	case KindRollout:
		r := &rolloutEntry{id: idOf(o)}
		if err := decodeInto(o.Object["spec"], &r.spec); err != nil {
			r.err = fmt.Errorf("%s: Rollout %s: spec: %v", o.Where(), o.Name(), err)
		}
		return Entry{r: r}, true
	}
	return Entry{}, false
}

type inspector struct {
	opts      Options
	templates []*template
	// byName indexes templates by name, in input order, so that resolving stays linear in the input.
	byName map[string][]*template
	known  []TemplateSelector
	report *Report
}

// Inspect analyses objs (all the manifests of one application).
func Inspect(objs []manifest.Object, opts Options) (*Report, error) {
	entries := make([]Entry, 0, len(objs))
	for _, o := range objs {
		if e, ok := Summarize(o); ok {
			entries = append(entries, e)
		}
	}
	return InspectEntries(entries, opts)
}

// InspectEntries is Inspect on the entries Summarize made of the objects, in input order: what a caller
// reading the input one object at a time keeps.
func InspectEntries(entries []Entry, opts Options) (*Report, error) {
	if opts.KargoTimeout == 0 {
		opts.KargoTimeout = DefaultKargoTimeout
	}
	in := &inspector{opts: opts, report: &Report{Rollouts: []Rollout{}, Templates: []Template{}, Problems: []Problem{}}}
	for _, k := range opts.KnownTemplates {
		sel, err := ParseTemplateSelector(k)
		if err != nil {
			return nil, fmt.Errorf("known template: %w", err)
		}
		in.known = append(in.known, sel)
	}
	for _, e := range entries {
		t := e.t
		if t == nil {
			continue
		}
		if t.err != nil {
			return nil, t.err
		}
		in.report.Templates = append(in.report.Templates, Template{
			Kind: t.id.kind, Namespace: t.id.namespace, Name: t.id.name, Where: t.id.where, UsedBy: []string{}, Verify: t.verify,
		})
		in.templates = append(in.templates, t)
	}
	in.byName = map[string][]*template{}
	for i, t := range in.templates {
		t.out = &in.report.Templates[i]
		in.byName[t.id.name] = append(in.byName[t.id.name], t)
	}
	for _, e := range entries {
		if e.r == nil {
			continue
		}
		r, err := in.rollout(e.r)
		if err != nil {
			return nil, err
		}
		in.report.Rollouts = append(in.report.Rollouts, r)
	}
	return in.report, nil
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

// Display is "<namespace>/<name>", or the name alone when the manifest leaves the namespace to the
// destination (as charts rendered without --namespace do).
func Display(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func (in *inspector) problem(sev string, o objectID, format string, a ...any) {
	in.report.Problems = append(in.report.Problems, Problem{
		Severity: sev,
		Object:   o.kind + " " + Display(o.namespace, o.name),
		Where:    o.where,
		Message:  fmt.Sprintf(format, a...),
	})
}

// find returns the template a reference resolves to from a Rollout in namespace ns: an AnalysisTemplate
// in the Rollout's namespace (rollout/controller.go getReferencedAnalysisTemplatesFromRef), or a
// ClusterAnalysisTemplate. An empty namespace on either side is the Application's destination namespace,
// unknown here, so it matches.
func (in *inspector) find(ref templateRef, ns string) *template {
	for _, t := range in.byName[ref.TemplateName] {
		if ref.ClusterScope {
			if t.id.kind == KindClusterTmpl {
				return t
			}
			continue
		}
		if t.id.kind == KindTemplate && (ns == "" || t.id.namespace == "" || t.id.namespace == ns) {
			return t
		}
	}
	return nil
}

// resolved is what an analysis source's templates add up to, as utils/analysis/helpers.go
// FlattenTemplates flattens them (nested spec.templates included).
type resolved struct {
	refs      []TemplateRef
	missing   []TemplateRef
	metrics   []metric
	args      []templateArg
	dryRun    []metricRule
	retention []metricRule
	// opaque is set when a template counts as present only through KnownTemplates: its metrics and
	// arguments are unknown, so the checks that need them are skipped.
	opaque bool
}

// isKnown reports whether a KnownTemplates entry names ref, referenced from namespace ns.
func (in *inspector) isKnown(ref templateRef, ns string) bool {
	kind := KindTemplate
	if ref.ClusterScope {
		kind, ns = KindClusterTmpl, ""
	}
	for _, k := range in.known {
		if k.Matches(kind, ns, ref.TemplateName) {
			return true
		}
	}
	return false
}

func (in *inspector) resolve(refs []templateRef, ns, user string, top bool, r *resolved, seen map[templateRef]bool) {
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		t := in.find(ref, ns)
		present := t != nil || in.isKnown(ref, ns)
		if top {
			r.refs = append(r.refs, TemplateRef{Name: ref.TemplateName, ClusterScope: ref.ClusterScope, Present: present})
		}
		if !present {
			r.missing = append(r.missing, TemplateRef{Name: ref.TemplateName, ClusterScope: ref.ClusterScope})
			continue
		}
		if t == nil {
			r.opaque = true
			continue
		}
		t.out.UsedBy = appendUnique(t.out.UsedBy, user)
		r.metrics = append(r.metrics, t.spec.Metrics...)
		for _, a := range t.spec.Args {
			r.args = mergeTemplateArg(r.args, a)
		}
		r.dryRun = append(r.dryRun, t.spec.DryRun...)
		r.retention = append(r.retention, t.spec.MeasurementRetention...)
		in.resolve(t.spec.Templates, ns, user, false, r, seen)
	}
}

// mergeTemplateArg keeps the first non-empty value of an argument declared by several templates
// (utils/analysis/helpers.go flattenArgs).
func mergeTemplateArg(args []templateArg, a templateArg) []templateArg {
	for i, prev := range args {
		if prev.Name == a.Name {
			if prev.Value == nil && prev.ValueFrom == nil {
				args[i] = a
			}
			return args
		}
	}
	return append(args, a)
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func kindOf(ref TemplateRef) string {
	if ref.ClusterScope {
		return KindClusterTmpl
	}
	return KindTemplate
}

// source is one analysis block of a Rollout, before it is checked.
type source struct {
	path     string
	typ      string
	refs     []templateRef
	args     []rolloutArg
	dryRun   []metricRule
	keep     []metricRule
	metadata analysisRunMetadata
	starting *int32
}

func (in *inspector) rollout(e *rolloutEntry) (Rollout, error) {
	if e.err != nil {
		return Rollout{}, e.err
	}
	o, spec := e.id, e.spec
	r := Rollout{Namespace: o.namespace, Name: o.name, Where: o.where, Strategy: "none", Analyses: []Analysis{}, IndefinitePauses: []string{}}
	var sources []source
	const canaryPath, bgPath = "spec.strategy.canary", "spec.strategy.blueGreen"
	switch {
	case spec.Strategy.Canary != nil:
		c := spec.Strategy.Canary
		r.Strategy, r.Steps = "canary", len(c.Steps)
		for i, step := range c.Steps {
			p := fmt.Sprintf("%s.steps[%d]", canaryPath, i)
			switch {
			case step.Pause != nil:
				if _, ok := pauseSeconds(step.Pause.Duration); step.Pause.Duration != nil && !ok {
					in.problem(Error, o, "%s.pause.duration %v is neither seconds nor a duration", p, step.Pause.Duration)
				}
			case step.Analysis != nil:
				sources = append(sources, source{path: p + ".analysis", typ: "Step", refs: step.Analysis.Templates, args: step.Analysis.Args,
					dryRun: step.Analysis.DryRun, keep: step.Analysis.MeasurementRetention, metadata: step.Analysis.AnalysisRunMetadata})
			case step.Experiment != nil:
				for j, a := range step.Experiment.Analyses {
					sources = append(sources, source{path: fmt.Sprintf("%s.experiment.analyses[%d]", p, j), typ: "Experiment",
						refs: []templateRef{{TemplateName: a.TemplateName, ClusterScope: a.ClusterScope}}, args: a.Args,
						dryRun: step.Experiment.DryRun, metadata: step.Experiment.AnalysisRunMetadata})
				}
			}
		}
		if c.Analysis != nil {
			sources = append(sources, source{path: canaryPath + ".analysis", typ: "Background", refs: c.Analysis.Templates, args: c.Analysis.Args,
				dryRun: c.Analysis.DryRun, keep: c.Analysis.MeasurementRetention, metadata: c.Analysis.AnalysisRunMetadata, starting: c.Analysis.StartingStep})
		}
	case spec.Strategy.BlueGreen != nil:
		bg := spec.Strategy.BlueGreen
		r.Strategy = "blueGreen"
		if a := bg.PrePromotionAnalysis; a != nil {
			sources = append(sources, source{path: bgPath + ".prePromotionAnalysis", typ: "PrePromotion", refs: a.Templates, args: a.Args,
				dryRun: a.DryRun, keep: a.MeasurementRetention, metadata: a.AnalysisRunMetadata})
		}
		if a := bg.PostPromotionAnalysis; a != nil {
			sources = append(sources, source{path: bgPath + ".postPromotionAnalysis", typ: "PostPromotion", refs: a.Templates, args: a.Args,
				dryRun: a.DryRun, keep: a.MeasurementRetention, metadata: a.AnalysisRunMetadata})
		}
	}

	durations := map[string]analysisTime{}
	for _, s := range sources {
		a, t := in.analysis(o, r, s)
		durations[s.path] = t
		r.Analyses = append(r.Analyses, a)
	}

	// The time line (the sources above are only the analyses): canary steps run one after the other, a
	// step analysis or an experiment holding its step; background analysis runs beside the steps and
	// never holds promotion. Blue-green: pre-promotion analysis, the pause before promotion, then
	// post-promotion analysis (rollout/bluegreen.go; docs/features/bluegreen.md).
	est := &estimator{}
	if spec.Paused {
		est.indefinite("spec.paused", "the Rollout is paused until someone resumes it")
	}
	if c := spec.Strategy.Canary; c != nil {
		analysed := c.Analysis != nil
		for i, step := range c.Steps {
			p := fmt.Sprintf("%s.steps[%d]", canaryPath, i)
			switch {
			case step.Pause != nil:
				if step.Pause.Duration == nil {
					est.wait(pause{path: p + ".pause", what: "pause {} waits until someone promotes the Rollout", gate: analysed})
				} else if d, ok := pauseSeconds(step.Pause.Duration); ok {
					est.add(p+".pause", "pause", d)
				}
			case step.Analysis != nil:
				analysed = true
				est.analysis(p+".analysis", "step analysis", durations[p+".analysis"])
			case step.Experiment != nil:
				analysed = analysed || len(step.Experiment.Analyses) > 0
				in.experiment(o, est, p, step.Experiment, durations)
			}
		}
	}
	if bg := spec.Strategy.BlueGreen; bg != nil {
		if bg.PrePromotionAnalysis != nil {
			est.analysis(bgPath+".prePromotionAnalysis", "pre-promotion analysis", durations[bgPath+".prePromotionAnalysis"])
		}
		switch {
		case bg.AutoPromotionEnabled != nil && !*bg.AutoPromotionEnabled:
			est.wait(pause{path: bgPath + ".autoPromotionEnabled", what: "autoPromotionEnabled: false waits until someone promotes the Rollout",
				gate: bg.PrePromotionAnalysis != nil})
		case bg.AutoPromotionSeconds > 0:
			est.add(bgPath+".autoPromotionSeconds", "pause before promotion", time.Duration(bg.AutoPromotionSeconds)*time.Second)
		}
		if bg.PostPromotionAnalysis != nil {
			est.analysis(bgPath+".postPromotionAnalysis", "post-promotion analysis", durations[bgPath+".postPromotionAnalysis"])
		}
	}
	r.Estimate = est.result()
	r.Kargo = in.kargoTiming(o, spec, est, durations)
	for _, p := range est.pauses {
		r.IndefinitePauses = append(r.IndefinitePauses, p.path)
		if !p.gate {
			in.problem(Warning, o, "%s: %s, so a PostSync barrier holds the Argo CD sync (and Kargo's argocd-update step) until then", p.path, p.what)
			continue
		}
		in.problem(Warning, o, "%s: %s, so a PostSync barrier holds the Argo CD sync (and Kargo's argocd-update step and Stage) until then; "+
			"generate --human-gate healthy lets them complete once the analysis before it passed, if the Stage verifies with the plugin "+
			"(generate --format kargo: Running until full promotion; without it Kargo verifies the Freight at the pause): docs/hooks.md#the-human-gate",
			p.path, p.what)
	}
	if !r.Estimate.Indefinite && est.total > in.opts.KargoTimeout {
		in.problem(Warning, o, "estimated minimum %s from sync to full promotion exceeds Kargo's argocd-update timeout %s: set the step's retry.timeout to at least %s",
			fmtDuration(est.total), fmtDuration(in.opts.KargoTimeout), r.Estimate.KargoRetryTimeout)
	}
	return r, nil
}

// experiment adds an experiment step to the time line: it completes after its duration and after every
// requiredForCompletion analysis has completed; with neither it runs until terminated
// (docs/features/experiment.md, "Experiment Lifecycle").
func (in *inspector) experiment(o objectID, est *estimator, p string, e *experimentStep, durations map[string]analysisTime) {
	d, err := parseDuration(p+".experiment.duration", e.Duration)
	if err != nil {
		in.problem(Error, o, "%v", err)
	}
	longest := analysisTime{d: d}
	required := false
	for j, a := range e.Analyses {
		if !a.RequiredForCompletion {
			continue
		}
		required = true
		t := durations[fmt.Sprintf("%s.experiment.analyses[%d]", p, j)]
		longest.d = max(longest.d, t.d)
		longest.unknown = longest.unknown || t.unknown
		longest.untilTerminated = longest.untilTerminated || t.untilTerminated
		longest.notCounted = append(longest.notCounted, t.notCounted...)
	}
	if e.Duration == "" && !required {
		est.indefinite(p+".experiment", "an experiment without duration or requiredForCompletion analysis runs until terminated")
		return
	}
	est.analysis(p+".experiment", "experiment", longest)
}

// analysis checks one analysis source the way the Rollouts controller will: templates present
// (rollout/controller.go getReferencedAnalysisTemplatesFromRef → InvalidSpec), arguments resolved and
// metrics finite (pkg/apis/rollouts/validation/validation_references.go ValidateAnalysisTemplatesWithType),
// dryRun and measurementRetention rules matching a metric (utils/analysis/helpers.go; otherwise the run
// errors with "Rule didn't match any metric name(s)").
func (in *inspector) analysis(o objectID, r Rollout, s source) (Analysis, analysisTime) {
	user := Display(r.Namespace, r.Name) + ": " + s.path
	res := &resolved{}
	in.resolve(s.refs, r.Namespace, user, true, res, map[templateRef]bool{})
	a := Analysis{Path: s.path, Type: s.typ, Templates: res.refs, Args: []Arg{}, Metrics: []string{}, DryRunMetrics: []string{},
		AnalysisRunMetadata: Metadata{Labels: s.metadata.Labels, Annotations: s.metadata.Annotations}, StartingStep: s.starting}
	if a.Templates == nil {
		a.Templates = []TemplateRef{}
	}
	for _, arg := range s.args {
		out := Arg{Name: arg.Name, Value: arg.Value}
		if vf := arg.ValueFrom; vf != nil {
			switch {
			case vf.PodTemplateHashValue != "":
				out.ValueFrom = "podTemplateHashValue: " + vf.PodTemplateHashValue
			case vf.FieldRef != nil:
				out.ValueFrom = "fieldRef: " + vf.FieldRef.FieldPath
			}
		}
		a.Args = append(a.Args, out)
	}
	// What the controller does with a broken reference depends on who creates the run.
	consequence := "the Rollouts controller marks the Rollout InvalidSpec, which is Degraded as soon as it is applied"
	if s.typ == "Experiment" {
		consequence = "the Experiment errors at that step and the Rollout aborts (Degraded)"
	}
	for _, m := range res.missing {
		in.problem(Warning, o, "%s: %s %q is not in the input: unless it already exists in the cluster, %s", s.path, kindOf(m), m.Name, consequence)
		in.report.Problems[len(in.report.Problems)-1].MissingTemplate = true
	}
	if len(res.missing) > 0 || res.opaque {
		return a, analysisTime{unknown: true, notCounted: []string{s.path + ": templates not in the input"}}
	}
	for _, m := range res.metrics {
		a.Metrics = append(a.Metrics, m.Name)
	}
	// Arguments: the source's values override the templates' (MergeArgs); one left without a value makes
	// the Rollout InvalidSpec. Every argument the Rollout lists counts as a value, even "": the controller
	// passes its value by pointer (utils/analysis/factory.go BuildArgumentsForRolloutAnalysisRun).
	given := map[string]bool{}
	for _, arg := range s.args {
		given[arg.Name] = true
	}
	for _, ta := range res.args {
		if ta.Value == nil && ta.ValueFrom == nil && !given[ta.Name] {
			in.problem(Error, o, "%s: argument %q has no value (args.%s was not resolved): %s", s.path, ta.Name, ta.Name, consequence)
		}
	}
	rules := append(append([]metricRule{}, s.dryRun...), res.dryRun...)
	dry := map[string]bool{}
	for i, rule := range rules {
		matched := in.matchRule(o, s.path, "dryRun", i, rule, res.metrics)
		for _, m := range matched {
			dry[m] = true
		}
	}
	for i, rule := range append(append([]metricRule{}, s.keep...), res.retention...) {
		in.matchRule(o, s.path, "measurementRetention", i, rule, res.metrics)
	}
	for _, m := range res.metrics {
		if dry[m.Name] {
			a.DryRunMetrics = append(a.DryRunMetrics, m.Name)
		}
	}
	if len(res.metrics) > 0 && len(a.DryRunMetrics) == len(res.metrics) {
		in.problem(Warning, o, "%s: every metric is dry-run (%s): this analysis can never fail the rollout", s.path, strings.Join(a.DryRunMetrics, ", "))
	}
	t := metricsTime(s.path, res.metrics)
	// Only background analysis may measure until terminated (ValidateAnalysisTemplateWithType); an
	// experiment with a duration terminates its runs itself.
	if s.typ != "Background" && s.typ != "Experiment" {
		for _, m := range res.metrics {
			if n, set, ok := intOrString(m.Count); ok && (!set || n == 0) && m.Interval != "" {
				in.problem(Error, o, "%s: metric %q has an interval and no count, so it runs indefinitely, which only background analysis may: %s", s.path, m.Name, consequence)
			}
		}
	}
	a.Duration = t.String()
	return a, t
}

// matchRule reports the metrics a dryRun or measurementRetention rule selects: metricName is an
// unanchored regular expression (utils/analysis/helpers.go GetDryRunMetrics, GetMeasurementRetentionMetrics),
// and a rule that selects nothing fails the run.
func (in *inspector) matchRule(o objectID, path, field string, i int, rule metricRule, metrics []metric) []string {
	re, err := regexp.Compile(rule.MetricName)
	if err != nil {
		in.problem(Error, o, "%s: %s[%d].metricName %q is not a regular expression: %v", path, field, i, rule.MetricName, err)
		return nil
	}
	var names []string
	for _, m := range metrics {
		if re.MatchString(m.Name) {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		in.problem(Error, o, "%s: %s rule %q matches no metric, so the AnalysisRun errors (\"Rule didn't match any metric name(s)\") and the Rollout aborts (Degraded)", path, field, rule.MetricName)
	}
	sort.Strings(names)
	return names
}
