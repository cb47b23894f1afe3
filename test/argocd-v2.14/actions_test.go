package conformance

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/suite"
)

// The argocd-cm value is what Argo CD's docs show: discovery.lua, definitions with name and action.lua,
// and mergeBuiltinActions, with nothing Argo CD would ignore.
func TestActionsConfigMapValueShape(t *testing.T) {
	data := suite.ActionsData(t)
	for _, k := range lua.ActionKinds() {
		value := data["resource.customizations.actions."+k.ConfigMapSuffix()]
		var parsed v1alpha1.ResourceActions
		if err := yaml.UnmarshalStrict([]byte(value), &parsed); err != nil {
			t.Errorf("%s: %v", k.Key(), err)
		}
		if !strings.Contains(value, "mergeBuiltinActions: true") {
			t.Errorf("%s: mergeBuiltinActions not set:\n%s", k.Key(), value)
		}
	}
}
