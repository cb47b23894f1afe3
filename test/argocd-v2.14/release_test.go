package conformance

import (
	"fmt"
	"io/fs"
	"sort"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/suite"
)

// v214 is Argo CD v2.14.21 for test/suite. v2.14 differs from the v3 line (test/argocd-v3-adapter)
// in its API: ExecuteResourceAction takes no parameters and panics where cleanReturnedArray indexes past
// the original list; a discovered action's params carry value, type and default.
type v214 struct{}

var release suite.Release = v214{}

func (v214) Version() string         { return "v2.14.21" }
func (v214) Profile() engine.Profile { return engine.V214 }
func (v214) Module() string          { return "github.com/argoproj/argo-cd/v2" }
func (v214) Builtins() fs.FS         { return resource_customizations.Embedded }
func (v214) GoHealthCheck(gvk schema.GroupVersionKind) bool {
	return health.GetHealthCheckFunc(gvk) != nil
}

func (v214) Capabilities() suite.Capabilities {
	return suite.Capabilities{BuiltinActions: map[string][]string{
		"argoproj.io/Rollout":     {"abort", "promote-full", "restart", "resume", "retry"},
		"argoproj.io/AnalysisRun": {"terminate"},
		"argoproj.io/Experiment":  nil,
	}}
}

func (v214) Load(t testing.TB, cm *corev1.ConfigMap) (suite.Settings, error) {
	ov, err := loadOverrides(t, cm)
	return settings214(ov), err
}

func (v214) Overrides(in map[string]suite.Override) suite.Settings {
	ov := settings214{}
	for k, o := range in {
		ov[k] = v1alpha1.ResourceOverride{HealthLua: o.HealthLua, UseOpenLibs: o.UseOpenLibs, Actions: o.Actions}
	}
	return ov
}

// settings214 is suite.Settings over v2.14's loaded resource overrides.
type settings214 map[string]v1alpha1.ResourceOverride

func (s settings214) vm() argolua.VM { return argolua.VM{ResourceOverrides: s} }

func copied(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: suite.Copy(obj)}
}

func fromArgoHealth(h *health.HealthStatus) *engine.Health {
	if h == nil {
		return nil
	}
	return &engine.Health{Status: string(h.Status), Message: h.Message}
}

func (s settings214) Override(key string) (suite.Override, bool) {
	o, ok := s[key]
	return suite.Override{HealthLua: o.HealthLua, UseOpenLibs: o.UseOpenLibs, Actions: o.Actions,
		IgnoreJSONPointers: o.IgnoreDifferences.JSONPointers}, ok
}

func (s settings214) Actions(key string) (suite.ResourceActions, error) {
	o := s[key]
	parsed, err := o.GetActions()
	loaded := suite.ResourceActions{MergeBuiltinActions: parsed.MergeBuiltinActions, DiscoveryLua: parsed.ActionDiscoveryLua}
	for _, d := range parsed.Definitions {
		loaded.Definitions = append(loaded.Definitions, suite.ActionDefinition{Name: d.Name, ActionLua: d.ActionLua})
	}
	return loaded, err
}

func (s settings214) ResourceHealth(obj map[string]any) (*engine.Health, error) {
	hs, err := health.GetResourceHealth(copied(obj), argolua.ResourceHealthOverrides(s))
	return fromArgoHealth(hs), err
}

func (s settings214) Evaluator() func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		_, err := health.GetResourceHealth(obj, argolua.ResourceHealthOverrides(s))
		return err
	}
}

func (s settings214) HealthScript(obj map[string]any) (string, bool, error) {
	return s.vm().GetHealthScript(copied(obj))
}

func (s settings214) ExecuteHealth(obj map[string]any, script string, openLibs bool) (*engine.Health, error) {
	hs, err := argolua.VM{ResourceOverrides: s, UseOpenLibs: openLibs}.ExecuteHealthLua(copied(obj), script)
	return fromArgoHealth(hs), err
}

func (s settings214) DiscoveryScripts(obj map[string]any) ([]string, error) {
	return s.vm().GetResourceActionDiscovery(copied(obj))
}

func (s settings214) Discover(obj map[string]any, scripts []string) ([]engine.Action, error) {
	found, err := s.vm().ExecuteResourceActionDiscovery(copied(obj), scripts)
	return fromArgoActions(found), err
}

func (s settings214) ActionScript(obj map[string]any, name string) (string, error) {
	def, err := s.vm().GetResourceAction(copied(obj), name)
	return def.ActionLua, err
}

// RunAction turns v2.14's panics into an error, so the case can be compared; v2.14 has no action
// parameters.
func (s settings214) RunAction(obj map[string]any, script string, params map[string]string) (out []engine.Impacted, err error) {
	if len(params) > 0 {
		return nil, fmt.Errorf("Argo CD v2.14 takes no action parameters")
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("argo-cd panicked: %v", r)
		}
	}()
	res, err := s.vm().ExecuteResourceAction(copied(obj), script)
	for _, r := range res {
		i := engine.Impacted{Operation: engine.Operation(r.K8SOperation)}
		if r.UnstructuredObj != nil {
			i.Object = r.UnstructuredObj.Object
		}
		out = append(out, i)
	}
	return out, err
}

func fromArgoActions(in []v1alpha1.ResourceAction) []engine.Action {
	out := make([]engine.Action, 0, len(in))
	for _, a := range in {
		e := engine.Action{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass}
		for _, p := range a.Params {
			e.Params = append(e.Params, engine.ActionParam{Name: p.Name, Value: p.Value, Type: p.Type, Default: p.Default})
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
