package verify

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
)

// FindingKind classifies what a mutated object made a script do.
type FindingKind string

const (
	// LuaError: the script raised a runtime error (Argo CD: ComparisonError, resource health Unknown, or a
	// failed action or actions menu).
	LuaError FindingKind = "lua-error"
	// Timeout: the script ran past Argo CD's 1 s deadline.
	Timeout FindingKind = "timeout"
	// NonTable: the script returned something other than a table.
	NonTable FindingKind = "non-table"
	// InvalidStatus: a health status outside Argo CD's six, which Argo CD turns into Unknown.
	InvalidStatus FindingKind = "invalid-status"
	// UnknownStatus: health Unknown, where the script's suite never expects it.
	UnknownStatus FindingKind = "unknown"
	// NoStatus: an empty health (nil, {} or a non-string message), where the suite never expects one; Argo
	// CD v2.14 and v3.2 then ignore the resource in the application's health.
	NoStatus FindingKind = "no-status"
)

// FindingKinds lists the kinds in report order.
var FindingKinds = []FindingKind{LuaError, Timeout, NonTable, InvalidStatus, UnknownStatus, NoStatus}

// pinned are the fields a script always sees intact: Argo CD picks the script by apiVersion and kind, and
// the API server validates metadata.
var pinned = []string{"apiVersion", "kind", "metadata"}

// FuzzOptions configures Fuzz.
type FuzzOptions struct {
	// Engine is the VM profile; its OpenLibs is ignored (see HealthOpenLibs).
	Engine Engine
	// HealthOpenLibs runs health scripts with open libraries (built-ins, useOpenLibs); discovery and
	// actions never get them in Argo CD.
	HealthOpenLibs bool
	// N is the number of mutations per script and test object.
	N int
	// Seed makes a run reproducible: each script draws from Seed and its own path, so adding a script
	// does not change what the others see.
	Seed int64
	// MinimizeBudget bounds the evaluations spent shrinking each finding's object (default 150).
	MinimizeBudget int
	// Progress, when set, is called every ProgressInterval while Fuzz runs and once when it is done, never
	// twice at once, with the mutations evaluated so far and the mutations planned (the shrinking of
	// findings comes on top): a run of a few hundred mutations per object takes tens of seconds.
	Progress func(done, total int)
	// ProgressInterval is how often Progress is called; zero is 2 s.
	ProgressInterval time.Duration
}

// FuzzFinding is one distinct failure of one script: same kind, same message.
type FuzzFinding struct {
	Script  string
	Kind    FindingKind
	Message string
	// Hits counts the mutations that produced it; Cases in FuzzScript is the total.
	Hits int
	// From is the test object the mutation started from.
	From string
	// Object is the smallest mutated object found that still produces it.
	Object map[string]any
}

// Summary is the finding's one-line form.
func (f FuzzFinding) Summary() string {
	return fmt.Sprintf("%s: %s: %s (%d mutations of %s)", f.Script, f.Kind, f.Message, f.Hits, f.From)
}

// FuzzScript is one script's result.
type FuzzScript struct {
	Path string
	Role Role
	// Seeds is the number of test objects mutated; Cases the number of evaluations.
	Seeds, Cases int
	Findings     []FuzzFinding
}

// FuzzReport is a whole tree's result, scripts sorted by path.
type FuzzReport struct {
	Scripts []FuzzScript
}

// Findings lists every finding, in script order.
func (r FuzzReport) Findings() []FuzzFinding {
	var out []FuzzFinding
	for _, s := range r.Scripts {
		out = append(out, s.Findings...)
	}
	return out
}

// Cases is the total number of evaluations.
func (r FuzzReport) Cases() int {
	n := 0
	for _, s := range r.Scripts {
		n += s.Cases
	}
	return n
}

