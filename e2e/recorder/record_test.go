package recorder

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the recorded timelines in ../testdata/timelines/<version>")

var env *Env

// TestMain starts one API server program and one metrics server for every test of the binary; each
// scenario gets a namespace of its own.
func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if env, err = NewEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func TestRecord(t *testing.T) { RunRecord(t, env, *update) }

func TestGuard(t *testing.T) { RunGuard(t, env) }

// TestPluginVerification: the analysis-health plugin judged by the real analysis controller (docs/kargo.md).
func TestPluginVerification(t *testing.T) { RunPluginVerification(t, env, *update) }

// TestPluginRemoved: a verification run naming the plugin after its removal (docs/install.md).
func TestPluginRemoved(t *testing.T) { RunPluginRemoved(t, env) }

// TestExperimentTerminate: what the Experiment terminate action leads to (docs/actions.md).
func TestExperimentTerminate(t *testing.T) { RunExperimentTerminate(t, env) }
