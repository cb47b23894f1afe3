package cluster

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// manifestResources are the kinds a generated manifest of the multi-cluster steps holds (rbac.yaml, the
// kubeconfig Secret), by their resource.
var manifestResources = map[string]string{"ServiceAccount": "serviceaccounts", "Role": "roles", "RoleBinding": "rolebindings", "Secret": "secrets"}

// ApplyManifests creates, or replaces, every object of a YAML stream of namespaced objects with c, as
// `kubectl apply -f` of a generated file does.
func ApplyManifests(c dynamic.Interface, raw []byte) error {
	ctx := context.Background()
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return err
		}
		if o == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: o}
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		if err != nil {
			return err
		}
		res := manifestResources[u.GetKind()]
		if res == "" {
			return fmt.Errorf("unexpected %s %s in a manifest", u.GetKind(), u.GetName())
		}
		rc := c.Resource(gv.WithResource(res)).Namespace(u.GetNamespace())
		cur, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
		case err == nil:
			u.SetResourceVersion(cur.GetResourceVersion())
			_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return nil
}
