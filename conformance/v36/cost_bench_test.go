package v36

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	luajson "layeh.com/gopher-json"
	"sigs.k8s.io/yaml"

	builtins "github.com/argoproj/argo-cd/v3/resource_customizations"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/worstcase"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

// The cost benchmarks in Argo CD v3.6.1's VM, the counterpart of conformance/cost_bench_test.go (v2.14):
// the same sets, variants and phases (`make bench`; docs/performance.md is rendered from their output by
// internal/benchdoc). v3.6 compiles each script once into a process-wide cache (util/lua
// compiledScriptCache), so an evaluation is setup, conversion, run and result; parse and compile are
// measured as the one-time cost they are. One evaluation per op through v3.6.1's real controller path
// (gitops-engine GetResourceHealth → util/lua ResourceHealthOverrides), per kind and path:
//   - steady: a Rollout with no analysis in flight, a Successful AnalysisRun or Experiment;
//   - inflight: analysis running or pending, an experiment running;
//   - failed: a Degraded verdict, or an inconclusive one;
//   - legacy: a Rollout of a controller older than v1.0 (no status.phase).
// Variants on the same objects: ours (the form the generator emits for --argocd-version v3.6), builtin
// (Argo CD's own scripts, with every library opened, as Argo CD does for them) and floor (a one-line
// argocd-cm script: the VM, the conversion of the object and the handling of the result).

// argocdVersion is the Argo CD whose VM this module runs.
const argocdVersion = "v3.6"

type costSet struct {
	kind, path string
	objs       []*unstructured.Unstructured
}

func (s costSet) name() string { return s.kind + "/" + s.path }

// costSets groups every fixture Argo CD's built-in scripts evaluate without a Lua error (some action
// fixtures lack metadata.generation, on which the built-in Rollout script fails) by kind and path; the
// path is decided by our script's verdict on the source, so every variant runs on the same objects.
func costSets(b *testing.B) []costSet {
	b.Helper()
	byName := map[string]*costSet{}
	var order []string
	for _, fx := range fixtures(b) {
		obj := unstructuredFrom(b, fx.Raw)
		if _, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides{}); err != nil {
			continue
		}
		src, err := ahlua.Health(fx.Kind.Group, fx.Kind.Kind)
		if err != nil {
			b.Fatal(err)
		}
		h, err := engine.Engine{Profile: engine.V36}.Health(obj.Object, src)
		if err != nil {
			b.Fatalf("%s: %v", fx.Path, err)
		}
		s := costSet{kind: fx.Kind.Kind, path: costPath(fx.Kind.Kind, obj, h)}
		if byName[s.name()] == nil {
			byName[s.name()] = &s
			order = append(order, s.name())
		}
		byName[s.name()].objs = append(byName[s.name()].objs, obj)
	}
	var out []costSet
	for _, k := range ahlua.Kinds() {
		for _, p := range []string{"steady", "inflight", "failed", "legacy"} {
			if s := byName[k.Kind+"/"+p]; s != nil {
				out = append(out, *s)
			}
		}
	}
	return out
}

func costPath(kind string, obj *unstructured.Unstructured, h engine.Health) string {
	if phase, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "phase"); kind == "Rollout" && (phase == nil || phase == "") {
		return "legacy"
	}
	if h.Status == engine.Degraded || strings.Contains(strings.ToLower(h.Message), "inconclusive") {
		return "failed"
	}
	if kind == "Rollout" {
		if len(steady([]*unstructured.Unstructured{obj})) == 1 {
			return "steady"
		}
		return "inflight"
	}
	if h.Status == engine.Healthy {
		return "steady"
	}
	return "inflight"
}

type costVariant struct {
	name     string
	ov       argolua.ResourceHealthOverrides
	openLibs bool
	scripts  map[string]string // by kind
}

