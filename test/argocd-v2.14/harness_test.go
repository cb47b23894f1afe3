package conformance

import (
	"context"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/settings"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/suite"
)

// loadOverrides reads cm the way the application controller does: cm and an argocd-secret in a (fake)
// cluster, read by v2.14's util/settings SettingsManager, which only sees a labelled argocd-cm and
// validates every resource.customizations key.
func loadOverrides(t testing.TB, cm *corev1.ConfigMap) (map[string]v1alpha1.ResourceOverride, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewSimpleClientset(cm, suite.ArgoSecret(cm.Namespace))
	return settings.NewSettingsManager(ctx, client, cm.Namespace).GetResourceOverrides()
}

// overridesFromConfigMap loads argocd-cm data (a labelled argocd-cm in namespace argocd).
func overridesFromConfigMap(t testing.TB, data map[string]string) (map[string]v1alpha1.ResourceOverride, error) {
	t.Helper()
	return loadOverrides(t, suite.ArgoCM(data))
}

func unstructuredFrom(t testing.TB, raw []byte) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func fixtures(t testing.TB) []lua.Fixture {
	t.Helper()
	return suite.Fixtures(t)
}
