// Package argocdv3 is the conformance adapter (test/suite's Release) for the Argo CD v3 line: the
// calls into util/lua, util/settings and the embedded built-ins, whose API the v3 releases share. It is a
// module of its own so that each release's module (test/argocd-v3.2, test/argocd-v3.6) compiles it against
// the Argo CD it pins. What moved within the line, gitops-engine's health package (into Argo CD's own
// repository in v3.6, with deletionMessage), each release module hands in.
package argocdv3

import (
	"context"
	"encoding/json"
	"io/fs"
	"sort"
	"testing"

	applicationpkg "github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/resource_customizations"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/suite"
)

// Release is one v3 release; H is its gitops-engine's health.HealthStatus.
type Release[H any] struct {
	Release, Line string // "v3.2.12", engine.V32
	// Caps are what the release does beyond the line (Capabilities adds the line's own).
	Caps suite.Capabilities
	// ResourceHealth is the release's gitops-engine GetResourceHealth.
	ResourceHealth func(*unstructured.Unstructured, argolua.ResourceHealthOverrides) (*H, error)
	// HealthCheckFunc is its GetHealthCheckFunc(gvk) != nil.
	HealthCheckFunc func(schema.GroupVersionKind) bool
}

func (r Release[H]) Version() string                                { return r.Release }
func (r Release[H]) Profile() engine.Profile                        { return engine.Profile(r.Line) }
func (r Release[H]) Module() string                                 { return "github.com/argoproj/argo-cd/v3" }
func (r Release[H]) Builtins() fs.FS                                { return resource_customizations.Embedded }
func (r Release[H]) GoHealthCheck(gvk schema.GroupVersionKind) bool { return r.HealthCheckFunc(gvk) }

// builtinActions are the line's own actions per kind with actions of ours (resource_customizations/
// argoproj.io/<Kind>/actions), the same in v3.2.12, v3.6.1 and v3.6.2.
var builtinActions = map[string][]string{
	"argoproj.io/Rollout":     {"abort", "pause", "promote-full", "restart", "resume", "retry", "skip-current-step"},
	"argoproj.io/AnalysisRun": {"terminate"},
	"argoproj.io/Experiment":  nil,
}

// Capabilities are the line's (actionParams, built-in wildcard folders, gitops-engine's wrapped health
// errors, its built-in actions unless the release lists its own) and the release's.
func (r Release[H]) Capabilities() suite.Capabilities {
	c := r.Caps
	c.ActionParams, c.BuiltinWildcards, c.WrapsHealthErrors = true, true, true
	if c.BuiltinActions == nil {
		c.BuiltinActions = builtinActions
	}
	return c
}

// DecodeHealth unmarshals a script's result into the release's HealthStatus (the cost benchmarks).
func (r Release[H]) DecodeHealth(raw []byte) error { return json.Unmarshal(raw, new(H)) }

func (r Release[H]) Load(t testing.TB, cm *corev1.ConfigMap) (suite.Settings, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(cm, suite.ArgoSecret(cm.Namespace))
	ov, err := settings.NewSettingsManager(ctx, client, cm.Namespace).GetResourceOverrides()
	return overrides[H]{r, ov}, err
}

func (r Release[H]) Overrides(in map[string]suite.Override) suite.Settings {
	ov := map[string]v1alpha1.ResourceOverride{}
	for k, o := range in {
		ov[k] = v1alpha1.ResourceOverride{HealthLua: o.HealthLua, UseOpenLibs: o.UseOpenLibs, Actions: o.Actions}
	}
	return overrides[H]{r, ov}
}

// overrides is suite.Settings over loaded resource overrides.
type overrides[H any] struct {
	r  Release[H]
	ov map[string]v1alpha1.ResourceOverride
}

func object(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: suite.Copy(obj)}
}

func (s overrides[H]) vm() argolua.VM { return argolua.VM{ResourceOverrides: s.ov} }

func (s overrides[H]) Override(key string) (suite.Override, bool) {
	o, ok := s.ov[key]
	return suite.Override{HealthLua: o.HealthLua, UseOpenLibs: o.UseOpenLibs, Actions: o.Actions,
		IgnoreJSONPointers: o.IgnoreDifferences.JSONPointers}, ok
}

func (s overrides[H]) Actions(key string) (suite.ResourceActions, error) {
	o := s.ov[key]
	a, err := o.GetActions()
	out := suite.ResourceActions{MergeBuiltinActions: a.MergeBuiltinActions, DiscoveryLua: a.ActionDiscoveryLua}
	for _, d := range a.Definitions {
		out.Definitions = append(out.Definitions, suite.ActionDefinition{Name: d.Name, ActionLua: d.ActionLua})
	}
	return out, err
}

func (s overrides[H]) ResourceHealth(obj map[string]any) (*engine.Health, error) {
	h, err := s.r.ResourceHealth(object(obj), argolua.ResourceHealthOverrides(s.ov))
	return toEngine(h), err
}

func (s overrides[H]) Evaluator() func(*unstructured.Unstructured) error {
	ov := argolua.ResourceHealthOverrides(s.ov)
	return func(obj *unstructured.Unstructured) error {
		_, err := s.r.ResourceHealth(obj, ov)
		return err
	}
}

func (s overrides[H]) HealthScript(obj map[string]any) (string, bool, error) {
	return s.vm().GetHealthScript(object(obj))
}

func (s overrides[H]) ExecuteHealth(obj map[string]any, script string, openLibs bool) (*engine.Health, error) {
	vm := s.vm()
	vm.UseOpenLibs = openLibs
	h, err := vm.ExecuteHealthLua(object(obj), script)
	return toEngine(h), err
}

func (s overrides[H]) DiscoveryScripts(obj map[string]any) ([]string, error) {
	return s.vm().GetResourceActionDiscovery(object(obj))
}

func (s overrides[H]) Discover(obj map[string]any, scripts []string) ([]engine.Action, error) {
	found, err := s.vm().ExecuteResourceActionDiscovery(object(obj), scripts)
	out := make([]engine.Action, 0, len(found))
	for _, a := range found {
		e := engine.Action{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass}
		for _, p := range a.Params {
			e.Params = append(e.Params, engine.ActionParam{Name: p.Name})
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

func (s overrides[H]) ActionScript(obj map[string]any, name string) (string, error) {
	def, err := s.vm().GetResourceAction(object(obj), name)
	return def.ActionLua, err
}

func (s overrides[H]) RunAction(obj map[string]any, script string, params map[string]string) ([]engine.Impacted, error) {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	var argoParams []*applicationpkg.ResourceActionParameters
	for _, k := range names {
		name, value := k, params[k]
		argoParams = append(argoParams, &applicationpkg.ResourceActionParameters{Name: &name, Value: &value})
	}
	res, err := s.vm().ExecuteResourceAction(object(obj), script, argoParams)
	var out []engine.Impacted
	for _, r := range res {
		i := engine.Impacted{Operation: engine.Operation(r.K8SOperation)}
		if r.UnstructuredObj != nil {
			i.Object = r.UnstructuredObj.Object
		}
		out = append(out, i)
	}
	return out, err
}

// toEngine is a HealthStatus of any gitops-engine as the engine's Health (their fields and JSON names
// are the same; deletionMessage only where the release has it), nil for "no health".
func toEngine[H any](h *H) *engine.Health {
	if h == nil {
		return nil
	}
	raw, err := json.Marshal(h)
	var out engine.Health
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		panic(err) // both are plain structs of strings
	}
	return &out
}