func costVariants(b *testing.B) []costVariant {
	b.Helper()
	ours, floor, builtin := map[string]string{}, map[string]string{}, map[string]string{}
	oursData, floorData := map[string]string{}, map[string]string{}
	for _, k := range ahlua.Kinds() {
		s, err := generator.Script(k, generator.Options{ArgoCDVersion: argocdVersion})
		if err != nil {
			b.Fatal(err)
		}
		ours[k.Kind] = s
		oursData[generator.HealthKey(k)] = s
		floor[k.Kind] = `return {status="Healthy"}`
		floorData[generator.HealthKey(k)] = floor[k.Kind]
		raw, err := builtins.Embedded.ReadFile(k.Key() + "/health.lua")
		if err != nil {
			b.Fatal(err)
		}
		builtin[k.Kind] = string(raw)
	}
	oursOv, err := overridesFromConfigMap(b, oursData)
	if err != nil {
		b.Fatal(err)
	}
	floorOv, err := overridesFromConfigMap(b, floorData)
	if err != nil {
		b.Fatal(err)
	}
	return []costVariant{
		{"ours", argolua.ResourceHealthOverrides(oursOv), false, ours},
		{"builtin", argolua.ResourceHealthOverrides{}, true, builtin},
		{"floor", argolua.ResourceHealthOverrides(floorOv), false, floor},
	}
}

// BenchmarkCost is one evaluation per op, cycling over a set's objects, in Argo CD's own code.
func BenchmarkCost(b *testing.B) {
	sets, variants := costSets(b), costVariants(b)
	for _, s := range sets {
		for _, v := range variants {
			b.Run(s.name()+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := health.GetResourceHealth(s.objs[i%len(s.objs)], v.ov); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPhases splits an evaluation into the steps Argo CD v3.6.1's util/lua
// runLuaWithResourceActionParameters and ExecuteHealthLua take, each measured alone with the same
// gopher-lua calls:
//   - setup: lua.NewState, the four library openers Argo CD calls, the os preload, the 1 s context, the
//     actionParams table, Close;
//   - convert: the object into Lua tables (the decodeValue conversion);
//   - parse and compile: the main chunk's source to a FunctionProto (once per process in v3.6: cached);
//   - run: the compiled chunk, lazily compiled chunks included;
//   - lazy: of run, the part spent compiling `loadstring` chunks (run minus a run whose loadstring
//     returns cached prototypes);
//   - result: the returned table to JSON and into a HealthStatus.
func BenchmarkPhases(b *testing.B) {
	sets, variants := costSets(b), costVariants(b)
	for _, s := range sets {
		for _, v := range variants {
			script := v.scripts[s.kind]
			chunk, err := parse.Parse(strings.NewReader(script), "<string>")
			if err != nil {
				b.Fatal(err)
			}
			proto, err := lua.Compile(chunk, "<string>")
			if err != nil {
				b.Fatal(err)
			}
			prefix := s.name() + "/" + v.name + "/"
			b.Run(prefix+"setup", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					L, cancel := argoState(v.openLibs, time.Second)
					cancel()
					L.Close()
				}
			})
			// One state for the steps measured alone, with a deadline that outlives the benchmark
			// (Argo CD's is 1 s per evaluation).
			L, cancel := argoState(v.openLibs, time.Hour)
			b.Run(prefix+"convert", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					toLuaValue(L, s.objs[i%len(s.objs)].Object)
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
			b.Run(prefix+"compile", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := lua.Compile(chunk, "<string>"); err != nil {
						b.Fatal(err)
					}
				}
			})
			objs := make([]lua.LValue, len(s.objs))
			for i, o := range s.objs {
				objs[i] = toLuaValue(L, o.Object)
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
			L.SetGlobal("loadstring", L.NewFunction(cachedLoadstring()))
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
					var hs health.HealthStatus
					_ = json.Unmarshal(raw, &hs)
				}
			})
			cancel()
			L.Close()
		}
	}
}

// argoState is the state Argo CD v3.6.1's runLuaWithResourceActionParameters prepares before it sets obj.
func argoState(openLibs bool, timeout time.Duration) (*lua.LState, context.CancelFunc) {
	L := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.OsLibName, safeOsStandIn}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			panic(err)
		}
	}
	L.PreloadModule(lua.OsLibName, safeOsStandIn)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	L.SetContext(ctx)
	L.SetGlobal("actionParams", L.CreateTable(0, 0))
	return L, cancel
}

