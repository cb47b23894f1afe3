// Package cli implements the analysis-health command line: one file per verb, each a NewXCommand over the
// shared Options, so commands run in-process in tests against buffers.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/analysis-health/analysis-health/internal/version"
)

// Version names this build in --version and in the header of every generated file (internal/version:
// stamped by `make dist`, else the module version `go install …@vX` records, else "dev").
var Version = version.String()

// Options carries the streams every command writes to.
type Options struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ExitError carries an exit status out of a command that has already printed what it had to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks bad flags or arguments: exit status 2, like cobra's own flag errors.
func usageError(format string, a ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, a...)}
}

// helpWidth is the widest line of any command's --help.
const helpWidth = 100

// verbs lets each verb file register its command from init, so verbs are added without editing this file.
var verbs []func(*Options) *cobra.Command

// NewRootCommand builds the command tree.
func NewRootCommand(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "analysis-health",
		Short: "Argo CD health for Argo Rollouts that carries the verdict of their AnalysisRuns",
		Long: `analysis-health makes the Argo CD health of a Rollout reflect its AnalysisRuns exactly, so
that Argo CD syncs and Kargo verification see a failed analysis as Degraded and a running one as
Progressing.

It evaluates its Lua health scripts (or those of an argocd-cm) exactly as Argo CD's sandbox does,
and verifies resource_customizations-style test suites.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(o.In)
	root.SetOut(o.Out)
	root.SetErr(o.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: 2, Err: err}
	})
	// Flag descriptions wrap at the help width; every other help line is written to fit in it
	// (TestHelpWidth).
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages ", fmt.Sprintf(".FlagUsagesWrapped %d ", helpWidth)))
	root.AddCommand(newHealthCommand(o), newVerifyCommand(o), newGenerateCommand(o))
	for _, newCommand := range verbs {
		root.AddCommand(newCommand(o))
	}
	refuseRepeatedFiles(root)
	return root
}

// singleFileFlags are the flags that name one input file wherever they are not repeatable (a
// StringArray -f is): given twice, pflag would silently keep the last, and the verb would read another
// file than the user meant.
var singleFileFlags = map[string]string{
	"filename":  "it takes one file; put the objects in one file (or pipe them to -f -) and select one with --kind and --name",
	"argocd-cm": "it takes one argocd-cm",
}

// refuseRepeatedFiles makes every single-valued file flag of the tree refuse a second value: a flag
// error, so exit status 2 naming the flag, instead of a run on the last file only.
func refuseRepeatedFiles(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if hint, ok := singleFileFlags[f.Name]; ok && f.Value.Type() == "string" {
			f.Value = &onceValue{Value: f.Value, hint: hint}
		}
	})
	for _, sub := range cmd.Commands() {
		refuseRepeatedFiles(sub)
	}
}

// onceValue is a flag value that may be set once.
type onceValue struct {
	pflag.Value
	hint  string
	first string
	set   bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return fmt.Errorf("given twice (first %q): %s", v.first, v.hint)
	}
	v.set, v.first = true, s
	return v.Value.Set(s)
}

// Run executes args and returns the process exit status, printing any error once to ErrOut.
func Run(args []string, o *Options) int {
	cmd := NewRootCommand(o)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	code := 1
	var exit *ExitError
	if errors.As(err, &exit) {
		code = exit.Code
		if exit.Err == nil {
			return code
		}
	} else if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "accepts ") {
		code = 2
	}
	fmt.Fprintf(o.ErrOut, "Error: %s\n", err)
	if code == 2 {
		// The help of the verb that refused its flags or arguments, which is where the answer is.
		where := cmd.CommandPath()
		if sub, _, ferr := cmd.Find(args); ferr == nil && sub != nil {
			where = sub.CommandPath()
		}
		fmt.Fprintf(o.ErrOut, "Run '%s --help' for usage.\n", where)
	}
	return code
}

// enumValue is a pflag.Value restricted to a fixed set, so a bad value fails at parse time and the error
// lists the valid ones. Its type in --help is "string": the flag's description lists the values, so the
// flag column stays narrow.
type enumValue struct {
	value   string
	allowed []string
}

func newEnum(def string, allowed ...string) *enumValue {
	return &enumValue{value: def, allowed: allowed}
}

func (e *enumValue) String() string { return e.value }
func (e *enumValue) Type() string   { return "string" }
func (e *enumValue) Set(s string) error {
	for _, a := range e.allowed {
		if strings.EqualFold(s, a) {
			e.value = a
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(e.allowed, ", "))
}

var _ pflag.Value = (*enumValue)(nil)
