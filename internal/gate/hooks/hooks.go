// Package hooks makes an Argo CD sync operation carry the analysis verdict.
//
// gitops-engine (pkg/sync/sync_context.go Sync) ends a sync with one wave and no hooks right after apply,
// whatever the resources' health does next. With any hook it waits until every synced resource is Healthy
// before the PostSync phase, fails the operation when one turns Degraded, and keeps it Running while one
// is Progressing or Suspended. Kargo's argocd-update step waits for that operation and fails the
// Promotion when it fails. So one PostSync hook turns the analysis-aware Rollout health into the sync's
// (and the promotion's) result:
//
//   - Barrier: a ConfigMap PostSync hook (no Pod, no RBAC) that records what it gates and is deleted
//     whatever the outcome.
//   - AnalysisRun: a PostSync AnalysisRun instantiating an AnalysisTemplate no Rollout runs, so plain
//     Deployments get an analysis that gates the sync.
//
// Both can also add analysisRunMetadata to every analysis block of every Rollout, so the AnalysisRuns the
// Rollouts create can be traced to a Kargo stage or freight. Everything is built in memory and returned
// whole: a post-renderer must never emit half a stream.
package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/analysis-health/analysis-health/internal/gate/inspect"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// Annotations and labels: Argo CD's hook annotations (gitops-engine pkg/sync/common/types.go), and ours,
// which mark what we generated so that a second run adds nothing.
const (
	ArgoCDHook             = "argocd.argoproj.io/hook"
	ArgoCDHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	HelmHook               = "helm.sh/hook"

	Generated          = "analysis-health.argoproj.io/hook"
	TemplateAnnotation = "analysis-health.argoproj.io/template"
	ManagedByLabel     = "app.kubernetes.io/managed-by"
	ManagedBy          = "analysis-health"

	// BarrierDeletePolicy leaves nothing behind: HookSucceeded deletes the barrier when the operation
	// succeeds; HookFailed when it fails after the barrier was created (another PostSync hook failed);
	// BeforeHookCreation replaces one left over by an interrupted operation (setting any policy drops
	// gitops-engine's default, BeforeHookCreation, pkg/sync/hook/delete_policy.go). A ConfigMap has no
	// health, so the barrier itself never fails or runs: it succeeds as soon as it is created.
	BarrierDeletePolicy = "BeforeHookCreation,HookSucceeded,HookFailed"
	// AnalysisRunDeletePolicy keeps a failed AnalysisRun (its metric results say why the sync failed)
	// until the next sync replaces it, and deletes a successful one.
	AnalysisRunDeletePolicy = "BeforeHookCreation,HookSucceeded"
)

// Mode selects the hook.
type Mode string

const (
	Barrier     Mode = "barrier"
	AnalysisRun Mode = "analysisrun"
)

// Arg is one --arg name=value for the AnalysisRun hooks.
type Arg struct{ Name, Value string }

// Options say what to generate.
type Options struct {
	Mode Mode
	// Templates select AnalysisTemplates / ClusterAnalysisTemplates ("name" or "namespace/name") for
	// AnalysisRun mode, besides those annotated with inspect.Annotation: "true".
	Templates []string
	Args      []Arg
	// AnalysisLabels and AnalysisAnnotations go into the analysisRunMetadata of every analysis block of
	// every Rollout, and onto the generated AnalysisRuns.
	AnalysisLabels      map[string]string
	AnalysisAnnotations map[string]string
	// KargoTimeout is the argocd-update step timeout to warn against.
	KargoTimeout   time.Duration
	KnownTemplates []string
	// RequireTemplates makes a referenced template that is not in the input (nor in KnownTemplates) an
	// error; by default it is a warning and the hooks are generated for the rest, as inspect reports it.
	RequireTemplates bool
}

// MissingTemplateHint names the choices about a template the input does not hold.
const MissingTemplateHint = "(a template that exists in the cluster but not in these manifests can be named with --known-template; --require-templates makes a missing one an error)"

