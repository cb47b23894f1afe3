package recorder

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the recorded timelines in ../testdata/timelines/<version>")

var env *Env

// TestMain stops the one API server program and metrics server that the tests of the binary share (each
// scenario gets a namespace of its own); sharedEnv starts them for the first test that needs them, so a
// run of the reliability tests alone (which start clusters of their own) does not start them.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if env != nil {
		env.Close()
	}
	os.Exit(code)
}

var envErr error

func sharedEnv(t *testing.T) *Env {
	if env == nil && envErr == nil {
		if env, envErr = NewEnv(); envErr != nil {
			envErr = fmt.Errorf("the shared cluster: %w", envErr)
		}
	}
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

func TestRecord(t *testing.T) { RunRecord(t, sharedEnv(t), *update) }

func TestGuard(t *testing.T) { RunGuard(t, sharedEnv(t)) }

// TestPluginVerification: the analysis-health plugin judged by the real analysis controller (docs/kargo.md).
func TestPluginVerification(t *testing.T) { RunPluginVerification(t, sharedEnv(t), *update) }

// TestPluginRemoved: a verification run naming the plugin after its removal (docs/install.md).
func TestPluginRemoved(t *testing.T) { RunPluginRemoved(t, sharedEnv(t)) }

// TestExperimentTerminate: what the Experiment terminate action leads to (docs/actions.md).
func TestExperimentTerminate(t *testing.T) { RunExperimentTerminate(t, sharedEnv(t)) }
