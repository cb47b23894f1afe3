package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

type verifyFlags struct {
	version  profileValue
	openLibs bool
	exact    bool
	lint     bool
	fuzz     int
	seed     int64
	fuzzOut  string
	bench    bool
	benchN   int
	timeout  time.Duration
}

// defaultFuzz is the number of mutations per script and test object of a bare --fuzz.
const defaultFuzz = 20

func newVerifyCommand(o *Options) *cobra.Command {
	f := &verifyFlags{}
	cmd := &cobra.Command{
		Use:   "verify [DIR...]",
		Short: "Test, lint, fuzz and measure Argo CD Lua in resource_customizations trees",
		Long: `verify runs Argo CD-format test suites (health_test.yaml beside health.lua and
actions/action_test.yaml beside discovery.lua and actions/<name>/action.lua, as in Argo CD's
resource_customizations) through the sandbox Argo CD gives each script: health scripts without
string, math or os libraries unless --open-libs (argocd-cm's useOpenLibs, or Argo CD's built-in
scripts), discovery and actions always without them. Unlike Argo CD's controller, which lets every
script dofile, loadfile and require files, no script reads a file here: only health scripts run
with --open-libs do, through the open libraries.

Before running anything it lints every script (--lint=false turns it off): standard-library and
string method calls the sandbox lacks, globals, health statuses outside Argo CD's six, actions
returning another kind without the create operation. With --fuzz it runs every script on mutations
of its suites' test objects (fields dropped, nulled, retyped, lists emptied or made huge) and
reports Lua errors, timeouts, non-table returns, invalid statuses, and Unknown or empty health a
suite never expects; --fuzz-out DIR writes the smallest object for each finding there. On a
terminal, fuzzing shows its progress on standard error. --bench
reports each script's cost per evaluation beside the VM floor.

An action's output passes as in Argo CD's own test (TestLuaResourceActionsScript): after its
normalizer, fields the expected object lacks are ignored, lists in Kubernetes' own kinds merge
element by element and lists in custom resources must be equal; --exact-actions compares the whole
object instead.

It prints each failure and finding on one line and a closing summary, and exits 1 on any failed
case, lint finding or fuzz finding. A suite without the script it tests is listed as not run
(Argo CD's own test does not run it either); a tree without suites is a notice, not an error.`,
		Example: `  analysis-health verify
  analysis-health verify ./resource_customizations --fuzz --fuzz-out /tmp/crashers
  analysis-health verify ./resource_customizations --fuzz=200 --seed 7 --bench`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(o, f, args)
		},
	}
	addVersionFlag(cmd, &f.version, "Argo CD release line to reproduce")
	cmd.Flags().BoolVar(&f.openLibs, "open-libs", false, "health scripts run with open libraries (argocd-cm useOpenLibs, or Argo CD's built-in scripts), files included")
	cmd.Flags().BoolVar(&f.exact, "exact-actions", false, "an action's output must equal the whole expected object (Argo CD's own test ignores the fields the expected object lacks)")
	cmd.Flags().BoolVar(&f.lint, "lint", true, "lint every script against Argo CD's sandbox before running it")
	cmd.Flags().IntVar(&f.fuzz, "fuzz", 0, fmt.Sprintf("fuzz every script with N mutations per test object (bare --fuzz: %d)", defaultFuzz))
	cmd.Flags().Lookup("fuzz").NoOptDefVal = fmt.Sprint(defaultFuzz)
	cmd.Flags().Int64Var(&f.seed, "seed", 1, "seed of the fuzzer's choices: the same seed repeats a run")
	cmd.Flags().StringVar(&f.fuzzOut, "fuzz-out", "", "write the smallest object of each fuzz finding to this directory, as YAML")
	cmd.Flags().BoolVar(&f.bench, "bench", false, "report each script's ns and allocations per evaluation beside the VM floor")
	cmd.Flags().IntVar(&f.benchN, "bench-n", 200, "evaluations per test object for --bench")
	cmd.Flags().DurationVar(&f.timeout, "timeout", engine.DefaultTimeout, "per-evaluation deadline (Argo CD's is 1s; raise it on a loaded CI machine so slowness is not a timeout finding)")
	return cmd
}

type verifyTree struct {
	name string
	fsys fs.FS
}

