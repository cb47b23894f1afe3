package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as four tables: analyses, rollouts, templates, problems.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Rollouts) == 0 {
		fmt.Fprintln(tw, "No Rollouts in the input.")
	} else {
		// What each analysis runs (templates, arguments, dry-run metrics, run metadata) is as long as the
		// chart makes it: as columns it made the first table about 190 characters wide, so it is listed
		// below the table, one line per item, and the table keeps the short columns.
		fmt.Fprintln(tw, "ROLLOUT\tANALYSIS\tTYPE\tMIN. DURATION")
		for _, ro := range r.Rollouts {
			if len(ro.Analyses) == 0 {
				fmt.Fprintf(tw, "%s\t-\t-\t-\n", Display(ro.Namespace, ro.Name))
			}
			for _, a := range ro.Analyses {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", Display(ro.Namespace, ro.Name), shortPath(a.Path), a.Type, a.Duration)
			}
		}
		for _, ro := range r.Rollouts {
			for _, a := range ro.Analyses {
				fmt.Fprintf(tw, "\n%s %s runs\n", Display(ro.Namespace, ro.Name), shortPath(a.Path))
				for _, item := range runs(a) {
					// Fixed width, not a tab: the heading lines would break tabwriter's alignment per block.
					fmt.Fprintf(tw, "  %-10s  %s\n", item[0], item[1])
				}
			}
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "ROLLOUT\tSTRATEGY\tSTEPS\tINDEFINITE PAUSES\tMIN. TIME TO PROMOTION\tKARGO retry.timeout\tSOURCE")
		for _, ro := range r.Rollouts {
			min := ro.Estimate.Minimum
			if ro.Estimate.Indefinite {
				min += " + indefinite"
			}
			if len(ro.Estimate.NotCounted) > 0 {
				min += " + not counted"
			}
			steps := "-"
			if ro.Strategy == "canary" {
				steps = fmt.Sprint(ro.Steps)
			}
			var pauses []string
			for _, p := range ro.IndefinitePauses {
				pauses = append(pauses, shortPath(p))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", Display(ro.Namespace, ro.Name), ro.Strategy, steps, list(pauses), min,
				dash(ro.Estimate.KargoRetryTimeout), ro.Where)
		}
	}
	writeKargoTable(tw, r)
	if len(r.Templates) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "TEMPLATE\tUSED BY\tVERIFY\tSOURCE")
		for _, t := range r.Templates {
			verify := "-"
			if t.Verify {
				verify = "yes"
			}
			var users []string
			for _, u := range t.UsedBy {
				users = append(users, shortPath(u))
			}
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", t.Kind, Display(t.Namespace, t.Name), list(users), verify, t.Where)
		}
	}
	fmt.Fprintln(tw)
	if len(r.Problems) == 0 {
		fmt.Fprintln(tw, "No problems found.")
	} else {
		fmt.Fprintln(tw, "SEVERITY\tOBJECT\tPROBLEM")
		for _, p := range r.Problems {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Severity, p.Object, shortPath(p.Message))
		}
	}
	var notes []string
	for _, ro := range r.Rollouts {
		for _, n := range ro.Estimate.NotCounted {
			notes = append(notes, Display(ro.Namespace, ro.Name)+": "+shortPath(n))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "Not counted in the estimates:")
		for _, n := range notes {
			fmt.Fprintln(tw, "  "+n)
		}
	}
	return tw.Flush()
}

// shortPath drops the "spec.strategy." every analysis path starts with, to keep the table narrow.
func shortPath(s string) string { return strings.ReplaceAll(s, "spec.strategy.", "") }

// runs lists what an analysis runs, one item a line: its templates, arguments, dry-run metrics and the
// labels and annotations of its AnalysisRuns.
func runs(a Analysis) [][2]string {
	var out [][2]string
	for _, t := range a.Templates {
		s := kindOf(t) + "/" + t.Name
		if !t.Present {
			s += " (missing)"
		}
		out = append(out, [2]string{"template", s})
	}
	for _, arg := range a.Args {
		if arg.ValueFrom != "" {
			out = append(out, [2]string{"arg", arg.Name + "=<" + arg.ValueFrom + ">"})
		} else {
			out = append(out, [2]string{"arg", arg.Name + "=" + arg.Value})
		}
	}
	for _, m := range a.DryRunMetrics {
		out = append(out, [2]string{"dry-run", m})
	}
	for _, kv := range sorted(a.AnalysisRunMetadata.Labels) {
		out = append(out, [2]string{"label", kv})
	}
	for _, kv := range sorted(a.AnalysisRunMetadata.Annotations) {
		out = append(out, [2]string{"annotation", kv})
	}
	return out
}

func templates(refs []TemplateRef) string {
	var out []string
	for _, t := range refs {
		s := kindOf(t) + "/" + t.Name
		if !t.Present {
			s += " (missing)"
		}
		out = append(out, s)
	}
	return list(out)
}

func args(as []Arg) string {
	var out []string
	for _, a := range as {
		if a.ValueFrom != "" {
			out = append(out, a.Name+"=<"+a.ValueFrom+">")
		} else {
			out = append(out, a.Name+"="+a.Value)
		}
	}
	return list(out)
}

func metadata(m Metadata) string {
	var out []string
	for _, kv := range sorted(m.Labels) {
		out = append(out, "label "+kv)
	}
	for _, kv := range sorted(m.Annotations) {
		out = append(out, "annotation "+kv)
	}
	return list(out)
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
