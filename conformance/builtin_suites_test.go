package conformance

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/resource_customizations"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/conformance/probe"
	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

func TestArgoCDBuiltinSuites(t *testing.T) {
	doc, err := os.ReadFile("../docs/health-semantics.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	total, passed, deviations := 0, 0, 0
	for _, k := range lua.Kinds() {
		dir := path.Join(k.Group, k.Kind)
		raw, err := resource_customizations.Embedded.ReadFile(path.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatalf("Argo CD v2.14 has no built-in suite for %s: %v", k.Key(), err)
		}
		var suite verify.HealthSuite
		if err := yaml.Unmarshal(raw, &suite); err != nil {
			t.Fatal(err)
		}
		script, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range suite.Tests {
			id := k.Kind + "/" + tc.InputPath
			t.Run(id, func(t *testing.T) {
				input, err := resource_customizations.Embedded.ReadFile(path.Join(dir, tc.InputPath))
				if err != nil {
					t.Fatal(err)
				}
				got, err := engine.Engine{Profile: engine.V214}.Health(unstructuredFrom(t, input).Object, script)
				if err != nil {
					t.Fatal(err)
				}
				dev, listed := probe.BuiltinDeviations[id]
				differs := got != tc.HealthStatus
				statusDiffers := got.Status != tc.HealthStatus.Status
				total++
				switch {
				case !differs && !listed:
					passed++
				case differs && listed:
					deviations++
				}
				switch {
				case differs && !listed:
					t.Errorf("unlisted deviation from Argo CD's built-in: want %+v, got %+v", tc.HealthStatus, got)
				case !differs && listed:
					t.Errorf("listed as a deviation (%s) but matches the built-in; drop it from the list and the docs", dev.Why)
				case listed && statusDiffers != dev.StatusDiffers:
					t.Errorf("deviation listed with statusDiffers=%v, got built-in %+v vs ours %+v", dev.StatusDiffers, tc.HealthStatus, got)
				}
				if listed {
					seen[id] = true
					if !strings.Contains(string(doc), tc.InputPath) {
						t.Errorf("docs/health-semantics.md does not mention %s", tc.InputPath)
					}
				}
			})
		}
	}
	for id := range probe.BuiltinDeviations {
		if !seen[id] {
			t.Errorf("deviation %s names no case of Argo CD's suites", id)
		}
	}
	probe.CheckSuiteCounts(t, "../docs/argocd-versions.md", "v2.14.21", total, passed, deviations)
}
