package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

// TestActionsDoc renders docs/actions.md's command-line samples from the commands themselves, so the
// doc shows what the tool prints (make docs, or this test with -update, rewrites the block).
func TestActionsDoc(t *testing.T) {
	const (
		failed  = "lua/argoproj.io/Rollout/actions/testdata/canary_step_analysis_failed_aborted_v1.8.yaml"
		pausing = "lua/argoproj.io/Rollout/actions/testdata/canary_pause_step.yaml"
	)
	var b strings.Builder
	// sample runs the command from the repository root as the doc shows it. Commands that exit 0 go in a
	// console block, which TestExamplesRun runs again; refusals in a text block, with their exit status.
	sample := func(intro string, wantCode int, args ...string) {
		t.Helper()
		runArgs := make([]string, len(args))
		for i, a := range args {
			runArgs[i] = a
			if i > 0 && (args[i-1] == "-f") {
				runArgs[i] = filepath.Join("..", "..", a)
			}
		}
		code, out, errOut := run(t, "", runArgs...)
		if code != wantCode {
			t.Fatalf("%s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, out, errOut)
		}
		// Paths in messages are the repository's, as a reader in a checkout sees them.
		out = strings.ReplaceAll(out, filepath.Join("..", "..")+string(filepath.Separator), "")
		errOut = strings.ReplaceAll(errOut, filepath.Join("..", "..")+string(filepath.Separator), "")
		fmt.Fprintf(&b, "\n%s\n\n", intro)
		fence := "console"
		if code != 0 {
			fence = "text"
		}
		fmt.Fprintf(&b, "```%s\n$ analysis-health %s\n%s", fence, strings.Join(args, " "), out)
		if code != 0 {
			fmt.Fprintf(&b, "%s(exit status %d)\n", errOut, code)
		}
		b.WriteString("```\n")
	}
	sample("A canary whose step analysis failed (the controller aborted it): our discovery blocks `promote-full` and\n"+
		"`skip-current-step`, and `list` says why. SOURCE is whose discovery lists the entry; `promote-full`'s entry is ours\n"+
		"though its action is Argo CD's (`\"script\": \"Argo CD\"` in `-o json`), so it is listed with the command that runs it there.",
		0, "action", "list", "-f", failed)
	sample("`run` refuses a blocked action with the reason, exit status 1. Argo CD's `promote-full` is not bundled, so nothing here\n"+
		"runs it:", 1, "action", "run", "promote-full", "-f", failed)
	sample("A blocked action we ship is refused too; `--force` runs it anyway (with a warning on standard error), as Argo CD's\n"+
		"API server would:", 1, "action", "run", "skip-current-step", "-f", failed)
	sample("Another Rollout, paused on a canary step without a failed analysis: nothing is blocked, and `run --diff` shows what\n"+
		"`skip-current-step` changes.", 0, "action", "list", "-f", pausing)
	sample("", 0, "action", "run", "skip-current-step", "-f", pausing, "--diff")
	body := strings.ReplaceAll(b.String(), "\n\n\n", "\n")
	docblock.Check(t, filepath.Join("..", "..", "docs", "actions.md"), "internal/cli TestActionsDoc", []byte(body))
}
