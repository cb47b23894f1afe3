package hooks

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/analysis-health/analysis-health/internal/gate/inspect"
)

// patchMetadata adds opts.AnalysisLabels and opts.AnalysisAnnotations to the analysisRunMetadata of every
// analysis block of every Rollout (canary steps, background, experiments, blue-green pre/post), which the
// Rollouts controller copies onto the AnalysisRuns it creates (rollout/analysis.go
// newAnalysisRunFromRollout; experiments/experiment.go newAnalysisRun). Only documents that change are
// re-encoded.
func (r *Result) patchMetadata(opts Options) error {
	if len(opts.AnalysisLabels) == 0 && len(opts.AnalysisAnnotations) == 0 {
		return nil
	}
	for i, s := range r.streams {
		for j, d := range s.Docs {
			var rollouts []int
			for k, o := range d.Objects {
				if o.Group() == "argoproj.io" && o.Kind() == inspect.KindRollout {
					rollouts = append(rollouts, k)
				}
			}
			if len(rollouts) == 0 {
				continue
			}
			doc, err := parseDocument(d.Raw)
			if err != nil {
				return fmt.Errorf("%s (document %d): %w", s.Source, d.Doc, err)
			}
			changed := false
			for _, k := range rollouts {
				o := d.Objects[k]
				node := objectNode(doc, o.Item)
				if node == nil {
					return fmt.Errorf("%s: Rollout %s: cannot locate it in the document", o.Where(), o.Name())
				}
				c, err := patchRollout(node, opts.AnalysisLabels, opts.AnalysisAnnotations)
				if err != nil {
					return fmt.Errorf("%s: Rollout %s: %w", o.Where(), o.Name(), err)
				}
				if c {
					changed = true
					r.Patched = append(r.Patched, "Rollout "+inspect.Display(o.Namespace(), o.Name()))
				}
				if len(analysisBlocks(node)) == 0 {
					continue
				}
				for _, key := range selectorConflicts(node, opts.AnalysisLabels) {
					r.Warnings = append(r.Warnings, fmt.Sprintf("Rollout %s: label %q is also a selector label; the Rollouts controller sets it on the AnalysisRuns from spec.selector.matchLabels, overriding analysisRunMetadata",
						inspect.Display(o.Namespace(), o.Name()), key))
				}
			}
			if !changed {
				continue
			}
			out, err := encodeDocument(doc)
			if err != nil {
				return fmt.Errorf("%s (document %d): %w", s.Source, d.Doc, err)
			}
			r.patched[[2]int{i, j}] = out
		}
	}
	return nil
}

// analysisBlocks finds the blocks whose analysisRunMetadata reaches AnalysisRuns.
func analysisBlocks(rollout *yaml.Node) []*yaml.Node {
	var blocks []*yaml.Node
	add := func(n *yaml.Node) {
		if n != nil && n.Kind == yaml.MappingNode {
			blocks = append(blocks, n)
		}
	}
	strategy := path(rollout, "spec", "strategy")
	if c := get(strategy, "canary"); c != nil {
		if steps := get(c, "steps"); steps != nil && steps.Kind == yaml.SequenceNode {
			for _, st := range steps.Content {
				add(get(st, "analysis"))
				// An experiment's analysisRunMetadata goes to the Experiment and from there to the runs
				// of its analyses; an experiment without analyses creates no run.
				if e := get(st, "experiment"); e != nil {
					if a := get(e, "analyses"); a != nil && a.Kind == yaml.SequenceNode && len(a.Content) > 0 {
						add(e)
					}
				}
			}
		}
		add(get(c, "analysis"))
	}
	if bg := get(strategy, "blueGreen"); bg != nil {
		add(get(bg, "prePromotionAnalysis"))
		add(get(bg, "postPromotionAnalysis"))
	}
	return blocks
}

func patchRollout(rollout *yaml.Node, labels, annotations map[string]string) (bool, error) {
	changed := false
	for _, b := range analysisBlocks(rollout) {
		md := mapping(b, "analysisRunMetadata")
		if md == nil {
			return false, fmt.Errorf("analysisRunMetadata is not a mapping")
		}
		for _, f := range []struct {
			field string
			kv    map[string]string
		}{{"labels", labels}, {"annotations", annotations}} {
			field, kv := f.field, f.kv
			if len(kv) == 0 {
				continue
			}
			m := mapping(md, field)
			if m == nil {
				return false, fmt.Errorf("analysisRunMetadata.%s is not a mapping", field)
			}
			keys := make([]string, 0, len(kv))
			for k := range kv {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if setString(m, k, kv[k]) {
					changed = true
				}
			}
		}
	}
	return changed, nil
}

// selectorConflicts lists label keys that spec.selector.matchLabels also sets: the controller applies
// those after analysisRunMetadata.
func selectorConflicts(rollout *yaml.Node, labels map[string]string) []string {
	sel := path(rollout, "spec", "selector", "matchLabels")
	var out []string
	for k := range labels {
		if get(sel, k) != nil {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// keyList is "a, b, c" for messages.
func keyList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
