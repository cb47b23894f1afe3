package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// Options configures Test.
type Options struct {
	// ArgoCD is the Argo CD version whose Lua VM to reproduce, as ParseProfile reads it ("v2.14",
	// "v3"); empty means DefaultArgoCD.
	ArgoCD string
	// OpenLibs runs the health scripts with open libraries, as Argo CD does for its built-in scripts and
	// for argocd-cm with resource.customizations.useOpenLibs.<group>_<Kind>: "true". Discovery and action
	// scripts never get them, in Argo CD or here.
	OpenLibs bool
	// Fuzz is the number of mutations per script and test object; 0 turns fuzzing off.
	Fuzz int
	// Seed makes fuzzing reproducible.
	Seed int64
	// SkipLint turns the sandbox lint off.
	SkipLint bool
	// Timeout is the per-evaluation deadline; zero is Argo CD's 1 s. A test on a loaded CI machine may want
	// more, so that a slow evaluation is not reported as a timeout.
	Timeout time.Duration
}

// Engine is the engine Options select, or an error for a version ParseProfile rejects.
func (o Options) Engine() (Engine, error) {
	v := o.ArgoCD
	if v == "" {
		v = DefaultArgoCD
	}
	p, err := ParseProfile(v)
	if err != nil {
		return Engine{}, err
	}
	return Engine{Profile: p, Timeout: o.Timeout}, nil
}

// DefaultArgoCD is the version Options use when ArgoCD is empty.
const DefaultArgoCD = "v3.6"

// Test runs every suite of the resource_customizations tree in fsys as a subtest of t named
// "<group>/<Kind>/<health|discovery|action name>/<input file>", failing with the expected and actual
// health, or the object diff. Unless SkipLint is set, each script's sandbox findings fail
// "<group>/<Kind>/lint/<script>"; with Fuzz set, each script's fuzz findings fail
// "<group>/<Kind>/fuzz/<script>", printing the smallest object found as YAML to add as a test case.
//
// A tree without suites, a suite that does not parse, a case naming a missing file and a script with a
// syntax error fail t at once.
func Test(t *testing.T, fsys fs.FS, opts Options) {
	t.Helper()
	run(goT{t}, fsys, opts)
}

// tester is the part of *testing.T that Test uses, so its own tests can record what it reports.
type tester interface {
	Helper()
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Run(name string, f func(tester)) bool
}

type goT struct{ *testing.T }

// Run marks every frame between the user's test and a subtest's report as a helper: this method (seen
// from the parent, where testing resumes the search at the call to Run) and the closure the subtest runs,
// so that a failure points at the user's call to Test, not at this file.
func (g goT) Run(name string, f func(tester)) bool {
	g.T.Helper()
	return g.T.Run(name, func(t *testing.T) {
		t.Helper()
		f(goT{t})
	})
}

func run(t tester, fsys fs.FS, opts Options) {
	t.Helper()
	eng, err := opts.Engine()
	if err != nil {
		t.Fatal(err)
	}
	eng.OpenLibs = opts.OpenLibs
	rep, err := Runner{Engine: eng}.Tree(fsys, ".")
	if errors.Is(err, ErrNoSuites) {
		t.Fatalf("%v: nothing to test", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		t.Run(res.Name, func(t tester) {
			t.Helper()
			if res.NotRun != "" {
				t.Skipf("%s: %s: %s", res.Suite, res.Case, res.NotRun)
			}
			if !res.Passed() {
				t.Errorf("%s: %s: %s", res.Suite, res.Case, res.Failure)
			}
		})
	}
	if !opts.SkipLint {
		findings, err := Lint(fsys, opts.OpenLibs)
		if err != nil {
			t.Fatal(err)
		}
		byScript := map[string][]LintFinding{}
		for _, f := range findings {
			byScript[f.Path] = append(byScript[f.Path], f)
		}
		scripts, _ := Scripts(fsys)
		for _, s := range scripts {
			t.Run(scriptTestName(s, "lint"), func(t tester) {
				t.Helper()
				for _, f := range byScript[s.Path] {
					t.Error(f)
				}
			})
		}
	}
	if opts.Fuzz > 0 {
		fz, err := Fuzz(fsys, FuzzOptions{Engine: eng, HealthOpenLibs: opts.OpenLibs, N: opts.Fuzz, Seed: opts.Seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range fz.Scripts {
			t.Run(scriptTestName(ScriptFile{Path: s.Path}, "fuzz"), func(t tester) {
				t.Helper()
				for _, f := range s.Findings {
					b, _ := yaml.Marshal(f.Object)
					t.Errorf("%s\nsmallest object:\n%s", f.Summary(), b)
				}
			})
		}
	}
}

// scriptTestName is "<group>/<Kind>/<what>/<script path below the kind>".
func scriptTestName(s ScriptFile, what string) string {
	parts := strings.SplitN(s.Path, "/", 3)
	if len(parts) < 3 {
		return what + "/" + s.Path
	}
	return fmt.Sprintf("%s/%s/%s/%s", parts[0], parts[1], what, path.Clean(parts[2]))
}
