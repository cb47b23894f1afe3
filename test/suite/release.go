// Package suite holds the conformance checks that are the same for every Argo CD release: each release's
// module (test/argocd-v2.14/ for v2.14, test/argocd-v3.2, test/argocd-v3.6) implements Release against that
// release's util/lua, util/settings and gitops-engine, and calls the checks from its tests. The package
// imports no Argo CD code, so that one copy serves modules that pin different Argo CD releases.
package suite

import (
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/upstream"
)

// Release is one Argo CD release as the checks reach it.
type Release interface {
	// Version is the release, e.g. "v3.2.12"; the docs' tables are keyed by it.
	Version() string
	// Profile is the engine's profile that reproduces the release.
	Profile() engine.Profile
	// Module is the Go module of the release ("github.com/argoproj/argo-cd/v3").
	Module() string
	// Builtins is the release's embedded resource_customizations tree.
	Builtins() fs.FS
	// Load reads cm the way the application controller does: cm and an argocd-secret in a (fake) cluster,
	// read by util/settings' SettingsManager, which only sees a labelled argocd-cm and validates every
	// resource.customizations key.
	Load(t testing.TB, cm *corev1.ConfigMap) (Settings, error)
	// Overrides is Argo CD with these resource overrides, as util/settings would hand them over (nil:
	// none, the built-in scripts only).
	Overrides(ov map[string]Override) Settings
	// GoHealthCheck is gitops-engine's GetHealthCheckFunc(gvk) != nil.
	GoHealthCheck(gvk schema.GroupVersionKind) bool
	// Capabilities says what the release does differently.
	Capabilities() Capabilities
}

// Capabilities are what differ between releases, as data the checks ask for.
type Capabilities struct {
	// ActionParams: actionParams reach action scripts (v3; v2.14's ExecuteResourceAction takes none).
	ActionParams bool
	// NoHealth: a script returning nil is "no health", scripts run for objects being deleted and may
	// give a deletionMessage, and the built-in suites hold a pointer (v3.6).
	NoHealth bool
	// BuiltinWildcards: the built-in tree has wildcard folders that resolution must reach (v3).
	BuiltinWildcards bool
	// WrapsHealthErrors: gitops-engine wraps a health script's error, whose cause the fuzz findings name
	// (v3).
	WrapsHealthErrors bool
	// BuiltinActions are the release's own actions per kind with actions of ours.
	BuiltinActions map[string][]string
}

// Override is one entry of Argo CD's resource overrides (v1alpha1.ResourceOverride).
type Override struct {
	HealthLua   string
	UseOpenLibs bool
	Actions     string
	// IgnoreJSONPointers are the ignoreDifferences JSON pointers.
	IgnoreJSONPointers []string
}

// ResourceActions is an actions value as Argo CD's ResourceOverride.GetActions parses it.
type ResourceActions struct {
	MergeBuiltinActions bool
	DiscoveryLua        string
	Definitions         []ActionDefinition
}

// ActionDefinition is one action of a ResourceActions.
type ActionDefinition struct{ Name, ActionLua string }

// Settings is Argo CD with one argocd-cm loaded: the controller's health path and the API server's
// action path (util/lua VM with the overrides). Objects are passed as decoded JSON and copied before
// Argo CD sees them.
type Settings interface {
	// Override is the loaded override for key (group/Kind).
	Override(key string) (Override, bool)
	// Actions parses the override's actions value (ResourceOverride.GetActions).
	Actions(key string) (ResourceActions, error)
	// ResourceHealth is what the controller records: gitops-engine GetResourceHealth over these overrides.
	ResourceHealth(obj map[string]any) (*engine.Health, error)
	// Evaluator is ResourceHealth without the conversion, for the benchmarks.
	Evaluator() func(*unstructured.Unstructured) error
	// HealthScript is util/lua GetHealthScript: the script and whether it gets the open libraries.
	HealthScript(obj map[string]any) (script string, openLibs bool, err error)
	// ExecuteHealth is util/lua ExecuteHealthLua with the given libraries.
	ExecuteHealth(obj map[string]any, script string, openLibs bool) (*engine.Health, error)
	// DiscoveryScripts is GetResourceActionDiscovery.
	DiscoveryScripts(obj map[string]any) ([]string, error)
	// Discover is ExecuteResourceActionDiscovery, sorted by name.
	Discover(obj map[string]any, scripts []string) ([]engine.Action, error)
	// ActionScript is GetResourceAction's action.lua.
	ActionScript(obj map[string]any, name string) (string, error)
	// RunAction is ExecuteResourceAction; where the release panics, the error starts "argo-cd panicked: ".
	RunAction(obj map[string]any, script string, params map[string]string) ([]engine.Impacted, error)
}

// ArgoCM is a labelled argocd-cm in namespace argocd holding data.
func ArgoCM(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
		Data: data,
	}
}

// ArgoSecret is the argocd-secret the SettingsManager needs beside cm.
func ArgoSecret(namespace string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data: map[string][]byte{"server.secretkey": []byte("test")},
	}
}

// Load loads data as a labelled argocd-cm; Argo CD refusing it fails the test.
func Load(t testing.TB, r Release, data map[string]string) Settings {
	t.Helper()
	s, err := r.Load(t, ArgoCM(data))
	if err != nil {
		t.Fatalf("Argo CD %s rejects the ConfigMap: %v", r.Version(), err)
	}
	return s
}

// Defaults is Argo CD without an argocd-cm: its built-in scripts only.
func Defaults(r Release) Settings { return r.Overrides(nil) }

// loaded holds Settings that many checks compare with (the default options' argocd-cm, the hand-built
// actions, a format's base), per release: each is loaded once, since the SettingsManager's informers
// take a while to sync and what they hand over is a map that is only read.
var loaded sync.Map

// LoadOnce is Load for data that does not change between checks, named by key.
func LoadOnce(t testing.TB, r Release, key string, cm func() *corev1.ConfigMap) Settings {
	t.Helper()
	id := r.Version() + "\x00" + key
	if s, ok := loaded.Load(id); ok {
		return s.(Settings)
	}
	s := LoadCM(t, r, cm())
	loaded.Store(id, s)
	return s
}

// RepoFile is a path below the repository root.
func RepoFile(t testing.TB, rel string) string {
	t.Helper()
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}