// Fuzz mutates every test object the tree's suites name for a kind and runs each of that kind's scripts
// on the mutations, in the sandbox Argo CD gives the script.
func Fuzz(fsys fs.FS, opts FuzzOptions) (FuzzReport, error) {
	scripts, err := Scripts(fsys)
	if err != nil {
		return FuzzReport{}, err
	}
	if opts.N <= 0 {
		opts.N = 1
	}
	if opts.MinimizeBudget <= 0 {
		opts.MinimizeBudget = 150
	}
	type kindSeeds struct {
		objs  map[string]map[string]any
		pool  []string
		paths []string
	}
	seeds := map[string]*kindSeeds{}
	for _, s := range scripts {
		if seeds[s.Key()] != nil {
			continue
		}
		objs, err := seedObjects(fsys, s.Group, s.Kind)
		if err != nil {
			return FuzzReport{}, err
		}
		ks := &kindSeeds{objs: objs}
		var all []map[string]any
		for p, o := range objs {
			ks.paths = append(ks.paths, p)
			all = append(all, o)
		}
		sort.Strings(ks.paths)
		ks.pool = append(mutate.Strings(all...), engine.Healthy, engine.Degraded, "Failed", "Error", "Unknown", "True", "False")
		seeds[s.Key()] = ks
	}

	total := 0
	for _, s := range scripts {
		total += len(seeds[s.Key()].paths) * opts.N
	}
	var done atomic.Int64
	stop := reportProgress(opts, &done, total)
	defer stop()

	results := make([]FuzzScript, len(scripts))
	var wg sync.WaitGroup
	work := make(chan int)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				ks := seeds[scripts[i].Key()]
				results[i] = fuzzScript(fsys, scripts[i], ks.paths, ks.objs, ks.pool, opts, &done)
			}
		}()
	}
	for i := range scripts {
		work <- i
	}
	close(work)
	wg.Wait()
	return FuzzReport{Scripts: results}, nil
}

// reportProgress calls opts.Progress every interval from its own goroutine until the returned stop, which
// makes the last call itself once that goroutine is gone, so that calls never overlap.
func reportProgress(opts FuzzOptions, done *atomic.Int64, total int) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	every := opts.ProgressInterval
	if every <= 0 {
		every = 2 * time.Second
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				opts.Progress(int(done.Load()), total)
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
		opts.Progress(int(done.Load()), total)
	}
}

// Evaluator runs one script on an object and says what, if anything, is wrong with the outcome.
type Evaluator func(obj map[string]any) (FindingKind, string)

// NewEvaluator builds the check Fuzz applies to script s, under the suites' expectations found in fsys.
func NewEvaluator(fsys fs.FS, s ScriptFile, e Engine, healthOpenLibs bool) Evaluator {
	eng := e.vm()
	eng.OpenLibs = false
	switch s.Role {
	case RoleHealth:
		eng.OpenLibs = healthOpenLibs
		expectUnknown, expectEmpty := HealthExpectations(fsys, s)
		skipDeleted := !healthOnDeletion(eng.Profile)
		return func(obj map[string]any) (FindingKind, string) {
			if skipDeleted && deleting(obj, eng.Profile) {
				// gitops-engine's GetResourceHealth answers "Pending deletion" without running the script.
				return "", ""
			}
			h, err := eng.Execute(obj, s.Source)
			switch {
			case err != nil:
				return Classify(err, false)
			case h == nil:
				// v3.6: a nil result is "no health" on purpose; gitops-engine's Go checks apply.
				return "", ""
			}
			return ClassifyHealth(h.Status, h.Message, expectUnknown, expectEmpty)
		}
	case RoleDiscovery:
		return func(obj map[string]any) (FindingKind, string) {
			if _, err := eng.Discover(obj, s.Source); err != nil {
				return Classify(err, false)
			}
			return "", ""
		}
	default:
		params := actionParams(fsys, s, eng)
		return func(obj map[string]any) (FindingKind, string) {
			if _, err := eng.RunAction(obj, s.Source, params); err != nil {
				// An action may refuse an object with error(); only the VM's own errors are findings.
				return Classify(err, true)
			}
			return "", ""
		}
	}
}

