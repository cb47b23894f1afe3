package hooks

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/analysis-health/analysis-health/internal/gate/inspect"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// tmpl is an AnalysisTemplate or ClusterAnalysisTemplate of the input, with its parsed node.
type tmpl struct {
	obj    manifest.Object
	info   inspect.Template
	node   *yaml.Node // the object mapping
	parsed bool
}

func (t *tmpl) id() string {
	return t.obj.Kind() + " " + inspect.Display(t.obj.Namespace(), t.obj.Name())
}

func (t *tmpl) spec() (*yaml.Node, error) {
	if !t.parsed {
		doc, err := parseDocument(t.obj.Raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.obj.Where(), err)
		}
		t.node, t.parsed = objectNode(doc, t.obj.Item), true
	}
	s := get(t.node, "spec")
	if s == nil || s.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: %s has no spec", t.obj.Where(), t.id())
	}
	return s, nil
}

// analysisRuns builds one PostSync AnalysisRun per selected template, inlining the template's metrics,
// args, dryRun and measurementRetention as the Rollouts controller does for the runs it creates
// (utils/analysis/helpers.go NewAnalysisRunFromTemplates: FlattenTemplates, then MergeArgs with the
// given arguments).
func analysisRuns(g *gate, objs []manifest.Object, report *inspect.Report, opts Options) ([]Object, error) {
	var all []*tmpl
	for _, o := range objs {
		if o.Group() == "argoproj.io" && (o.Kind() == inspect.KindTemplate || o.Kind() == inspect.KindClusterTmpl) {
			// inspect lists templates in input order, so the i-th template object is report.Templates[i].
			all = append(all, &tmpl{obj: o, info: report.Templates[len(all)]})
		}
	}
	selected, err := selectTemplates(all, opts.Templates)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	var out []Object
	for _, t := range selected {
		if len(t.info.UsedBy) > 0 {
			return nil, fmt.Errorf("%s: %s is already run by %s: a PostSync AnalysisRun would run the same analysis a second time; the Rollout's own analysis already decides its health, which a --mode barrier hook makes the sync wait for",
				t.obj.Where(), t.id(), "Rollout "+strings.Join(t.info.UsedBy, ", Rollout "))
		}
		obj, args, err := analysisRun(g, t, all, opts)
		if err != nil {
			return nil, err
		}
		for _, a := range args {
			declared[a] = true
		}
		if g.generated[string(AnalysisRun)]["AnalysisRun/"+obj.Namespace+"/"+obj.Name] {
			continue // already in the input: running on our own output adds nothing
		}
		out = append(out, obj)
	}
	for _, a := range opts.Args {
		if !declared[a.Name] {
			var names []string
			for n := range declared {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("--arg %s: no selected template declares an argument %q (they declare: %s)", a.Name, a.Name, keyList(names))
		}
	}
	return out, nil
}

// selectTemplates resolves --template names, then adds the templates annotated for verification.
func selectTemplates(all []*tmpl, names []string) ([]*tmpl, error) {
	var selected []*tmpl
	has := map[*tmpl]bool{}
	for _, name := range names {
		sel, err := inspect.ParseTemplateSelector(name)
		if err != nil {
			return nil, fmt.Errorf("--template: %w", err)
		}
		var matches []*tmpl
		for _, t := range all {
			if sel.Matches(t.obj.Kind(), t.obj.Namespace(), t.obj.Name()) {
				matches = append(matches, t)
			}
		}
		switch len(matches) {
		case 0:
			return nil, fmt.Errorf("--template %s: no AnalysisTemplate or ClusterAnalysisTemplate named %q in the input (it has: %s)", name, name, templateList(all))
		case 1:
		default:
			var ids []string
			for _, m := range matches {
				ids = append(ids, m.id()+" at "+m.obj.Where())
			}
			return nil, fmt.Errorf("--template %s: ambiguous, it names %s; use NAMESPACE/NAME or KIND/NAME (%s)", name, strings.Join(ids, " and "), inspect.TemplateGrammar)
		}
		if !has[matches[0]] {
			has[matches[0]] = true
			selected = append(selected, matches[0])
		}
	}
	for _, t := range all {
		if t.info.Verify && !has[t] {
			has[t] = true
			selected = append(selected, t)
		}
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("--mode analysisrun: no template selected: name one with --template NAME or annotate it with %s: \"true\" (the input has: %s)", inspect.Annotation, templateList(all))
	}
	return selected, nil
}

func templateList(all []*tmpl) string {
	var ids []string
	for _, t := range all {
		s := t.id()
		if len(t.info.UsedBy) > 0 {
			s += " (run by a Rollout)"
		}
		ids = append(ids, s)
	}
	return keyList(ids)
}

type runArg struct {
	name      string
	value     *yaml.Node
	valueFrom *yaml.Node
}

// analysisRun builds the hook for t and returns the argument names its templates declare.
func analysisRun(g *gate, t *tmpl, all []*tmpl, opts Options) (Object, []string, error) {
	flat, err := flatten(t, all)
	if err != nil {
		return Object{}, nil, err
	}
	var metrics, dryRun, retention []*yaml.Node
	var args []runArg
	var metricNames []string
	seenMetric := map[string]bool{}
	for _, ft := range flat {
		spec, err := ft.spec()
		if err != nil {
			return Object{}, nil, err
		}
		if ms := get(spec, "metrics"); ms != nil && ms.Kind == yaml.SequenceNode {
			for _, m := range ms.Content {
				name := ""
				if n := get(m, "name"); n != nil {
					name = n.Value
				}
				if seenMetric[name] {
					// utils/analysis/helpers.go flattenMetrics rejects this too.
					return Object{}, nil, fmt.Errorf("%s: %s: two metrics have the same name %q", t.obj.Where(), t.id(), name)
				}
				seenMetric[name] = true
				metricNames = append(metricNames, name)
				metrics = append(metrics, deepCopy(m))
			}
		}
		for _, list := range []struct {
			key string
			to  *[]*yaml.Node
		}{{"dryRun", &dryRun}, {"measurementRetention", &retention}} {
			if rs := get(spec, list.key); rs != nil && rs.Kind == yaml.SequenceNode {
				for _, r := range rs.Content {
					*list.to = append(*list.to, deepCopy(r))
				}
			}
		}
		if as := get(spec, "args"); as != nil && as.Kind == yaml.SequenceNode {
			for _, a := range as.Content {
				args = mergeRunArg(args, runArg{name: valueOf(get(a, "name")), value: get(a, "value"), valueFrom: get(a, "valueFrom")})
			}
		}
	}
	if len(metrics) == 0 {
		return Object{}, nil, fmt.Errorf("%s: %s has no metrics", t.obj.Where(), t.id())
	}
	given := map[string]string{}
	for _, a := range opts.Args {
		given[a.Name] = a.Value
	}
	var names []string
	argNodes := seq()
	for _, a := range args {
		names = append(names, a.name)
		if v, ok := given[a.name]; ok {
			// A given value replaces the template's, valueFrom included (MergeArgs would keep both).
			argNodes.Content = append(argNodes.Content, mapOf("name", a.name, "value", v))
			continue
		}
		switch {
		case a.value != nil && !isNull(a.value):
			argNodes.Content = append(argNodes.Content, mapOf("name", a.name, "value", deepCopy(a.value)))
		case a.valueFrom != nil && get(a.valueFrom, "secretKeyRef") != nil:
			// The analysis controller reads the Secret when the run starts.
			argNodes.Content = append(argNodes.Content, mapOf("name", a.name, "valueFrom", deepCopy(a.valueFrom)))
		case a.valueFrom != nil:
			return Object{}, nil, fmt.Errorf("%s: %s: argument %q takes its value from %s, which only a Rollout or an Experiment resolves for the runs it creates: give it with --arg %s=VALUE",
				t.obj.Where(), t.id(), a.name, firstKey(a.valueFrom), a.name)
		default:
			return Object{}, nil, fmt.Errorf("%s: %s: argument %q has no value (the AnalysisRun would fail with \"args.%s was not resolved\"): give it with --arg %s=VALUE",
				t.obj.Where(), t.id(), a.name, a.name, a.name)
		}
	}
	// A dryRun or measurementRetention rule that matches no metric makes the run Error at once.
	for _, r := range append(append([]*yaml.Node{}, dryRun...), retention...) {
		rule := valueOf(get(r, "metricName"))
		re, err := regexp.Compile(rule)
		if err != nil {
			return Object{}, nil, fmt.Errorf("%s: %s: metricName %q is not a regular expression: %v", t.obj.Where(), t.id(), rule, err)
		}
		matched := false
		for _, m := range metricNames {
			matched = matched || re.MatchString(m)
		}
		if !matched {
			return Object{}, nil, fmt.Errorf("%s: %s: rule %q matches no metric, so the AnalysisRun would error (\"Rule didn't match any metric name(s)\")", t.obj.Where(), t.id(), rule)
		}
	}

	ns := t.obj.Namespace()
	if t.obj.Kind() == inspect.KindClusterTmpl {
		ns = g.namespace
	}
	name := dnsLabel(t.obj.Name(), 63-9) + "-" + g.hash(t.obj.Kind()+"/"+t.obj.Namespace()+"/"+t.obj.Name(), 8)
	if err := checkName("AnalysisRun", name); err != nil {
		return Object{}, nil, err
	}
	labels := map[string]string{ManagedByLabel: ManagedBy}
	for k, v := range opts.AnalysisLabels {
		labels[k] = v
	}
	ann := map[string]string{}
	for k, v := range opts.AnalysisAnnotations {
		ann[k] = v
	}
	ann[ArgoCDHook] = "PostSync"
	ann[ArgoCDHookDeletePolicy] = AnalysisRunDeletePolicy
	ann[Generated] = string(AnalysisRun)
	ann[TemplateAnnotation] = t.obj.Kind() + "/" + inspect.Display(t.obj.Namespace(), t.obj.Name())

	spec := mapOf()
	if len(argNodes.Content) > 0 {
		spec.Content = append(spec.Content, str("args"), argNodes)
	}
	spec.Content = append(spec.Content, str("metrics"), seq(metrics...))
	if len(dryRun) > 0 {
		spec.Content = append(spec.Content, str("dryRun"), seq(dryRun...))
	}
	if len(retention) > 0 {
		spec.Content = append(spec.Content, str("measurementRetention"), seq(retention...))
	}
	obj := mapOf(
		"apiVersion", "argoproj.io/v1alpha1",
		"kind", "AnalysisRun",
		"metadata", metadataNode(name, ns, labels, ann),
		"spec", spec,
	)
	out, err := document(fmt.Sprintf("Generated by analysis-health hooks --mode analysisrun from %s: see docs/hooks.md.", t.id()), obj)
	if err != nil {
		return Object{}, nil, err
	}
	return Object{Kind: "AnalysisRun", Namespace: ns, Name: name, YAML: out}, names, nil
}

// flatten lists t and the templates it nests (spec.templates), each once, as the Rollouts controller
// collects them (rollout/controller.go getReferencedAnalysisTemplatesFromRef).
func flatten(t *tmpl, all []*tmpl) ([]*tmpl, error) {
	var out []*tmpl
	seen := map[*tmpl]bool{}
	var walk func(t *tmpl) error
	walk = func(t *tmpl) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		out = append(out, t)
		spec, err := t.spec()
		if err != nil {
			return err
		}
		refs := get(spec, "templates")
		if refs == nil || refs.Kind != yaml.SequenceNode {
			return nil
		}
		for _, ref := range refs.Content {
			name := valueOf(get(ref, "templateName"))
			cluster := valueOf(get(ref, "clusterScope")) == "true"
			var found *tmpl
			for _, c := range all {
				if c.obj.Name() != name {
					continue
				}
				if cluster && c.obj.Kind() == inspect.KindClusterTmpl ||
					!cluster && c.obj.Kind() == inspect.KindTemplate && (c.obj.Namespace() == "" || t.obj.Namespace() == "" || c.obj.Namespace() == t.obj.Namespace()) {
					found = c
					break
				}
			}
			if found == nil {
				kind := inspect.KindTemplate
				if cluster {
					kind = inspect.KindClusterTmpl
				}
				return fmt.Errorf("%s: %s nests %s %q, which is not in the input", t.obj.Where(), t.id(), kind, name)
			}
			if err := walk(found); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(t)
}

// mergeRunArg keeps the first value of an argument several templates declare (flattenArgs).
func mergeRunArg(args []runArg, a runArg) []runArg {
	for i, prev := range args {
		if prev.name == a.name {
			if (prev.value == nil || isNull(prev.value)) && prev.valueFrom == nil {
				args[i] = a
			}
			return args
		}
	}
	return append(args, a)
}

func valueOf(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func firstKey(m *yaml.Node) string {
	if m != nil && m.Kind == yaml.MappingNode && len(m.Content) > 0 {
		return m.Content[0].Value
	}
	return "valueFrom"
}
