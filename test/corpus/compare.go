package corpus

import (
	"fmt"
	"sort"
	"strings"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// Result is one object's three verdicts.
type Result struct {
	Source string // module@version
	Obj    Object
	Ours   engine.Health
	// Builtin is Argo CD's built-in script's answer; Status "error" when it raised a Lua error.
	Builtin engine.Health
	// Kubectl is what kubectl-argo-rollouts shows, mapped by KubectlHealth; KubectlRaw as it prints it.
	Kubectl    engine.Health
	KubectlRaw string
	// DecodeErr is set when the object does not decode into Argo Rollouts' API types (then Kubectl is
	// meaningless).
	DecodeErr error
}

// KubectlHealth maps kubectl-argo-rollouts' vocabulary onto Argo CD's: a Rollout's phase (Healthy,
// Progressing, Paused, Degraded) and an AnalysisRun's or Experiment's phase (Pending, Running,
// Successful, Failed, Error, Inconclusive; empty before the controller's first write).
func KubectlHealth(status string) string {
	switch status {
	case "Healthy", "Successful":
		return engine.Healthy
	case "Progressing", "Running", "Pending", "":
		return engine.Progressing
	case "Paused", "Inconclusive":
		return engine.Suspended
	case "Degraded", "Failed", "Error":
		return engine.Degraded
	}
	return "?" + status
}

// Reason explains why our status differs from a reference's on an object. Each predicate is narrow, so
// a new kind of difference fails the test until a rule is fixed or a reason written.
type Reason struct {
	Rule  string
	Match func(r Result, ref engine.Health) bool
}

func legacyRollout(r Result) bool {
	st, _ := r.Obj.Obj["status"].(map[string]any)
	phase, _ := st["phase"].(string)
	return r.Obj.Kind == "Rollout" && st != nil && phase == ""
}

// BuiltinReasons are the differences from Argo CD's built-in scripts that our rules intend.
var BuiltinReasons = []Reason{
	{"AnalysisRun `Inconclusive` is Suspended: Argo Rollouts pauses for a human on it, while Unknown makes Kargo's Stage Unhealthy and fails a sync hook (AnalysisRun table)",
		func(r Result, ref engine.Health) bool {
			return r.Obj.Kind == "AnalysisRun" && ref.Status == "Unknown" && r.Ours.Status == engine.Suspended && r.KubectlRaw == "Inconclusive"
		}},
	{"the built-in raises a Lua error on this object (Argo CD then shows Unknown); ours type-checks every field it reads (sandbox rules)",
		func(r Result, ref engine.Health) bool { return ref.Status == "error" }},
}

// KubectlReasons are the differences from kubectl-argo-rollouts that our rules intend.
var KubectlReasons = []Reason{
	{"rule 1: the workloadRef generation gate; kubectl-argo-rollouts applies it only when `spec.templateResolvedFromRef`, which the controller sets in memory and never writes (`json:\"-\"`), so on a stored object it never does",
		func(r Result, ref engine.Health) bool {
			sp, _ := r.Obj.Obj["spec"].(map[string]any)
			return r.Obj.Kind == "Rollout" && sp["workloadRef"] != nil && r.Ours.Status == engine.Progressing && r.Builtin == r.Ours
		}},
	{"rule 1: no status at all, so the controller has not reconciled the object yet; kubectl-argo-rollouts' client-side fallback counts a missing `observedGeneration` as observed (it cannot tell none from a v0.9 hash) and reports the spec (`paused: true` → Paused)",
		func(r Result, ref engine.Health) bool {
			_, hasStatus := r.Obj.Obj["status"]
			return r.Obj.Kind == "Rollout" && !hasStatus && r.Ours.Status == engine.Progressing && r.Builtin == r.Ours
		}},
	{"rule 10: a controller before v0.8 kept the stable ReplicaSet in `status.canary.stableRS`, and blue-green ones set none; kubectl-argo-rollouts' client-side fallback reads only `status.stableRS` and waits forever, Argo CD's legacy logic (and ours) reads both",
		func(r Result, ref engine.Health) bool {
			st, _ := r.Obj.Obj["status"].(map[string]any)
			return legacyRollout(r) && st["stableRS"] == nil && r.Ours.Status == engine.Healthy && r.Builtin == r.Ours &&
				(ref.Message == "waiting for all steps to complete" || ref.Message == "waiting for post-promotion verification to complete")
		}},
	{"not applied on purpose: kubectl-argo-rollouts' client-side \"unpausing\" gate (`controllerPause` with no pause conditions), which lasts one reconcile; the phase `Paused` maps to Suspended (Rollout, \"Not done, on purpose\")",
		func(r Result, ref engine.Health) bool {
			return r.Obj.Kind == "Rollout" && ref.Message == "waiting for rollout to unpause" && r.Ours.Status == engine.Suspended
		}},
}

func explain(reasons []Reason, r Result, ref engine.Health) string {
	for _, reason := range reasons {
		if reason.Match(r, ref) {
			return reason.Rule
		}
	}
	return ""
}

func cell(h engine.Health) string {
	msg := h.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 140 {
		msg = msg[:140] + "…"
	}
	msg = strings.ReplaceAll(msg, "|", "\\|")
	if msg == "" {
		return "**" + h.Status + "**"
	}
	return "**" + h.Status + "** " + msg
}

// Report is the comparison of a corpus: the generated Markdown and the problems that fail the test.
type Report struct {
	Markdown string
	Problems []string
}

// Compare checks every result — ours must be one of Healthy/Progressing/Suspended/Degraded, every status
// difference must have a reason, an object must decode unless undecodable (ID → why) lists it, and
// every listed one must not — and renders the summary and table. builtinLabel and kubectlLabel name the
// references in the summary; unreadable lists documents (file → why) that are not YAML.
func Compare(results []Result, undecodable, unreadable map[string]string, builtinLabel, kubectlLabel string) Report {
	var rep Report
	problem := func(format string, a ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, a...)) }
	var rows, undecodableLines []string
	kinds := map[string]int{}
	perSource := map[string]int{}
	var sourceOrder []string
	agreeBuiltin, differBuiltin, agreeKubectl, differKubectl, notDecoded := 0, 0, 0, 0, 0
	seenUndecodable := map[string]bool{}
	for _, r := range results {
		kinds[r.Obj.Kind]++
		if perSource[r.Source] == 0 {
			sourceOrder = append(sourceOrder, r.Source)
		}
		perSource[r.Source]++
		id := r.Source + ":" + r.Obj.ID()
		switch r.Ours.Status {
		case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
		default:
			problem("%s: our script returned %q", id, r.Ours.Status)
		}
		var rules []string
		if r.Ours.Status == r.Builtin.Status {
			agreeBuiltin++
		} else if why := explain(BuiltinReasons, r, r.Builtin); why != "" {
			differBuiltin++
			rules = append(rules, "built-in: "+why)
		} else {
			problem("%s: ours %+v, Argo CD's built-in %+v: no reason; fix the rule or explain it", id, r.Ours, r.Builtin)
		}
		kubectl := "n/a (does not decode)"
		if why, known := undecodable[r.Obj.ID()]; known {
			if r.DecodeErr == nil {
				problem("%s: listed as not decodable (%s) but decodes: drop it from the list", id, why)
			}
			undecodableLines = append(undecodableLines, fmt.Sprintf("* `%s` (%s): %s", r.Obj.ID(), r.Source, why))
			seenUndecodable[r.Obj.ID()] = true
			notDecoded++
		} else if r.DecodeErr != nil {
			problem("%s: %s %s does not decode into Argo Rollouts' API types: %v", id, r.Obj.Kind, r.Obj.Name, r.DecodeErr)
			continue
		} else {
			kubectl = cell(r.Kubectl) + " (`" + r.KubectlRaw + "`)"
			if r.KubectlRaw == "" {
				kubectl = cell(r.Kubectl) + " (no status)"
			}
			if r.Ours.Status == r.Kubectl.Status {
				agreeKubectl++
			} else if why := explain(KubectlReasons, r, r.Kubectl); why != "" {
				differKubectl++
				rules = append(rules, "kubectl-argo-rollouts: "+why)
			} else {
				problem("%s: ours %+v, kubectl-argo-rollouts %s %+v: no reason; fix the rule or explain it", id, r.Ours, r.KubectlRaw, r.Kubectl)
			}
		}
		if len(rules) > 0 {
			rows = append(rows, fmt.Sprintf("| `%s` (%s) | %s | %s | %s | %s |", r.Obj.File, r.Source, cell(r.Builtin), kubectl, cell(r.Ours), strings.Join(rules, "<br>")))
		}
	}
	for id := range undecodable {
		if !seenUndecodable[id] {
			problem("%s is listed as not decodable but is no object of the corpus", id)
		}
	}
	var sources []string
	for _, s := range sourceOrder {
		sources = append(sources, fmt.Sprintf("`%s` %d", s, perSource[s]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Corpus: **%d objects** (%d Rollouts, %d AnalysisRuns, %d Experiments): %s.\n\n",
		len(results), kinds["Rollout"], kinds["AnalysisRun"], kinds["Experiment"], strings.Join(sources, ", "))
	b.WriteString("| reference | same status | documented difference | not compared |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %s | %d | %d | 0 |\n", builtinLabel, agreeBuiltin, differBuiltin)
	fmt.Fprintf(&b, "| %s | %d | %d | %d (do not decode) |\n\n", kubectlLabel, agreeKubectl, differKubectl, notDecoded)
	if len(undecodableLines) > 0 {
		b.WriteString("Not decodable into Argo Rollouts' API types, on purpose (evaluated by the scripts, no kubectl-argo-rollouts verdict):\n\n")
		sort.Strings(undecodableLines)
		b.WriteString(strings.Join(undecodableLines, "\n") + "\n\n")
	}
	if len(unreadable) > 0 {
		var lines []string
		for f, why := range unreadable {
			lines = append(lines, fmt.Sprintf("* `%s`: %s", f, why))
		}
		sort.Strings(lines)
		b.WriteString("Not YAML, so not in the corpus:\n\n" + strings.Join(lines, "\n") + "\n\n")
	}
	b.WriteString("| file | built-in | kubectl-argo-rollouts | ours | the rule that makes ours right |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
	rep.Markdown = b.String()
	return rep
}

// CheckUnreadable reports the unreadable documents a scan found that are not listed, and the listed
// files that read.
func CheckUnreadable(found []Unreadable, listed map[string]string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, u := range found {
		seen[u.File] = true
		if _, ok := listed[u.File]; !ok {
			problems = append(problems, u.Error())
		}
	}
	for f := range listed {
		if !seen[f] {
			problems = append(problems, f+" is listed as unreadable but reads: drop it from the list")
		}
	}
	sort.Strings(problems)
	return problems
}