// safeOsStandIn costs what Argo CD's OpenSafeOs costs: a module table of two functions registered under
// the table library's name.
func safeOsStandIn(L *lua.LState) int {
	mod := L.RegisterModule(lua.TabLibName, map[string]lua.LGFunction{
		"time": func(*lua.LState) int { return 0 },
		"date": func(*lua.LState) int { return 0 },
	})
	L.Push(mod)
	return 1
}

// toLuaValue converts as Argo CD's decodeValue does (engine's conversion, proven equal by the fixtures).
func toLuaValue(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(toLuaValue(L, item))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetH(lua.LString(k), toLuaValue(L, item))
		}
		return t
	}
	return lua.LNil
}

// cachedLoadstring is loadstring with compiled prototypes kept by source, to separate the lazily
// compiled chunks' parse from their run.
func cachedLoadstring() lua.LGFunction {
	protos := map[string]*lua.FunctionProto{}
	return func(L *lua.LState) int {
		src := L.CheckString(1)
		p, ok := protos[src]
		if !ok {
			fn, err := L.LoadString(src)
			if err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString(err.Error()))
				return 2
			}
			p = fn.Proto
			protos[src] = p
		}
		L.Push(L.NewFunctionFromProto(p))
		return 1
	}
}

// BenchmarkWorstCase evaluates the largest objects a cluster plausibly holds (lua/worstcase), each
// through Argo CD's real path, ours, the built-in and the floor (which is what Argo CD's VM spends on such
// an object before any script runs); the target is at most 10 ms each.
func BenchmarkWorstCase(b *testing.B) {
	variants := costVariants(b)
	for _, w := range worstcase.Objects() {
		obj := &unstructured.Unstructured{Object: w.Object}
		for _, v := range variants {
			b.Run(fmt.Sprintf("%s/%s", w.Name, v.name), func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := 0; i < b.N; i++ {
					if _, err := health.GetResourceHealth(obj, v.ov); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// overridesFromConfigMap loads argocd-cm data through v3.6's SettingsManager, as the controller does.
func overridesFromConfigMap(b testing.TB, data map[string]string) (map[string]v1alpha1.ResourceOverride, error) {
	b.Helper()
	labels := map[string]string{"app.kubernetes.io/part-of": "argocd"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd", Labels: labels}, Data: data}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: "argocd", Labels: labels},
		Data: map[string][]byte{"server.secretkey": []byte("test")}}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return settings.NewSettingsManager(ctx, fake.NewClientset(cm, secret), "argocd").GetResourceOverrides()
}

func unstructuredFrom(b testing.TB, raw []byte) *unstructured.Unstructured {
	b.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		b.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func fixtures(b testing.TB) []ahlua.Fixture {
	b.Helper()
	fx, err := ahlua.Fixtures()
	if err != nil || len(fx) == 0 {
		b.Fatalf("fixtures: %v (%d)", err, len(fx))
	}
	return fx
}

// steady picks the Rollouts with no analysis in flight, failed or inconclusive (as conformance/'s).
func steady(rollouts []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, r := range rollouts {
		quiet := true
		for _, f := range [][]string{
			{"status", "canary", "currentStepAnalysisRunStatus", "status"},
			{"status", "canary", "currentBackgroundAnalysisRunStatus", "status"},
			{"status", "blueGreen", "prePromotionAnalysisRunStatus", "status"},
			{"status", "blueGreen", "postPromotionAnalysisRunStatus", "status"},
		} {
			if v, found, _ := unstructured.NestedString(r.Object, f...); found && v != "Successful" {
				quiet = false
			}
		}
		if v, _, _ := unstructured.NestedString(r.Object, "status", "canary", "currentExperiment"); v != "" {
			quiet = false
		}
		conds, _, _ := unstructured.NestedSlice(r.Object, "status", "pauseConditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && (m["reason"] == "InconclusiveAnalysisRun" || m["reason"] == "InconclusiveExperiment") {
				quiet = false
			}
		}
		if quiet {
			out = append(out, r)
		}
	}
	return out
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
