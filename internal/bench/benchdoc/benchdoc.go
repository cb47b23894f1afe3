// Package benchdoc renders docs/performance.md from the output of the cost benchmarks (`make bench`):
// BenchmarkCost, BenchmarkPhases and BenchmarkWorstCase in conformance/ (Argo CD v2.14's VM) and
// test/argocd-v3.6 (Argo CD v3.6's; VMs names the release each committed file was measured on). The raw
// `go test -bench` output is committed next to this package (testdata/), and a test fails when the
// committed document is not what that output renders to.
package benchdoc

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Result is one benchmark's figures; with several runs (-count), the fastest run's time (the machine is
// shared, and the least disturbed run is the one closest to the cost) and its allocation counts, which
// are exact and the same in every run.
type Result struct {
	// NsPerOp is the process's CPU time per op (cpu-ns/op) where the benchmark reports it, else wall time.
	NsPerOp     float64
	AllocsPerOp float64
	BytesPerOp  float64
	Runs        int
}

var (
	line   = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	metric = regexp.MustCompile(`([\d.]+) (\S+/op)`)
)

// Parse reads `go test -bench` output; lines that are not benchmark results are ignored. A benchmark that
// measures several variants in turns (costcases.Cost: <variant>-cpu-ns/op and <variant>-allocs/op) gives
// one result per variant, <name>/<variant>, all from the run whose variants cost least in total, so that
// their ratios are those of one run.
func Parse(r io.Reader) (map[string]Result, error) {
	out := map[string]Result{}
	turnsTotal := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		values := map[string]float64{}
		for _, mm := range metric.FindAllStringSubmatch(m[2], -1) {
			values[mm[2]], _ = strconv.ParseFloat(mm[1], 64)
		}
		if turns := variantsOf(values); len(turns) > 0 {
			total := 0.0
			for _, v := range turns {
				total += values[v+"-cpu-ns/op"]
			}
			best, seen := turnsTotal[m[1]]
			for _, v := range turns {
				r := out[m[1]+"/"+v]
				if !seen || total < best {
					r.NsPerOp, r.AllocsPerOp = values[v+"-cpu-ns/op"], values[v+"-allocs/op"]
				}
				r.Runs++
				out[m[1]+"/"+v] = r
			}
			if !seen || total < best {
				turnsTotal[m[1]] = total
			}
			continue
		}
		ns, ok := values["cpu-ns/op"]
		if !ok {
			ns, ok = values["ns/op"]
		}
		if !ok {
			continue
		}
		bytes, allocs := values["B/op"], values["allocs/op"]
		prev, seen := out[m[1]]
		if !seen || ns < prev.NsPerOp {
			prev.NsPerOp, prev.AllocsPerOp, prev.BytesPerOp = ns, allocs, bytes
		}
		prev.Runs++
		out[m[1]] = prev
	}
	return out, sc.Err()
}

