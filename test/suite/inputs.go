package suite

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	"github.com/analysis-health/analysis-health/lua"
)

// HealthData is argocd-cm data holding our health scripts under the split keys, written out here rather
// than by the generator so that this oracle does not depend on the code it checks.
func HealthData(t testing.TB) map[string]string {
	t.Helper()
	data := map[string]string{}
	for _, k := range lua.Kinds() {
		s, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.health."+k.ConfigMapSuffix()] = s
	}
	return data
}

// ActionsData is HealthData with, per kind with actions, the resource.customizations.actions.<group>_<Kind>
// value in Argo CD's ResourceActions YAML, built from lua.Actions (not by the generator).
func ActionsData(t testing.TB) map[string]string {
	t.Helper()
	data := HealthData(t)
	for _, k := range lua.ActionKinds() {
		discovery, defs, err := lua.Actions(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		type definition struct {
			Name      string `json:"name"`
			ActionLua string `json:"action.lua"`
		}
		value := struct {
			MergeBuiltinActions bool         `json:"mergeBuiltinActions"`
			DiscoveryLua        string       `json:"discovery.lua"`
			Definitions         []definition `json:"definitions"`
		}{MergeBuiltinActions: true, DiscoveryLua: discovery}
		for _, d := range defs {
			value.Definitions = append(value.Definitions, definition{Name: d.Name, ActionLua: d.Script})
		}
		raw, err := yaml.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		data["resource.customizations.actions."+k.ConfigMapSuffix()] = string(raw)
	}
	return data
}

// Object decodes a YAML object.
func Object(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// Copy is a deep copy of obj, which Argo CD may change.
func Copy(obj map[string]any) map[string]any { return mutate.DeepCopy(obj).(map[string]any) }

// Fixtures are the bundled fixtures; none fails the test.
func Fixtures(t testing.TB) []lua.Fixture {
	t.Helper()
	fx, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	if len(fx) == 0 {
		t.Fatal("no fixtures found")
	}
	return fx
}

// KindOf is obj's group and kind.
func KindOf(obj map[string]any) lua.Kind {
	api, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group := ""
	for i := range api {
		if api[i] == '/' {
			group = api[:i]
		}
	}
	return lua.Kind{Group: group, Kind: kind}
}

// FixturesOf are the fixtures whose object is of kind k; none fails the test.
func FixturesOf(t testing.TB, k lua.Kind) []lua.Fixture {
	t.Helper()
	var out []lua.Fixture
	for _, f := range Fixtures(t) {
		if KindOf(Object(t, f.Raw)) == k {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s fixture", k.Key())
	}
	return out
}

// ErrText is err's text, "<nil>" for none.
func ErrText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// Same compares two results of a health script, "no health" (nil) and deletionMessage included.
func Same(a, b *engine.Health) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// SameRecorded compares status and message, what Argo CD records (gitops-engine's result keeps a
// script's deletionMessage it did not use).
func SameRecorded(a, b *engine.Health) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Status == b.Status && a.Message == b.Message
}

// Show prints a health result, nil as "<no health>".
func Show(h *engine.Health) string {
	if h == nil {
		return "<no health>"
	}
	return fmt.Sprintf("%+v", *h)
}

func recorded(r Release, obj map[string]any, script string) (engine.Health, error) {
	h, err := engine.Engine{Profile: r.Profile()}.ResourceHealth(obj, script)
	if err == nil && h == nil {
		err = fmt.Errorf("no health")
	}
	if h == nil {
		return engine.Health{}, err
	}
	return *h, err
}