func fuzzScript(fsys fs.FS, s ScriptFile, paths []string, objs map[string]map[string]any, pool []string, opts FuzzOptions, done *atomic.Int64) FuzzScript {
	res := FuzzScript{Path: s.Path, Role: s.Role, Seeds: len(paths)}
	eval := NewEvaluator(fsys, s, opts.Engine, opts.HealthOpenLibs)
	h := fnv.New64a()
	h.Write([]byte(s.Path))
	rng := rand.New(rand.NewSource(opts.Seed ^ int64(h.Sum64())))
	type key struct {
		kind FindingKind
		msg  string
	}
	found := map[key]*FuzzFinding{}
	var order []key
	for _, p := range paths {
		for range opts.N {
			m := mutate.FromRand(rng)
			m.Strings = pool
			obj := m.Object(mutate.DeepCopy(objs[p]).(map[string]any), pinned...)
			res.Cases++
			kind, msg := eval(obj)
			done.Add(1)
			if kind == "" {
				continue
			}
			k := key{kind, msg}
			if f := found[k]; f != nil {
				f.Hits++
				continue
			}
			found[k] = &FuzzFinding{Script: s.Path, Kind: kind, Message: msg, Hits: 1, From: p, Object: obj}
			order = append(order, k)
		}
	}
	for _, k := range order {
		f := found[k]
		budget := opts.MinimizeBudget
		if f.Kind == Timeout {
			budget = 0 // every try would cost Argo CD's full deadline
		}
		keep := func(o map[string]any) bool {
			kind, msg := eval(o)
			return kind == f.Kind && msg == f.Message
		}
		f.Object = mutate.Minimize(f.Object, pinned, keep, budget)
		// Metadata is never mutated, but most of it is optional: keep only the name and namespace if the
		// finding stays.
		if budget > 0 {
			if short := shortMetadata(f.Object); short != nil && keep(short) {
				f.Object = short
			}
		}
		res.Findings = append(res.Findings, *f)
	}
	return res
}

func shortMetadata(obj map[string]any) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	short := map[string]any{}
	for _, k := range []string{"name", "namespace"} {
		if v, ok := meta[k]; ok {
			short[k] = v
		}
	}
	if len(short) == len(meta) {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	out["metadata"] = short
	return out
}

// runtimeError matches the errors gopher-lua's VM raises itself, as opposed to a script's own error().
var runtimeError = regexp.MustCompile(`^(<string>:\d+: )?(attempt to |cannot perform |bad argument #|table index is |stack overflow|too many recursions|invalid value \(|for statement |__len undefined|__unm undefined|wrong number of arguments)`)

// healthOnDeletion says whether the release runs health scripts on an object being deleted: v2.14 and
// v3.2 report Progressing "Pending deletion" first (gitops-engine pkg/health GetResourceHealth); v3.6
// runs the script (#27595).
func healthOnDeletion(p engine.Profile) bool {
	return p.AtLeast(engine.V36)
}

// deleting says whether Argo CD answers "Pending deletion" for obj; v3 still runs the script for a hook it
// holds with its hook finalizer (gitops-engine pkg/sync/hook HasHookFinalizer).
func deleting(obj map[string]any, p engine.Profile) bool {
	meta, _ := obj["metadata"].(map[string]any)
	if meta["deletionTimestamp"] == nil {
		return false
	}
	if p.AtLeast(engine.V32) {
		finalizers, _ := meta["finalizers"].([]any)
		for _, f := range finalizers {
			if f == "argocd.argoproj.io/hook-finalizer" {
				return false
			}
		}
	}
	return true
}

// ClassifyHealth says what is wrong, if anything, with a health a script returned, given whether its suite
// expects Unknown or an empty status somewhere.
func ClassifyHealth(status, message string, expectUnknown, expectEmpty bool) (FindingKind, string) {
	switch {
	case status == engine.Unknown && message == "Lua returned an invalid health status":
		return InvalidStatus, message
	case status == engine.Unknown && !expectUnknown:
		return UnknownStatus, "Unknown: " + message
	case status == "" && !expectEmpty:
		return NoStatus, "no health status"
	}
	return "", ""
}

