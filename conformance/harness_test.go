package conformance

import (
	"context"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/settings"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
)

// overridesFromConfigMap loads argocd-cm data the way the application controller does: a labelled
// argocd-cm and argocd-secret in a (fake) cluster, read by util/settings' SettingsManager, which also
// validates every resource.customizations key.
func overridesFromConfigMap(t testing.TB, data map[string]string) (map[string]v1alpha1.ResourceOverride, error) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-cm", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
		},
		Data: data,
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "argocd-secret", Namespace: "argocd",
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
		},
		Data: map[string][]byte{"server.secretkey": []byte("test")},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr := settings.NewSettingsManager(ctx, fake.NewSimpleClientset(cm, secret), "argocd")
	return mgr.GetResourceOverrides()
}

// bundledConfigMapData is argocd-cm data holding our health scripts under the split keys, written out here
// rather than by the generator so that this oracle does not depend on the code it checks.
func bundledConfigMapData(t testing.TB) map[string]string {
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
	fx, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	if len(fx) == 0 {
		t.Fatal("no fixtures found")
	}
	return fx
}