func runVerify(o *Options, f *verifyFlags, dirs []string) error {
	if f.fuzz < 0 {
		return usageError("--fuzz must be positive, got %d", f.fuzz)
	}
	if f.fuzzOut != "" && f.fuzz == 0 {
		return usageError("--fuzz-out needs --fuzz")
	}
	if f.timeout <= 0 {
		return usageError("--timeout must be positive, got %s", f.timeout)
	}
	eng := verify.Engine{Profile: verify.Profile(f.version.p), OpenLibs: f.openLibs, Timeout: f.timeout}
	var trees []verifyTree
	if len(dirs) == 0 {
		trees = append(trees, verifyTree{"(bundled)", lua.FS})
	}
	for _, d := range dirs {
		info, err := os.Stat(d)
		if err != nil {
			// A bare --fuzz takes no value after a space (it has a default, so pflag cannot tell a count
			// from a DIR): "--fuzz 200" leaves 200 as a DIR. Say how to write it.
			if _, nerr := strconv.Atoi(d); nerr == nil && errors.Is(err, fs.ErrNotExist) {
				return usageError("%s: no such directory; to give --fuzz a count, write --fuzz=%s (after a space, %s is read as a DIR to verify)", d, d, d)
			}
			return fmt.Errorf("%s: %w", d, pathError(err))
		}
		if !info.IsDir() {
			return fmt.Errorf("%s: not a directory", d)
		}
		trees = append(trees, verifyTree{d, os.DirFS(d)})
	}

	// Everything that can fail to load does so before anything is printed.
	var total verify.Report
	var lintLines, fuzzLines, benchLines []string
	var fuzzFindings []verify.FuzzFinding
	cases := 0
	for _, t := range trees {
		rep, err := verify.Runner{Engine: eng, ExactActions: f.exact}.Tree(t.fsys, ".")
		if errors.Is(err, verify.ErrNoSuites) {
			fmt.Fprintf(o.ErrOut, "%s: no health_test.yaml or action_test.yaml found, nothing to verify\n", t.name)
			continue
		}
		if err != nil {
			// The tree's errors start with the file they are about, relative to the tree.
			return errors.New(prefix(t.name, err.Error()))
		}
		for i := range rep.Results {
			rep.Results[i].Suite = prefix(t.name, rep.Results[i].Suite)
		}
		total.Results = append(total.Results, rep.Results...)
		if f.lint {
			findings, err := verify.Lint(t.fsys, f.openLibs)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			for _, lf := range findings {
				lf.Path = prefix(t.name, lf.Path)
				lintLines = append(lintLines, "LINT "+lf.String())
			}
		}
		if f.fuzz > 0 {
			fz, err := verify.Fuzz(t.fsys, verify.FuzzOptions{Engine: eng, HealthOpenLibs: f.openLibs, N: f.fuzz, Seed: f.seed,
				Progress: fuzzProgress(o.ErrOut, t.name), ProgressInterval: progressEvery})
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			cases += fz.Cases()
			for _, ff := range fz.Findings() {
				ff.Script, ff.From = prefix(t.name, ff.Script), prefix(t.name, ff.From)
				fuzzFindings = append(fuzzFindings, ff)
			}
		}
		if f.bench {
			res, err := verify.Bench(t.fsys, eng, f.openLibs, f.benchN)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			for _, r := range res {
				benchLines = append(benchLines, fmt.Sprintf("BENCH %-60s %9.0f ns/op %7.0f allocs/op   (VM floor %7.0f ns/op %6.0f allocs/op, %d objects)",
					prefix(t.name, r.Path), r.NsPerOp, r.AllocsPerOp, r.FloorNsPerOp, r.FloorAllocsOp, r.Objects))
			}
		}
	}
	var written []string
	if f.fuzzOut != "" {
		var err error
		written, err = verify.WriteFindings(f.fuzzOut, fuzzFindings)
		if err != nil {
			return err
		}
	}
	for i, ff := range fuzzFindings {
		line := "FUZZ " + ff.Summary()
		if i < len(written) {
			line += " -> " + filepath.ToSlash(written[i])
		}
		fuzzLines = append(fuzzLines, line)
	}

	for _, line := range total.Failures() {
		fmt.Fprintln(o.Out, "FAIL "+line)
	}
	for _, line := range total.NotRun() {
		fmt.Fprintln(o.Out, "NOT RUN "+line)
	}
	for _, lines := range [][]string{lintLines, fuzzLines, benchLines} {
		for _, l := range lines {
			fmt.Fprintln(o.Out, l)
		}
	}
	// The last line stays "N passed, N failed", as scripts reading it expect.
	if len(total.Results) > 0 {
		if f.lint {
			fmt.Fprintf(o.Out, "%d lint findings\n", len(lintLines))
		}
		if f.fuzz > 0 {
			fmt.Fprintf(o.Out, "%d fuzz findings in %d evaluations (seed %d)\n", len(fuzzFindings), cases, f.seed)
		}
		fmt.Fprintln(o.Out, total.Summary())
	}
	if _, failed := total.Counts(); failed > 0 || len(lintLines) > 0 || len(fuzzFindings) > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// isTerminal reports whether w is a terminal. Progress is drawn only there: a CI log or a file
// redirected from stderr gets the findings and the summary, not a line per tick.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progressEvery is how often the progress line is redrawn.
var progressEvery = 2 * time.Second

// fuzzProgress draws "fuzzing TREE: done/total mutations" on one line of a terminal, rewritten every tick
// (fuzzing a tree takes tens of seconds at --fuzz=300) and erased when the tree is done.
func fuzzProgress(w io.Writer, tree string) func(done, total int) {
	if !isTerminal(w) {
		return nil
	}
	return func(done, total int) {
		if done >= total {
			fmt.Fprint(w, "\r\x1b[K")
			return
		}
		fmt.Fprintf(w, "\rfuzzing %s: %d/%d mutations\x1b[K", tree, done, total)
	}
}

func prefix(dir, p string) string {
	if p == "" {
		return p
	}
	if dir == "(bundled)" {
		return "lua/" + p
	}
	return strings.TrimSuffix(dir, "/") + "/" + p
}