// variantsOf is the variants a line measured in turns, sorted.
func variantsOf(values map[string]float64) []string {
	var out []string
	for k := range values {
		if v, ok := strings.CutSuffix(k, "-cpu-ns/op"); ok {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// VM is one Argo CD generation's benchmark output.
type VM struct {
	// Name as the document shows it, e.g. "v2.14.21".
	Name string
	// How is one line on how that VM runs a script.
	How string
	// ParsesEveryCall is true for a VM that parses and compiles the script on every evaluation; in one
	// that caches the compiled script, parse and compile are a one-time cost and no part of the budget.
	ParsesEveryCall bool
	Results         map[string]Result
}

// Weight is one cell of the cluster-weighted mix: the share of a cluster's health evaluations.
type Weight struct {
	Kind, Path string
	Percent    float64
}

// Mix is the stated cluster-weighted mix. Why these shares: Argo CD evaluates a Rollout's health on every
// watch event and on every reconcile of its Application (every refresh, 3 min by default), and a fleet
// spends most of its time between rollouts; an AnalysisRun is evaluated at every measurement while it
// runs, and rarely after (it is owned by the Rollout, so only the resource tree shows it); experiments are
// rare. Rollouts of controllers older than v1.0 (no status.phase; Argo Rollouts v1.0 is from 2021) are
// measured but weigh nothing.
var Mix = []Weight{
	{"Rollout", "steady", 55}, {"Rollout", "inflight", 12}, {"Rollout", "failed", 3}, {"Rollout", "legacy", 0},
	{"AnalysisRun", "steady", 10}, {"AnalysisRun", "inflight", 14}, {"AnalysisRun", "failed", 1},
	{"Experiment", "steady", 2}, {"Experiment", "inflight", 2}, {"Experiment", "failed", 1},
}

// Goal is the target per VM, on the mix: ours at most Ratio times the built-ins and Floor times
// the floor (and no kind and path above the built-in).
type Goal struct {
	Ratio, Floor float64
}

var kinds = []string{"Rollout", "AnalysisRun", "Experiment"}
var paths = []string{"steady", "inflight", "failed", "legacy"}
var variants = []string{"ours", "builtin", "floor"}

// phaseVariants are the variants whose steps the phase table shows: the three, and the bound where a set
// has one.
var phaseVariants = append(append([]string{}, variants...), "bound")
var phases = []string{"setup", "convert", "parse", "strings", "compile", "run", "lazy", "result"}

func (vm VM) get(name string) (Result, bool) {
	r, ok := vm.Results[name]
	return r, ok
}

func us(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// mix is the weighted mean cost of a variant, over the cells that were measured.
func (vm VM) mix(variant string) (ns, allocs float64, ok bool) {
	return weighted(func(m Weight) (Result, bool) { return vm.get("BenchmarkCost/" + m.Kind + "/" + m.Path + "/" + variant) })
}

// weighted is the mean of the results cell gives, weighted by the mix, over the cells it has.
func weighted(cell func(Weight) (Result, bool)) (ns, allocs float64, ok bool) {
	var w float64
	for _, m := range Mix {
		r, found := cell(m)
		if !found || m.Percent == 0 {
			continue
		}
		ns += m.Percent * r.NsPerOp
		allocs += m.Percent * r.AllocsPerOp
		w += m.Percent
	}
	if w == 0 {
		return 0, 0, false
	}
	return ns / w, allocs / w, true
}

// Render is the page below its title, which is the doc's own (docs/performance.md), above the block.
func Render(vms []VM, goals map[string]Goal) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\n## Against the goal\n\n")
	b.WriteString("| Argo CD VM | goal (mix) | ours / builtin, mix (time, allocations) | ours / floor, mix (time, allocations) | worst kind and path (time) | met | least any script can cost / builtin, mix (time, allocations) |\n|---|---|---|---|---|---|---|\n")
	for _, vm := range vms {
		on, oa, ok1 := vm.mix("ours")
		bn, ba, ok2 := vm.mix("builtin")
		fn, fa, ok3 := vm.mix("floor")
		g := goals[vm.Name]
		if !ok1 || !ok2 || !ok3 {
			fmt.Fprintf(&b, "| %s | ≤ %.2f× builtin | not measured | | | | |\n", vm.Name, g.Ratio)
			continue
		}
		worst, worstName := 0.0, ""
		for _, m := range Mix {
			o, ok1 := vm.get("BenchmarkCost/" + m.Kind + "/" + m.Path + "/ours")
			bi, ok2 := vm.get("BenchmarkCost/" + m.Kind + "/" + m.Path + "/builtin")
			if ok1 && ok2 && o.NsPerOp/bi.NsPerOp > worst {
				worst, worstName = o.NsPerOp/bi.NsPerOp, m.Kind+" "+m.Path
			}
		}
		met := on/bn <= g.Ratio && on/fn <= g.Floor && worst <= 1
		least := "–"
		if ln, la, ok := vm.boundMix(); ok {
			least = fmt.Sprintf("%s, %s", ratio(ln, bn), ratio(la, ba))
		}
		fmt.Fprintf(&b, "| %s | ≤ %.2f× builtin, ≤ %.2f× floor, no kind > 1.00× builtin | **%s**, %s | **%s**, %s | %s %.2f× | %s | %s |\n", vm.Name, g.Ratio, g.Floor,
			ratio(on, bn), ratio(oa, ba), ratio(on, fn), ratio(oa, fa), worstName, worst, yesNo(met), least)
	}
	b.WriteString("\nThe mix (share of a cluster's health evaluations; `internal/bench/benchdoc.Mix` says why):\n\n| kind | steady | in flight | failed | legacy (pre-v1.0) |\n|---|---|---|---|---|\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "| %s |", k)
		for _, p := range paths {
			found := false
			for _, m := range Mix {
				if m.Kind == k && m.Path == p {
					fmt.Fprintf(&b, " %.0f %% |", m.Percent)
					found = true
				}
			}
			if !found {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	for _, vm := range vms {
		fmt.Fprintf(&b, "\n## Argo CD %s\n\n%s\n\n", vm.Name, vm.How)
		if len(vm.Results) == 0 {
			b.WriteString("Not measured: no benchmark output for this VM.\n")
			continue
		}
		b.WriteString("### Per kind and path\n\n| kind | path | ours | builtin | floor | ours / builtin (time, allocs) | ours / floor (time) |\n|---|---|---|---|---|---|---|\n")
		for _, k := range kinds {
			for _, p := range paths {
				var cells []Result
				for _, v := range variants {
					r, ok := vm.get("BenchmarkCost/" + k + "/" + p + "/" + v)
					if !ok {
						break
					}
					cells = append(cells, r)
				}
				if len(cells) != len(variants) {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s |", k, p)
				for _, c := range cells {
					fmt.Fprintf(&b, " %s, %.0f allocs |", us(c.NsPerOp), c.AllocsPerOp)
				}
				fmt.Fprintf(&b, " %s, %s | %s |\n", ratio(cells[0].NsPerOp, cells[1].NsPerOp), ratio(cells[0].AllocsPerOp, cells[1].AllocsPerOp), ratio(cells[0].NsPerOp, cells[2].NsPerOp))
			}
		}
		if on, oa, ok := vm.mix("ours"); ok {
			bn, ba, _ := vm.mix("builtin")
			fn, fa, _ := vm.mix("floor")
			fmt.Fprintf(&b, "| **mix** | | %s, %.0f allocs | %s, %.0f allocs | %s, %.0f allocs | **%s**, %s | %s |\n", us(on), oa, us(bn), ba, us(fn), fa, ratio(on, bn), ratio(oa, ba), ratio(on, fn))
		}
		b.WriteString(budget(vm, goals[vm.Name]))
		b.WriteString(boundTable(vm, goals[vm.Name]))
		b.WriteString(phaseTable(vm))
		b.WriteString(worstTable(vm))
	}
	return b.String()
}

// boundMix is the least any script keeping our rules can cost on the mix: each set's bound
// (internal/bench/costcases/bounds), and the floor for a set without one.
func (vm VM) boundMix() (ns, allocs float64, ok bool) {
	someBound := false
	ns, allocs, ok = weighted(func(m Weight) (Result, bool) {
		prefix := "BenchmarkCost/" + m.Kind + "/" + m.Path + "/"
		if r, found := vm.get(prefix + "bound"); found {
			someBound = true
			return r, true
		}
		return vm.get(prefix + "floor")
	})
	return ns, allocs, ok && someBound
}

// boundTable is the bounds against the built-ins and ours, set by set, and their mix against the goal:
// the measured floor that a goal missed is to be judged by.
func boundTable(vm VM, g Goal) string {
	ln, la, ok := vm.boundMix()
	if !ok {
		return ""
	}
	bn, ba, _ := vm.mix("builtin")
	on, _, _ := vm.mix("ours")
	var b strings.Builder
	b.WriteString("\n### The least any script can cost\n\nA set's **bound** is the least code we could write that tells that path's objects apart and gives them our\n" +
		"script's answer, and gives any other object that answer or none (`internal/bench/costcases/bounds/`; `TestBoundsAnswerAsOurs`\n" +
		"holds each to it on every fixture of its kind and 100 mutations of each). A whole script holds every path's code,\n" +
		"so none can cost less on a path than that path's bound; a set without one (legacy) counts at the floor, which\n" +
		"understates it.\n\n")
	b.WriteString("| kind | path | bound | builtin | ours | bound / builtin (time, allocs) | ours / bound (time, allocs) |\n|---|---|---|---|---|---|---|\n")
	worst, worstName := 0.0, ""
	for _, k := range kinds {
		for _, p := range paths {
			prefix := "BenchmarkCost/" + k + "/" + p + "/"
			l, ok1 := vm.get(prefix + "bound")
			bi, ok2 := vm.get(prefix + "builtin")
			o, ok3 := vm.get(prefix + "ours")
			if !ok1 || !ok2 || !ok3 {
				continue
			}
			if l.NsPerOp/bi.NsPerOp > worst {
				worst, worstName = l.NsPerOp/bi.NsPerOp, k+" "+p
			}
			fmt.Fprintf(&b, "| %s | %s | %s, %.0f allocs | %s, %.0f allocs | %s, %.0f allocs | %s, %s | %s, %s |\n", k, p, us(l.NsPerOp), l.AllocsPerOp,
				us(bi.NsPerOp), bi.AllocsPerOp, us(o.NsPerOp), o.AllocsPerOp, ratio(l.NsPerOp, bi.NsPerOp), ratio(l.AllocsPerOp, bi.AllocsPerOp),
				ratio(o.NsPerOp, l.NsPerOp), ratio(o.AllocsPerOp, l.AllocsPerOp))
		}
	}
	fmt.Fprintf(&b, "| **mix** | | %s, %.0f allocs | %s, %.0f allocs | %s | **%s**, %s | %s |\n\n", us(ln), la, us(bn), ba, us(on), ratio(ln, bn), ratio(la, ba), ratio(on, ln))
	if g.Ratio > 0 {
		fn, fa, _ := vm.mix("floor")
		fmt.Fprintf(&b, "Beyond the floor (%s, %.0f allocs), the goal of ≤ %.2f× leaves a script %s (%.0f allocs); the bounds spend %s (%.0f allocs) there",
			us(fn), fa, g.Ratio, us(math.Max(0, g.Ratio*bn-fn)), math.Max(0, g.Ratio*ba-fa), us(ln-fn), la-fa)
		var steps []string
		for _, ph := range []struct{ ph, what string }{{"parse", "parsing"}, {"compile", "compiling"}, {"run", "running"}} {
			if n, a, ok := vm.fullMixPhase("bound", ph.ph); ok {
				steps = append(steps, fmt.Sprintf("%s %s (%.0f allocs)", ph.what, us(n), a))
			}
		}
		if len(steps) > 0 && vm.ParsesEveryCall {
			b.WriteString(", measured step by step: " + strings.Join(steps, ", "))
		}
		b.WriteString(".\n")
	}
	switch r := ln / bn; {
	case r > g.Ratio:
		fmt.Fprintf(&b, "The bounds alone cost **%.2f×** the built-ins on the mix (%.2f× in allocations), above the goal of %.2f×: no\n"+
			"script keeping these rules can meet it in this VM, before it holds the code of any other path.\n", r, la/ba, g.Ratio)
	case la/ba > g.Ratio:
		fmt.Fprintf(&b, "The bounds alone cost **%.2f×** the built-ins on the mix in time and **%.2f×** in allocations, against the goal\n"+
			"of %.2f×: only a script costing no more on each path than the code of that path alone could meet it, in time\n"+
			"and not in allocations; a whole script also carries every other path's code (ours, in long strings: the\n"+
			"budget table above).\n", r, la/ba, g.Ratio)
	default:
		fmt.Fprintf(&b, "The bounds cost %.2f× the built-ins on the mix (%.2f× in allocations), within the goal of %.2f×.\n", r, la/ba, g.Ratio)
	}
	if worst > 1 {
		fmt.Fprintf(&b, "The dearest bound, %s, costs %.2f× the built-in: no script keeping these rules has every kind within 1.00× here.\n", worstName, worst)
	} else {
		fmt.Fprintf(&b, "The dearest bound, %s, costs %.2f× the built-in.\n", worstName, worst)
	}
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func phaseTable(vm VM) string {
	var rows []string
	for _, k := range kinds {
		for _, p := range paths {
			for _, v := range phaseVariants {
				prefix := "BenchmarkPhases/" + k + "/" + p + "/" + v + "/"
				if _, ok := vm.get(prefix + "setup"); !ok {
					continue
				}
				row := fmt.Sprintf("| %s %s | %s |", k, p, v)
				for _, ph := range phases {
					r, ok := vm.phase(prefix, ph)
					if !ok {
						row += " – |"
						continue
					}
					row += fmt.Sprintf(" %s, %.0f |", us(r.NsPerOp), r.AllocsPerOp)
				}
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return "\n### Where the cost goes\n\nEach step of one evaluation measured alone (time, allocations); `strings` is the part of `parse` spent reading\nthe bytes of long strings (parse minus a parse of the script with them emptied), `lazy` the part of `run` spent\ncompiling `loadstring` chunks.\n\n| set | variant | setup | convert | parse | strings | compile | run | lazy | result |\n|---|---|---|---|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n"
}

// phase is one step of BenchmarkPhases under prefix; strings and lazy are differences of two steps.
func (vm VM) phase(prefix, ph string) (Result, bool) {
	diff := func(a, b string) (Result, bool) {
		x, ok1 := vm.get(prefix + a)
		y, ok2 := vm.get(prefix + b)
		return Result{NsPerOp: math.Max(0, x.NsPerOp-y.NsPerOp), AllocsPerOp: math.Max(0, x.AllocsPerOp-y.AllocsPerOp)}, ok1 && ok2
	}
	switch ph {
	case "strings":
		return diff("parse", "parse-code")
	case "lazy":
		return diff("run", "run-cached")
	case "run-only":
		return vm.get(prefix + "run-cached")
	case "code":
		return vm.get(prefix + "parse-code")
	}
	return vm.get(prefix + ph)
}

// mixPhase is a phase of a variant weighted by the mix, over the cells whose phases were measured.
func (vm VM) mixPhase(variant, ph string) (ns, allocs float64, ok bool) {
	return weighted(func(m Weight) (Result, bool) {
		return vm.phase("BenchmarkPhases/"+m.Kind+"/"+m.Path+"/"+variant+"/", ph)
	})
}

// fullMixPhase is mixPhase over every weighted cell, or not ok if one lacks the phase.
func (vm VM) fullMixPhase(variant, ph string) (ns, allocs float64, ok bool) {
	for _, m := range Mix {
		if _, found := vm.phase("BenchmarkPhases/"+m.Kind+"/"+m.Path+"/"+variant+"/", ph); m.Percent > 0 && !found {
			return 0, 0, false
		}
	}
	return vm.mixPhase(variant, ph)
}

// budget is what the goal leaves a script once the floor is paid, against what ours spends there, phase
// by phase on the mix: the measured numbers behind a goal met or missed.
func budget(vm VM, g Goal) string {
	on, oa, ok1 := vm.mix("ours")
	bn, ba, ok2 := vm.mix("builtin")
	fn, fa, ok3 := vm.mix("floor")
	if !ok1 || !ok2 || !ok3 {
		return ""
	}
	leftRatio, leftFloor := g.Ratio*bn-fn, (g.Floor-1)*fn
	var b strings.Builder
	fmt.Fprintf(&b, "\n### What the goal leaves a script\n\nOn the mix the built-ins cost %s (%.0f allocs) per evaluation and the floor %s (%.0f allocs): the VM's\n"+
		"setup, the object's conversion and the result's handling, which every script pays whatever it does. The goal\n"+
		"of ≤ %.2f× the built-ins (%s) leaves a script **%s** beyond the floor (%.0f allocs), and ≤ %.2f× the floor leaves\n"+
		"**%s** (%.0f allocs). Ours spends %s (%.0f allocs) there:\n\n",
		us(bn), ba, us(fn), fa, g.Ratio, us(g.Ratio*bn), us(math.Max(0, leftRatio)), math.Max(0, g.Ratio*ba-fa), g.Floor, us(leftFloor), (g.Floor-1)*fa, us(on-fn), oa-fa)
	rows := []struct{ ph, what string }{
		{"strings", "reading the long strings (the lazily compiled chunks' bytes), every call"},
		{"code", "parsing the code of the main chunk"},
		{"compile", "compiling the main chunk"},
		{"run-only", "running it (the floor runs one line)"},
		{"lazy", "compiling the `loadstring` chunks an object reaches"},
	}
	if !vm.ParsesEveryCall {
		rows = rows[3:]
	}
	b.WriteString("| step (ours, mix) | time | allocs | of what ≤ " + fmt.Sprintf("%.2f", g.Ratio) + "× the built-ins leaves |\n|---|---|---|---|\n")
	for _, r := range rows {
		n, a, ok := vm.mixPhase("ours", r.ph)
		if !ok && r.ph == "code" {
			// Output of a benchmark without parse-code: the parse whole, long strings included.
			r.what = "parsing the main chunk, long strings included"
			n, a, ok = vm.mixPhase("ours", "parse")
		}
		if !ok {
			continue
		}
		share := "–"
		if leftRatio > 0 {
			share = fmt.Sprintf("%.0f %%", 100*n/leftRatio)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s |\n", r.what, us(n), a, share)
	}
	b.WriteString("\nEach step is measured alone (BenchmarkPhases), so the steps add up to the whole only as closely as the machine's\nload allows; the allocations add up exactly but for the conversion and result of objects that differ in size.\n")
	if !vm.ParsesEveryCall {
		b.WriteString("Parse and compile are paid once per script and process (the cache), so they are no part of an evaluation.\n")
	}
	return b.String()
}

func worstTable(vm VM) string {
	var names []string
	seen := map[string]bool{}
	for n := range vm.Results {
		if rest, ok := strings.CutPrefix(n, "BenchmarkWorstCase/"); ok {
			obj := rest[:strings.LastIndex(rest, "/")]
			if !seen[obj] {
				seen[obj] = true
				names = append(names, obj)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("\n### Worst-case objects (target ≤ 10 ms each)\n\nThe floor is what Argo CD's VM spends on the object before and after any script: mostly converting it into\nLua tables.\n\n| object | ours | builtin | floor | ours − floor | ours ≤ 10 ms |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		o, ok1 := vm.get("BenchmarkWorstCase/" + n + "/ours")
		bi, ok2 := vm.get("BenchmarkWorstCase/" + n + "/builtin")
		if !ok1 || !ok2 {
			continue
		}
		fl, _ := vm.get("BenchmarkWorstCase/" + n + "/floor")
		fmt.Fprintf(&b, "| %s | %s, %.0f allocs | %s, %.0f allocs | %s, %.0f allocs | %s | %s |\n", n, us(o.NsPerOp), o.AllocsPerOp,
			us(bi.NsPerOp), bi.AllocsPerOp, us(fl.NsPerOp), fl.AllocsPerOp, us(math.Max(0, o.NsPerOp-fl.NsPerOp)), yesNo(o.NsPerOp <= 10e6))
	}
	return b.String()
}

const header = `
` + "`make bench`" + ` runs the cost benchmarks in Argo CD v2.14.21's VM (` + "`test/argocd-v2.14/`" + `, the main module) and in Argo
CD v3.6.1's (` + "`test/argocd-v3.6`" + `), writes their output to ` + "`internal/bench/benchdoc/testdata/`" + ` and renders this page from
it. One op is one health evaluation through Argo CD's real controller path (gitops-engine
` + "`health.GetResourceHealth`" + ` → Argo CD ` + "`util/lua`" + `), cycling over the bundled fixtures of one kind and path:

* **steady**: a Rollout with no analysis in flight, failed or inconclusive; a Successful AnalysisRun or
  Experiment;
* **inflight**: analysis running or pending, an experiment running;
* **failed**: a Degraded or inconclusive verdict;
* **legacy**: a Rollout of a controller older than v1.0 (no ` + "`status.phase`" + `).

Variants, on the same objects:

| variant | what runs |
|---|---|
| ours | the form of our scripts the generator emits for that Argo CD version (` + "`generate --argocd-version`" + `), from argocd-cm |
| builtin | Argo CD's built-in scripts (Argo CD opens every gopher-lua library for them) |
| floor | a one-line argocd-cm script ` + "`return {status=\"Healthy\"}`" + `: the VM, the object's conversion, the result's handling |
| bound | for each set but legacy, the least code that path needs ([below](#the-least-any-script-can-cost)), from argocd-cm |

Times are CPU time per evaluation (the process's user and system time, garbage collection included,
divided by the ops; the benchmarks report it as ` + "`cpu-ns/op`" + `): the machine's 2 cores are shared with other
work, which makes wall time per op mostly a measure of waiting, and inflates CPU time too, though less, and
by an amount that drifts over seconds. So the variants of a set are measured in one benchmark, taking turns
of 100 evaluations (` + "`costcases.Cost`" + `), and the figures of a set are those of its run that cost least in
total: its ratios are of one run, with the same machine under every variant; the worst cases likewise, in
turns of one evaluation. The steps of an evaluation (BenchmarkPhases) are measured one benchmark after
another, the least of their runs.
Allocations are exact and the same in every run; they are the steadier comparison.
`
