package verify

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// recorder is a tester that records what Test reports instead of failing.
type recorder struct {
	name   string
	report map[string][]string // subtest name -> errors
}

type fatal struct{}

// skipped ends a subtest as testing.T's Skipf does; the recorder notes it under "skip: ".
type skipped struct{}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.add(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.add(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.add(fmt.Sprint(args...)); panic(fatal{}) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
	panic(fatal{})
}
func (r *recorder) Skipf(format string, args ...any) {
	r.report["skip: "+r.name] = append(r.report["skip: "+r.name], fmt.Sprintf(format, args...))
	panic(skipped{})
}
func (r *recorder) add(msg string) { r.report[r.name] = append(r.report[r.name], msg) }
func (r *recorder) Run(name string, f func(tester)) bool {
	sub := &recorder{name: strings.TrimPrefix(r.name+"/"+name, "/"), report: r.report}
	r.report[sub.name] = r.report[sub.name]
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(skipped); !ok {
					panic(p)
				}
			}
		}()
		f(sub)
	}()
	return len(r.report[sub.name]) == 0
}

func record(fsys fstest.MapFS, opts Options) (report map[string][]string) {
	r := &recorder{report: map[string][]string{}}
	report = r.report
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(fatal); !ok {
				panic(p)
			}
		}
	}()
	run(r, fsys, opts)
	return r.report
}

func mapFS(dir string) fstest.MapFS {
	out := fstest.MapFS{}
	root := os.DirFS(dir)
	entries, _ := readAll(root)
	for p, b := range entries {
		out[p] = &fstest.MapFile{Data: b}
	}
	return out
}

func names(report map[string][]string) []string {
	var out []string
	for k := range report {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestTestSubtestsAndFailures(t *testing.T) {
	fsys := mapFS("testdata/example")
	// One case made to fail: the expectation says Degraded, the script says Healthy.
	fsys["example.com/Widget/health_test.yaml"].Data = []byte(strings.Replace(string(fsys["example.com/Widget/health_test.yaml"].Data), "status: Healthy", "status: Degraded", 1))
	rep := record(fsys, Options{Fuzz: 5, Timeout: 30 * time.Second})
	want := []string{
		"example.com/Widget/discovery/widget.yaml",
		"example.com/Widget/fuzz/actions/discovery.lua",
		"example.com/Widget/fuzz/actions/restart/action.lua",
		"example.com/Widget/fuzz/health.lua",
		"example.com/Widget/health/failed.yaml",
		"example.com/Widget/health/new.yaml",
		"example.com/Widget/health/ready.yaml",
		"example.com/Widget/lint/actions/discovery.lua",
		"example.com/Widget/lint/actions/restart/action.lua",
		"example.com/Widget/lint/health.lua",
		"example.com/Widget/restart/widget.yaml",
	}
	if got := names(rep); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("subtests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, n := range want {
		msgs := rep[n]
		if n == "example.com/Widget/health/ready.yaml" {
			if len(msgs) != 1 || !strings.Contains(msgs[0], `want Degraded "serving", got Healthy "serving"`) {
				t.Errorf("%s: want the expected and actual health, got %q", n, msgs)
			}
			continue
		}
		if len(msgs) != 0 {
			t.Errorf("%s failed: %q", n, msgs)
		}
	}
}

func TestTestReportsLintAndFuzzFindings(t *testing.T) {
	rep := record(mapFS("testdata/buggy"), Options{Fuzz: 20, Timeout: 30 * time.Second})
	lint := rep["example.com/Gadget/lint/health.lua"]
	if len(lint) != 3 || !strings.HasPrefix(lint[1], "example.com/Gadget/health.lua:4: stdlib: string.find") {
		t.Errorf("lint findings: %q", lint)
	}
	fuzz := strings.Join(rep["example.com/Gadget/fuzz/health.lua"], "\n")
	if !strings.Contains(fuzz, "lua-error: <string>:2: attempt to index a non-table object(nil) with key 'phase'") ||
		!strings.Contains(fuzz, "smallest object:\napiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n\n") {
		t.Errorf("fuzz findings: %q", fuzz)
	}
	if rep["example.com/Gadget/health/ready.yaml"] != nil {
		t.Errorf("the passing case failed: %q", rep["example.com/Gadget/health/ready.yaml"])
	}
}

func TestTestFailsAtOnceOnBadTrees(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		opts Options
		want string
	}{
		{"no suites", fstest.MapFS{"g/K/health.lua": {Data: []byte("return {}")}}, Options{}, "no health_test.yaml or action_test.yaml found: nothing to test"},
		{"bad version", mapFS("testdata/example"), Options{ArgoCD: "v9"}, `unknown Argo CD version "v9"`},
		{"syntax error", fstest.MapFS{
			"g/K/health.lua":       {Data: []byte("local x = \nreturn {status = }")},
			"g/K/health_test.yaml": {Data: []byte("tests: []")},
		}, Options{}, "g/K/health.lua:2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := record(tc.fsys, tc.opts)
			if msgs := rep[""]; len(msgs) != 1 || !strings.Contains(msgs[0], tc.want) {
				t.Errorf("want one fatal error containing %q, got %q", tc.want, rep)
			}
		})
	}
}

// A suite without its script (Argo CD's trees ship one) is not run, as in Argo CD's own test, and says
// so; it is no failure, and the rest of the tree runs.
func TestSuiteWithoutScript(t *testing.T) {
	fsys := mapFS("testdata/example")
	fsys["example.com/Orphan/health_test.yaml"] = &fstest.MapFile{Data: []byte("tests:\n- healthStatus: {status: Healthy}\n  inputPath: testdata/x.yaml\n")}
	fsys["example.com/Orphan/testdata/x.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: example.com/v1\nkind: Orphan\nmetadata: {name: x}\n")}
	rep, err := Runner{}.Tree(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	passed, failed := rep.Counts()
	notRun := rep.NotRun()
	if passed != 5 || failed != 0 || len(notRun) != 1 || !strings.Contains(notRun[0], "example.com/Orphan/health_test.yaml: tests[0] (testdata/x.yaml): no health.lua beside the suite") {
		t.Errorf("%d passed, %d failed, not run %q", passed, failed, notRun)
	}
}
