package conformance

import (
	"testing"

	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The checks of test/suite against Argo CD v2.14.21 (release).

func TestFixturesMatchArgoCD(t *testing.T)           { suite.FixturesMatch(t, release) }
func TestSandboxMatchesArgoCD(t *testing.T)          { suite.Sandbox(t, release) }
func TestWhyMessagesInArgoCD(t *testing.T)           { suite.WhyMessages(t, release) }
func TestArgoCDBuiltinSuites(t *testing.T)           { suite.BuiltinSuites(t, release) }
func TestActionsThroughArgoCD(t *testing.T)          { suite.ActionsThrough(t, release) }
func TestActionProbesMatchArgoCD(t *testing.T)       { suite.ActionProbes(t, release) }
func TestGeneratedConfigMapInArgoCD(t *testing.T)    { suite.GeneratedConfigMap(t, release) }
func TestBuiltinListV214(t *testing.T)               { suite.BuiltinList(t, release) }
func TestScriptResolutionMatchesArgoCD(t *testing.T) { suite.ScriptResolution(t, release) }
func TestFuzzFindingClassesInArgoCD(t *testing.T)    { suite.FuzzFindingClasses(t, release) }

// v2.14's own action suite for AnalysisRun; its Rollout actions are not ours (v2.14 has no pause and no
// skip-current-step).
func TestArgoCDBuiltinAnalysisRunActionSuite(t *testing.T) {
	suite.BuiltinActionSuites(t, release, "AnalysisRun")
}

// The v2.14.21 block of docs/argocd-builtin-scripts.md (`make docs` rewrites it).
func TestArgoCDBuiltinScripts(t *testing.T) {
	suite.BuiltinScripts(t, release, "`test/argocd-v2.14/` (main module)", 250)
}

func TestGeneratedPatchInArgoCD(t *testing.T)      { formats.Patch(t, release, suite.OptionSets) }
func TestGeneratedHelmValuesInArgoCD(t *testing.T) { formats.HelmValues(t, release, suite.OptionSets) }
func TestGeneratedKustomizeInArgoCD(t *testing.T)  { formats.Kustomize(t, release, suite.OptionSets) }