// Labels and annotations the Rollouts controller sets on the AnalysisRuns it creates before applying
// analysisRunMetadata (rollout/analysis.go newAnalysisRunFromRollout; utils/analysis/factory.go): letting
// analysisRunMetadata override them would break the controller's bookkeeping.
var reservedLabels = map[string]bool{
	"rollouts-pod-template-hash": true,
	"rollout-type":               true,
	"step-index":                 true,
	"argo-rollouts.argoproj.io/controller-instance-id": true,
}

var reservedAnnotations = map[string]bool{"rollout.argoproj.io/revision": true}

// Validate checks the options that do not depend on the input.
func (o Options) Validate() error {
	switch o.Mode {
	case Barrier:
		if len(o.Templates) > 0 || len(o.Args) > 0 {
			return errors.New("--template and --arg need --mode analysisrun")
		}
	case AnalysisRun:
	default:
		return fmt.Errorf("unknown mode %q", o.Mode)
	}
	for k, v := range o.AnalysisLabels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s=%q: %s", k, v, strings.Join(errs, "; "))
		}
		if reservedLabels[k] {
			return fmt.Errorf("label %q is set by the Rollouts controller on the AnalysisRuns it creates; analysisRunMetadata must not override it", k)
		}
	}
	for k := range o.AnalysisAnnotations {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("annotation key %q: %s", k, strings.Join(errs, "; "))
		}
		if reservedAnnotations[k] {
			return fmt.Errorf("annotation %q is set by the Rollouts controller on the AnalysisRuns it creates; analysisRunMetadata must not override it", k)
		}
	}
	seen := map[string]bool{}
	for _, a := range o.Args {
		if a.Name == "" {
			return errors.New("--arg needs NAME=VALUE")
		}
		if seen[a.Name] {
			return fmt.Errorf("--arg %s given twice", a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

// Object is one generated object.
type Object struct {
	Kind, Namespace, Name string
	YAML                  []byte
}

// Result is everything a run produced.
type Result struct {
	streams []manifest.Stream
	// patched holds re-encoded documents by stream and document index.
	patched map[[2]int][]byte
	// Generated are the new hooks, in output order (empty when the input already has them).
	Generated []Object
	// Patched names the Rollouts whose analysisRunMetadata changed.
	Patched []string
	// Warnings are for standard error: what will hold the sync longer than expected.
	Warnings []string
	Report   *inspect.Report
}

// Generate analyses the input streams (one application's manifests) and builds the hooks and patches.
func Generate(streams []manifest.Stream, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var objs []manifest.Object
	for _, s := range streams {
		objs = append(objs, s.Objects()...)
	}
	if len(objs) == 0 {
		// An empty render is almost always a broken pipeline; as a Config Management Plugin, passing it
		// on would let Argo CD prune the whole application.
		return nil, manifest.ErrNoObjects
	}
	report, err := inspect.Inspect(objs, inspect.Options{KargoTimeout: opts.KargoTimeout, KnownTemplates: opts.KnownTemplates})
	if err != nil {
		return nil, err
	}
	errs, missing := report.Errors(), false
	var warnings []inspect.Problem
	for _, p := range report.Problems {
		if p.MissingTemplate {
			missing = true
			if opts.RequireTemplates {
				errs = append(errs, p)
				continue
			}
		}
		if p.Severity != inspect.Error {
			warnings = append(warnings, p)
		}
	}
	if len(errs) > 0 {
		lines := problemLines(errs, true)
		hint := ""
		if missing && opts.RequireTemplates {
			hint = "\n" + MissingTemplateHint
		}
		return nil, fmt.Errorf("%s%s", strings.Join(lines, "\n"), hint)
	}
	res := &Result{streams: streams, patched: map[[2]int][]byte{}, Report: report}
	// The same warning on many Rollouts (every release of a chart pausing at pause {}) is one line.
	res.Warnings = problemLines(warnings, false)
	if missing {
		res.Warnings = append(res.Warnings, MissingTemplateHint)
	}
	if err := res.patchMetadata(opts); err != nil {
		return nil, err
	}
	g := newGate(objs)
	switch opts.Mode {
	case Barrier:
		if !g.hasGenerated(string(Barrier)) {
			obj, err := barrier(g, report)
			if err != nil {
				return nil, err
			}
			res.Generated = append(res.Generated, obj)
		}
	case AnalysisRun:
		gen, err := analysisRuns(g, objs, report, opts)
		if err != nil {
			return nil, err
		}
		res.Generated = append(res.Generated, gen...)
	}
	return res, nil
}

// shownObjects is how many of the objects sharing a problem problemLines names.
const shownObjects = 3

// problemLines is one line per distinct problem, in input order of its first object: a problem of one
// object names it (and, withWhere, where it is), one that many objects share (a missing template every
// Rollout of a kubectl get references, say) says how many and names the first few, so that a big input
// gives a readable error.
func problemLines(problems []inspect.Problem, withWhere bool) []string {
	var order []string
	byMessage := map[string][]inspect.Problem{}
	for _, p := range problems {
		if _, ok := byMessage[p.Message]; !ok {
			order = append(order, p.Message)
		}
		byMessage[p.Message] = append(byMessage[p.Message], p)
	}
	lines := make([]string, 0, len(order))
	for _, m := range order {
		ps := byMessage[m]
		if len(ps) == 1 {
			if withWhere {
				lines = append(lines, fmt.Sprintf("%s: %s: %s", ps[0].Where, ps[0].Object, m))
			} else {
				lines = append(lines, fmt.Sprintf("%s: %s", ps[0].Object, m))
			}
			continue
		}
		var names []string
		for _, p := range ps[:min(len(ps), shownObjects)] {
			names = append(names, p.Object)
		}
		if len(ps) > shownObjects {
			names = append(names, "…")
		}
		lines = append(lines, fmt.Sprintf("%s (%d objects: %s)", m, len(ps), strings.Join(names, ", ")))
	}
	return lines
}

// PostRendered is the input, byte for byte except for patched Rollouts, followed by the generated hooks:
// what a Helm post-renderer or a Config Management Plugin prints.
func (r *Result) PostRendered() []byte {
	var b bytes.Buffer
	_, _ = r.WriteTo(&b) // a bytes.Buffer never fails a write
	return b.Bytes()
}

// WriteTo writes PostRendered to w without building it first: the output is as big as the input, which
// the Result already holds.
func (r *Result) WriteTo(w io.Writer) (int64, error) {
	ew := &endWriter{w: w}
	for i, s := range r.streams {
		if i > 0 && ew.n > 0 {
			ew.endLine()
			if len(s.Docs) > 0 && len(s.Docs[0].Lead) == 0 {
				ew.write([]byte("---\n"))
			}
		}
		for j, d := range s.Docs {
			ew.write(d.Lead)
			if p, ok := r.patched[[2]int{i, j}]; ok {
				ew.write(p)
			} else {
				ew.write(d.Raw)
			}
		}
		ew.write(s.Tail)
	}
	if len(r.Generated) > 0 && ew.n > 0 {
		ew.endLine()
	}
	ew.write(r.GeneratedYAML())
	return ew.n, ew.err
}

// endWriter remembers the last byte written, so that documents of different streams can be separated
// without reading the output back, and the first error, so that a failed write stops the rest.
type endWriter struct {
	w    io.Writer
	n    int64
	last byte
	err  error
}

func (e *endWriter) write(p []byte) {
	if e.err != nil || len(p) == 0 {
		return
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.last, e.err = p[len(p)-1], err
}

func (e *endWriter) endLine() {
	if e.n > 0 && e.last != '\n' {
		e.write([]byte("\n"))
	}
}

// Keep is what Generate reads of an object, for manifest.ReadStreamsKeeping: analysis templates whole
// (the AnalysisRun hook inlines them), of a Rollout its metadata and the part of its spec inspect reads
// (its pod template, most of a Rollout, is not read: the metadata patch edits the document's own
// bytes), and of every other object its identity and annotations (what the barrier gates, and the hook
// annotations). The output is built from the input's bytes, never from these maps.
func Keep(o manifest.Object) manifest.Object {
	if o.Group() == "argoproj.io" {
		switch o.Kind() {
		case inspect.KindTemplate, inspect.KindClusterTmpl:
			return o
		case inspect.KindRollout:
			o.Object = map[string]any{"apiVersion": o.Object["apiVersion"], "kind": o.Object["kind"], "metadata": o.Object["metadata"],
				"spec": inspect.RolloutSpecRead(o.Object["spec"])}
			return o
		}
	}
	md := map[string]any{}
	for _, k := range []string{"name", "namespace", "annotations"} {
		if v, ok := objectMeta(o.Object)[k]; ok {
			md[k] = v
		}
	}
	o.Object = map[string]any{"apiVersion": o.Object["apiVersion"], "kind": o.Object["kind"], "metadata": md}
	return o
}

// GeneratedYAML is the generated hooks alone, each document opened by "---".
func (r *Result) GeneratedYAML() []byte {
	var b bytes.Buffer
	for _, g := range r.Generated {
		b.WriteString("---\n")
		b.Write(g.YAML)
	}
	return b.Bytes()
}

// gate describes the resources a sync gates: every object that is not a hook.
type gate struct {
	keys      []string
	namespace string // the one explicit namespace of the input, if there is exactly one
	generated map[string]map[string]bool
}

func newGate(objs []manifest.Object) *gate {
	g := &gate{generated: map[string]map[string]bool{}}
	namespaces := map[string]bool{}
	for _, o := range objs {
		ann := annotations(o.Object)
		if kind := ann[Generated]; kind != "" {
			if g.generated[kind] == nil {
				g.generated[kind] = map[string]bool{}
			}
			g.generated[kind][o.Kind()+"/"+o.Namespace()+"/"+o.Name()] = true
		}
		if o.Namespace() != "" {
			namespaces[o.Namespace()] = true
		}
		if ann[ArgoCDHook] != "" || ann[HelmHook] != "" {
			continue
		}
		g.keys = append(g.keys, o.Group()+"/"+o.Kind()+"/"+o.Namespace()+"/"+o.Name())
	}
	sort.Strings(g.keys)
	if len(namespaces) == 1 {
		for ns := range namespaces {
			g.namespace = ns
		}
	}
	return g
}

func (g *gate) hasGenerated(kind string) bool { return len(g.generated[kind]) > 0 }

// hash names a hook after what it gates, so that hooks of two Applications sharing a namespace never
// collide (a hook applied over another Application's hook would leave that sync waiting for an object
// it no longer tracks) while the same manifests always give the same name.
func (g *gate) hash(extra string, n int) string {
	h := sha256.New()
	h.Write([]byte(extra + "\n"))
	h.Write([]byte(strings.Join(g.keys, "\n")))
	return hex.EncodeToString(h.Sum(nil))[:n]
}

func objectMeta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func annotations(obj map[string]any) map[string]string {
	out := map[string]string{}
	a, _ := objectMeta(obj)["annotations"].(map[string]any)
	for k, v := range a {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// dnsLabel makes s a DNS-1123 label of at most max characters: lower case, [a-z0-9-], no leading or
// trailing dash.
func dnsLabel(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > max {
		out = out[:max]
	}
	return strings.Trim(out, "-")
}

func checkName(kind, name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("generated %s name %q: %s", kind, name, strings.Join(errs, "; "))
	}
	return nil
}

// document wraps an object mapping into a document with a head comment.
func document(comment string, obj *yaml.Node) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{obj}}
	obj.HeadComment = comment
	return encodeDocument(doc)
}

func metadataNode(name, namespace string, labels, annotations map[string]string) *yaml.Node {
	m := mapOf("name", name)
	if namespace != "" {
		m.Content = append(m.Content, str("namespace"), str(namespace))
	}
	m.Content = append(m.Content, str("labels"), sortedMap(labels), str("annotations"), sortedMap(annotations))
	return m
}

func sortedMap(m map[string]string) *yaml.Node {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := mapOf()
	for _, k := range keys {
		n.Content = append(n.Content, str(k), str(m[k]))
	}
	return n
}