// Classify names the finding an evaluation error is. With onlyRuntime (actions), an error the script
// raised itself with error() is its answer, not a finding: only the VM's own errors, timeouts and wrong
// return types are.
func Classify(err error, onlyRuntime bool) (FindingKind, string) {
	msg := WithoutTraceback(err.Error())
	switch {
	case strings.Contains(msg, "context deadline exceeded"):
		return Timeout, msg
	case strings.HasPrefix(msg, "expect ") && strings.Contains(msg, " output from Lua script, not "):
		return NonTable, msg
	case onlyRuntime && !runtimeError.MatchString(msg):
		return "", ""
	}
	return LuaError, msg
}

// HealthExpectations says whether the script's own suite expects Unknown, or no status, for some case:
// then those outcomes are the author's intent, not findings.
func HealthExpectations(fsys fs.FS, s ScriptFile) (unknown, empty bool) {
	raw, err := fs.ReadFile(fsys, strings.TrimSuffix(s.Path, "health.lua")+"health_test.yaml")
	if err != nil {
		return false, false
	}
	var suite HealthSuite
	if yaml.Unmarshal(raw, &suite) != nil {
		return false, false
	}
	for _, tc := range suite.Tests {
		unknown = unknown || tc.HealthStatus.Status == engine.Unknown
		empty = empty || tc.HealthStatus.Status == ""
	}
	return unknown, empty
}

// ActionParams are the parameters the suite passes to this action first, under a profile that has them;
// fuzzing and benchmarks call the action with them.
func ActionParams(fsys fs.FS, s ScriptFile, eng Engine) map[string]string {
	return actionParams(fsys, s, eng.vm())
}

func actionParams(fsys fs.FS, s ScriptFile, eng engine.Engine) map[string]string {
	if !eng.Profile.AtLeast(engine.V32) {
		return nil
	}
	dir := strings.TrimSuffix(s.Path, s.Action+"/action.lua")
	raw, err := fs.ReadFile(fsys, dir+"action_test.yaml")
	if err != nil {
		return nil
	}
	var suite ActionSuite
	if yaml.Unmarshal(raw, &suite) != nil {
		return nil
	}
	for _, tc := range suite.ActionTests {
		if tc.Action == s.Action && len(tc.Parameters) > 0 {
			return tc.Parameters
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteFindings writes each finding's object as YAML into dir (created if needed), one file per finding
// named after the script and the finding, and returns the paths. Nothing is written outside dir, and
// nothing already there is overwritten or followed: dir may be a shared folder (/tmp/crashers) where
// someone else planted a symbolic link at a name this predicts, so each file is created with O_EXCL
// (which refuses any existing name, a symbolic link included, even one to nothing: POSIX open(2)), and a
// name in use takes the next number.
func WriteFindings(dir string, findings []FuzzFinding) ([]string, error) {
	if len(findings) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	next := map[string]int{}
	for _, f := range findings {
		base := strings.TrimLeft(unsafeName.ReplaceAllString(strings.ReplaceAll(f.Script, "/", "_"), "_"), ".")
		base = strings.TrimSuffix(base, ".lua") + "." + string(f.Kind)
		body, err := yaml.Marshal(f.Object)
		if err != nil {
			return out, err
		}
		header := fmt.Sprintf("# %s: %s: %s\n", f.Script, f.Kind, strings.ReplaceAll(f.Message, "\n", " "))
		p, err := createNew(dir, base, next, append([]byte(header), body...))
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// createNew writes data to dir/base.N.yaml for the first N from next[base] (1 at first) whose name is
// free, and records the N after it.
func createNew(dir, base string, next map[string]int, data []byte) (string, error) {
	for n := max(next[base], 1); ; n++ {
		p := filepath.Join(dir, fmt.Sprintf("%s.%d.yaml", base, n))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		next[base] = n + 1
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(p)
			return "", err
		}
		return p, nil
	}
}
