package costcases

import (
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	luajson "layeh.com/gopher-json"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/bench/worstcase"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// Eval is one health evaluation of obj through Argo CD's real controller path (gitops-engine
// GetResourceHealth → util/lua ResourceHealthOverrides), its result dropped.
type Eval func(obj *unstructured.Unstructured) error

// VM is what the benchmarks need from one Argo CD version.
type VM struct {
	// ArgoCDVersion is the generator's --argocd-version for ours (its form of the scripts).
	ArgoCDVersion string
	// Profile is our engine's profile of the version; it decides each fixture's path.
	Profile engine.Profile
	// Builtins holds the version's built-in scripts as resource_customizations embeds them
	// (<group>/<Kind>/health.lua).
	Builtins fs.FS
	// Evaluator loads argocd-cm data as the version's controller does and returns an evaluation under those
	// overrides; nil data is no override (the built-in scripts).
	Evaluator func(data map[string]string) (Eval, error)
	// ExtraGlobals, if not nil, sets what the version's runLua sets besides the libraries, before obj.
	ExtraGlobals func(*lua.LState)
	// DecodeHealth unmarshals a script's result, as JSON, into the version's HealthStatus.
	DecodeHealth func(raw []byte) error
}

// Variant is one way of evaluating the sets, on the same objects:
//   - ours: the form the generator emits for the VM's version, from argocd-cm;
//   - builtin: Argo CD's own scripts, with every library opened, as Argo CD does for them;
//   - floor: a one-line argocd-cm script (the VM, the conversion of the object and the handling of the
//     result);
//   - bound: for a set that has one (Bounds: all but legacy), the least code that path needs, from argocd-cm.
type Variant struct {
	Name     string
	Eval     Eval
	OpenLibs bool
	Scripts  map[string]string // by kind
}

// floorScript is the cheapest script a health override can be.
const floorScript = `return {status="Healthy"}`

// Variants are ours, builtin and floor, in that order.
func Variants(vm VM) ([]Variant, error) {
	ours, floor, builtin := map[string]string{}, map[string]string{}, map[string]string{}
	oursData, floorData := map[string]string{}, map[string]string{}
	for _, k := range ahlua.Kinds() {
		s, err := generator.Script(k, generator.Options{ArgoCDVersion: vm.ArgoCDVersion})
		if err != nil {
			return nil, err
		}
		ours[k.Kind] = s
		oursData[generator.HealthKey(k)] = s
		floor[k.Kind] = floorScript
		floorData[generator.HealthKey(k)] = floorScript
		raw, err := fs.ReadFile(vm.Builtins, k.Key()+"/health.lua")
		if err != nil {
			return nil, err
		}
		builtin[k.Kind] = string(raw)
	}
	oursEval, err := vm.Evaluator(oursData)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	floorEval, err := vm.Evaluator(floorData)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	builtinEval, err := vm.Evaluator(nil)
	if err != nil {
		return nil, fmt.Errorf("builtin: %w", err)
	}
	return []Variant{
		{"ours", oursEval, false, ours},
		{"builtin", builtinEval, true, builtin},
		{"floor", floorEval, false, floor},
	}, nil
}

// setsAndVariants are the sets, of the fixtures the built-in scripts evaluate without error, and each
// set's variants by set name: ours, builtin, floor, and bound where the set has one.
func setsAndVariants(b *testing.B, vm VM) ([]Set, map[string][]Variant) {
	b.Helper()
	builtin, err := vm.Evaluator(nil)
	if err != nil {
		b.Fatal(err)
	}
	sets, err := Sets(vm.Profile, func(obj *unstructured.Unstructured) bool { return builtin(obj) == nil })
	if err != nil {
		b.Fatal(err)
	}
	variants, err := Variants(vm)
	if err != nil {
		b.Fatal(err)
	}
	bounds, err := boundVariants(vm)
	if err != nil {
		b.Fatal(err)
	}
	bySet := map[string][]Variant{}
	for _, s := range sets {
		bySet[s.Name()] = variants
		if v, ok := bounds[s.Name()]; ok {
			bySet[s.Name()] = append(slices.Clone(variants), v)
		}
	}
	return sets, bySet
}

// CostRound is how many evaluations of one variant run back to back before the next variant's turn: long
// enough (tens of ms) that the garbage collection one variant's allocations start and another's turn
// finishes is a small part of a turn, short enough that every variant of a set sees the same machine.
const CostRound = 100

// Cost benchmarks one evaluation of each variant per op, cycling over a set's objects, in Argo CD's own
// code: <Kind>/<path>, with <variant>-cpu-ns/op and <variant>-allocs/op per variant. The variants take
// turns of CostRound evaluations, starting with a different one each round, so that the load of a shared
// machine, which drifts over seconds, falls on all of them alike and their ratios hold within one run.
func Cost(b *testing.B, vm VM) {
	sets, variants := setsAndVariants(b, vm)
	for _, s := range sets {
		vs := variants[s.Name()]
		b.Run(s.Name(), func(b *testing.B) {
			reportTurns(b, CostRound, vs, s.Objs)
		})
	}
}

// reportTurns runs takeTurns for b.N ops and reports each variant's <variant>-cpu-ns/op and
// <variant>-allocs/op.
func reportTurns(b *testing.B, round int, vs []Variant, objs []*unstructured.Unstructured) {
	cpu, mallocs, err := takeTurns(b.N, round, vs, objs)
	if err != nil {
		b.Fatal(err)
	}
	for i, v := range vs {
		b.ReportMetric(float64(cpu[i])/float64(b.N), v.Name+"-cpu-ns/op")
		b.ReportMetric(float64(mallocs[i])/float64(b.N), v.Name+"-allocs/op")
	}
}

// takeTurns evaluates objs n times under each variant, in turns of round evaluations, and returns each
// variant's process CPU time and allocations.
func takeTurns(n, round int, vs []Variant, objs []*unstructured.Unstructured) ([]time.Duration, []uint64, error) {
	cpu := make([]time.Duration, len(vs))
	mallocs := make([]uint64, len(vs))
	var ms runtime.MemStats
	for turn, start := 0, 0; start < n; turn, start = turn+1, start+round {
		end := min(start+round, n)
		for k := range vs {
			i := (k + turn) % len(vs)
			runtime.ReadMemStats(&ms)
			m0, t0 := ms.Mallocs, processCPU()
			for j := start; j < end; j++ {
				if err := vs[i].Eval(objs[j%len(objs)]); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", vs[i].Name, err)
				}
			}
			cpu[i] += processCPU() - t0
			runtime.ReadMemStats(&ms)
			mallocs[i] += ms.Mallocs - m0
		}
	}
	return cpu, mallocs, nil
}

