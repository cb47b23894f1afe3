package v3

import (
	"testing"

	"github.com/analysis-health/analysis-health/test/suite"
)

// The checks of test/suite against Argo CD v3.2.12 (release).

func TestFixturesMatchArgoCDv3(t *testing.T)           { suite.FixturesMatch(t, release) }
func TestSandboxMatchesArgoCDv3(t *testing.T)          { suite.Sandbox(t, release) }
func TestWhyMessagesInArgoCDv3(t *testing.T)           { suite.WhyMessages(t, release) }
func TestArgoCDv3BuiltinSuites(t *testing.T)           { suite.BuiltinSuites(t, release) }
func TestActionsThroughArgoCDv3(t *testing.T)          { suite.ActionsThrough(t, release) }
func TestActionProbesMatchArgoCDv3(t *testing.T)       { suite.ActionProbes(t, release) }
func TestOurActionsMatchV3Builtins(t *testing.T)       { suite.OurActionsMatchBuiltins(t, release) }
func TestGeneratedConfigMapInArgoCDv3(t *testing.T)    { suite.GeneratedConfigMap(t, release) }
func TestOperatorPatchesInArgoCDv3(t *testing.T)       { suite.OperatorPatches(t, release) }
func TestUpstreamCorpusArgoCDv3(t *testing.T)          { suite.UpstreamCorpus(t, release) }
func TestBuiltinListV32(t *testing.T)                  { suite.BuiltinList(t, release) }
func TestScriptResolutionMatchesArgoCDv3(t *testing.T) { suite.ScriptResolution(t, release) }
func TestFuzzFindingClassesInArgoCDv3(t *testing.T)    { suite.FuzzFindingClasses(t, release) }

func TestArgoCDv3BuiltinActionSuites(t *testing.T) {
	suite.BuiltinActionSuites(t, release, "Rollout", "AnalysisRun")
}

// The v3.2.12 block of docs/argocd-builtin-scripts.md (`make docs` rewrites it).
func TestArgoCDv3BuiltinScripts(t *testing.T) {
	suite.BuiltinScripts(t, release, "`test/argocd-v3.2` (module of its own)", 300)
}
