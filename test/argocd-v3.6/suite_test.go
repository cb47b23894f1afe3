package v36

import (
	"testing"

	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The checks of test/suite against Argo CD v3.6.2 (release).

func TestFixturesMatchArgoCDv36(t *testing.T)           { suite.FixturesMatch(t, release) }
func TestSandboxMatchesArgoCDv36(t *testing.T)          { suite.Sandbox(t, release) }
func TestWhyMessagesInArgoCDv36(t *testing.T)           { suite.WhyMessages(t, release) }
func TestArgoCDv36BuiltinSuites(t *testing.T)           { suite.BuiltinSuites(t, release) }
func TestActionsThroughArgoCDv36(t *testing.T)          { suite.ActionsThrough(t, release) }
func TestActionProbesMatchArgoCDv36(t *testing.T)       { suite.ActionProbes(t, release) }
func TestOurActionsMatchV36Builtins(t *testing.T)       { suite.OurActionsMatchBuiltins(t, release) }
func TestGeneratedConfigMapInArgoCDv36(t *testing.T)    { suite.GeneratedConfigMap(t, release) }
func TestOperatorPatchesInArgoCDv36(t *testing.T)       { suite.OperatorPatches(t, release) }
func TestUpstreamCorpusArgoCDv36(t *testing.T)          { suite.UpstreamCorpus(t, release) }
func TestBuiltinListV36(t *testing.T)                   { suite.BuiltinList(t, release) }
func TestScriptResolutionMatchesArgoCDv36(t *testing.T) { suite.ScriptResolution(t, release) }
func TestUserScriptsMatchArgoCDv36(t *testing.T)        { suite.UserScripts(t, release) }
func TestGoHealthChecksMatchArgoCDv36(t *testing.T)     { suite.GoHealthChecks(t, release) }
func TestHealthCommandMatchesArgoCDv36(t *testing.T)    { suite.HealthCommand(t, release) }
func TestVerifyMatchesArgoCDv36(t *testing.T)           { suite.VerifyPointerSuites(t, release) }
func TestE2EReplayArgoCDv36(t *testing.T)               { suite.E2EReplay(t, release, isWorse) }

func TestArgoCDv36BuiltinActionSuites(t *testing.T) {
	suite.BuiltinActionSuites(t, release, "Rollout", "AnalysisRun")
}

// The patch, Helm and kustomize formats as written and in the form `generate` emits by default
// (--argocd-version v3.6).
func TestGeneratedPatchInArgoCDv36(t *testing.T) { formats.Patch(t, release, suite.FormSets("v3.6")) }
func TestGeneratedHelmValuesInArgoCDv36(t *testing.T) {
	formats.HelmValues(t, release, suite.FormSets("v3.6"))
}
func TestGeneratedKustomizeInArgoCDv36(t *testing.T) {
	formats.Kustomize(t, release, suite.FormSets("v3.6"))
}
