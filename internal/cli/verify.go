package cli

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

type verifyFlags struct {
	version *enumValue
}

func newVerifyCommand(o *Options) *cobra.Command {
	f := &verifyFlags{version: newEnum("v2", "v2", "v3")}
	cmd := &cobra.Command{
		Use:   "verify [DIR...]",
		Short: "Run every health_test.yaml and action_test.yaml under DIR (default: the bundled scripts) through Argo CD's sandbox",
		Long: `verify runs Argo CD-format test suites (health_test.yaml beside health.lua and
actions/action_test.yaml beside discovery.lua and actions/<name>/action.lua, as in Argo CD's
resource_customizations) through the same sandbox Argo CD uses for argocd-cm scripts and for every
action: no string, math or os libraries. It prints each failure and a final "N passed, N failed" line,
and exits 1 on any failure.`,
		Example: `  analysis-health verify
  analysis-health verify ./resource_customizations`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(o, f, args)
		},
	}
	cmd.Flags().Var(f.version, "argocd-version", "Argo CD release line whose Lua VM behaviour to reproduce: v2|v3")
	return cmd
}

func runVerify(o *Options, f *verifyFlags, dirs []string) error {
	profile, _ := engine.ParseProfile(f.version.String())
	runner := verify.Runner{Engine: engine.Engine{Profile: profile}}
	type tree struct {
		name string
		fsys fs.FS
	}
	var trees []tree
	if len(dirs) == 0 {
		trees = append(trees, tree{"(bundled)", lua.FS})
	}
	for _, d := range dirs {
		info, err := os.Stat(d)
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return fmt.Errorf("%s: not a directory", d)
		}
		trees = append(trees, tree{d, os.DirFS(d)})
	}
	var total verify.Report
	for _, t := range trees {
		rep, err := runner.Tree(t.fsys, ".")
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		for i := range rep.Results {
			rep.Results[i].Suite = prefix(t.name, rep.Results[i].Suite)
		}
		total.Results = append(total.Results, rep.Results...)
	}
	for _, line := range total.Failures() {
		fmt.Fprintln(o.Out, "FAIL "+line)
	}
	fmt.Fprintln(o.Out, total.Summary())
	if _, failed := total.Counts(); failed > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

func prefix(dir, p string) string {
	if dir == "(bundled)" {
		return "lua/" + p
	}
	return dir + "/" + p
}