// Phases splits an evaluation into the steps Argo CD's runLua and ExecuteHealthLua take, each measured
// alone with the same gopher-lua calls: <Kind>/<path>/<variant>/<phase>, phase one of
//   - setup: State and Close;
//   - convert: the object into Lua tables (ToLua);
//   - parse and compile: the main chunk's source to a FunctionProto;
//   - parse-code: parse with the long strings emptied (EmptyLongStrings);
//   - run: the compiled chunk, lazily compiled chunks included;
//   - run-cached: run with CachedLoadstring (run minus run-cached is the lazy compilation);
//   - result: the returned table to JSON and into a HealthStatus (VM.DecodeHealth).
func Phases(b *testing.B, vm VM) {
	sets, variants := setsAndVariants(b, vm)
	for _, s := range sets {
		for _, v := range variants[s.Name()] {
			script := v.Scripts[s.Kind]
			chunk, err := parse.Parse(strings.NewReader(script), "<string>")
			if err != nil {
				b.Fatal(err)
			}
			proto, err := lua.Compile(chunk, "<string>")
			if err != nil {
				b.Fatal(err)
			}
			prefix := s.Name() + "/" + v.Name + "/"
			b.Run(prefix+"setup", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					L, cancel, err := State(v.OpenLibs, time.Second, vm.ExtraGlobals)
					if err != nil {
						b.Fatal(err)
					}
					cancel()
					L.Close()
				}
			})
			// One state for the steps measured alone, with a deadline that outlives the benchmark
			// (Argo CD's is 1 s per evaluation).
			L, cancel, err := State(v.OpenLibs, time.Hour, vm.ExtraGlobals)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(prefix+"convert", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					ToLua(L, s.Objs[i%len(s.Objs)].Object)
				}
			})
			b.Run(prefix+"parse", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := parse.Parse(strings.NewReader(script), "<string>"); err != nil {
						b.Fatal(err)
					}
				}
			})
			// parse-code is parse with the long strings emptied: the code alone, without the bytes of the
			// lazily compiled chunks that the lexer reads on every parse.
			code, _ := EmptyLongStrings(script)
			b.Run(prefix+"parse-code", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := parse.Parse(strings.NewReader(code), "<string>"); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(prefix+"compile", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := lua.Compile(chunk, "<string>"); err != nil {
						b.Fatal(err)
					}
				}
			})
			objs := make([]lua.LValue, len(s.Objs))
			for i, o := range s.Objs {
				objs[i] = ToLua(L, o.Object)
			}
			run := func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					L.SetGlobal("obj", objs[i%len(objs)])
					L.Push(L.NewFunctionFromProto(proto))
					if err := L.PCall(0, lua.MultRet, nil); err != nil {
						b.Fatal(err)
					}
					L.SetTop(0)
				}
			}
			b.Run(prefix+"run", run)
			loadstring := L.GetGlobal("loadstring")
			L.SetGlobal("loadstring", L.NewFunction(CachedLoadstring()))
			b.Run(prefix+"run-cached", run)
			L.SetGlobal("loadstring", loadstring)
			var results []lua.LValue
			for _, o := range objs {
				L.SetGlobal("obj", o)
				L.Push(L.NewFunctionFromProto(proto))
				if err := L.PCall(0, lua.MultRet, nil); err != nil {
					b.Fatal(err)
				}
				results = append(results, L.Get(-1))
				L.SetTop(0)
			}
			b.Run(prefix+"result", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					raw, err := luajson.Encode(results[i%len(results)])
					if err != nil {
						b.Fatal(err)
					}
					// An empty table encodes as [], which Argo CD's ExecuteHealthLua, too, fails to
					// unmarshal and then treats as no health.
					_ = vm.DecodeHealth(raw)
				}
			})
			cancel()
			L.Close()
		}
	}
}

// WorstCase evaluates the largest objects a cluster plausibly holds (internal/bench/worstcase), each through
// Argo CD's real path, ours, the built-in and the floor (which is what Argo CD's VM spends on such an
// object before any script runs), the variants taking turns of one evaluation: <object>, with
// <variant>-cpu-ns/op and <variant>-allocs/op. The target is at most 10 ms each. One evaluation is tens of
// milliseconds, long enough that a turn sees a steady machine; the garbage each leaves is mostly the
// object's conversion, alike in every variant, so what spills into the next turn is alike too.
func WorstCase(b *testing.B, vm VM) {
	variants, err := Variants(vm)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range worstcase.Objects() {
		objs := []*unstructured.Unstructured{{Object: w.Object}}
		b.Run(w.Name, func(b *testing.B) { reportTurns(b, 1, variants, objs) })
	}
}

// cpuPerOp reports the process's CPU time per op (user and system, GC workers included) as cpu-ns/op, the
// figure docs/performance.md compares: on a machine shared with other work, wall time per op mostly
// measures the waiting. Call it as `defer cpuPerOp(b)()` right before the loop.
func cpuPerOp(b *testing.B) func() {
	start := processCPU()
	return func() {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
