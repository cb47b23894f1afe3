package verify

import (
	"io/fs"
	"runtime"
	"sort"
	"time"
)

// BenchResult is the cost of one script per evaluation on its test objects, beside the VM floor: a script
// that returns at once, on the same objects (state set-up, conversion of the object into Lua, reading the
// result).
type BenchResult struct {
	Path                        string
	Role                        Role
	Objects                     int
	NsPerOp, AllocsPerOp        float64
	FloorNsPerOp, FloorAllocsOp float64
}

// floorScripts return at once, with the kind of value the role must return.
var floorScripts = map[Role]string{
	RoleHealth:    `return {status = "Healthy"}`,
	RoleDiscovery: `return {}`,
	RoleAction:    `return obj`,
}

// Bench measures every script with test objects, n evaluations per object.
func Bench(fsys fs.FS, eng Engine, healthOpenLibs bool, n int) ([]BenchResult, error) {
	scripts, err := Scripts(fsys)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		n = 100
	}
	var out []BenchResult
	for _, s := range scripts {
		objs, err := seedObjects(fsys, s.Group, s.Kind)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			continue
		}
		paths := make([]string, 0, len(objs))
		for p := range objs {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		e := eng.vm()
		e.OpenLibs = s.Role == RoleHealth && healthOpenLibs
		params := actionParams(fsys, s, e)
		run := func(src string, obj map[string]any) {
			switch s.Role {
			case RoleHealth:
				_, _ = e.Health(obj, src)
			case RoleDiscovery:
				_, _ = e.Discover(obj, src)
			default:
				_, _ = e.RunAction(obj, src, params)
			}
		}
		r := BenchResult{Path: s.Path, Role: s.Role, Objects: len(paths)}
		r.NsPerOp, r.AllocsPerOp = measure(n, paths, objs, s.Source, run)
		r.FloorNsPerOp, r.FloorAllocsOp = measure(n, paths, objs, floorScripts[s.Role], run)
		out = append(out, r)
	}
	return out, nil
}

func measure(n int, paths []string, objs map[string]map[string]any, src string, run func(string, map[string]any)) (ns, allocs float64) {
	for _, p := range paths {
		run(src, objs[p]) // compile and warm up outside the measurement
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range n {
		for _, p := range paths {
			run(src, objs[p])
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	ops := float64(n * len(paths))
	return float64(elapsed.Nanoseconds()) / ops, float64(after.Mallocs-before.Mallocs) / ops
}
