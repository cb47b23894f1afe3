package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	appclientset "github.com/argoproj/argo-cd/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-cd/v3/util/argo"
	"github.com/argoproj/argo-cd/v3/util/db"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// action runs a resource action the way argocd-server's RunResourceActionV2 does (server/application/
// application.go, v3.6.2), for the users' actions of the live scenarios (resume, retry): the resource
// overrides from the installed argocd-cm (util/settings GetResourceOverrides), the action's Lua from them
// or Argo CD's built-ins (util/lua VM.GetResourceAction), run by ExecuteResourceAction, and each impacted
// resource patched as patchResource patches it: a JSON merge patch from the live object to the new one,
// sent to the status subresource when it changes status and then, without status, to the object. The
// server's RBAC, project and audit steps are left out: the suite has no users or projects to check.
//
//	argocd-live action -kubeconfig K -namespace argocd -app APP -resource GROUP/VERSION/RESOURCE -resource-namespace NS -name N -action A
func action(args []string) error {
	fs := flag.NewFlagSet("action", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the API server")
	namespace := fs.String("namespace", "argocd", "Argo CD's namespace (argocd-cm)")
	resource := fs.String("resource", "", "the resource as group/version/resource, e.g. argoproj.io/v1alpha1/rollouts")
	resourceNS := fs.String("resource-namespace", "", "the object's namespace")
	name := fs.String("name", "", "the object's name")
	actionName := fs.String("action", "", "the action (e.g. resume)")
	appName := fs.String("app", "", "the Application the resource belongs to: the resource is read and patched in its destination cluster, "+
		"found as argocd-server finds it (getApplicationClusterConfig: util/argo GetDestinationCluster over the cluster Secrets)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	gvr, err := parseGVR(*resource)
	if err != nil {
		return err
	}
	if *name == "" || *actionName == "" || *resourceNS == "" {
		return errors.New("-name, -resource-namespace and -action are required")
	}
	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var dyn dynamic.Interface
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	ctx := context.Background()
	settingsMgr := settings.NewSettingsManager(ctx, kube, *namespace)
	overrides, err := settingsMgr.GetResourceOverrides()
	if err != nil {
		return fmt.Errorf("error getting resource overrides: %w", err)
	}
	if *appName != "" {
		if dyn, err = destinationClient(ctx, *kubeconfig, cfg, kube, settingsMgr, *namespace, *appName); err != nil {
			return err
		}
	}
	res := dyn.Resource(gvr).Namespace(*resourceNS)
	live, err := res.Get(ctx, *name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	liveBytes, err := json.Marshal(live)
	if err != nil {
		return err
	}
	vm := lua.VM{ResourceOverrides: overrides}
	def, err := vm.GetResourceAction(live, *actionName)
	if err != nil {
		return fmt.Errorf("error getting Lua resource action: %w", err)
	}
	impacted, err := vm.ExecuteResourceAction(live, def.ActionLua, nil)
	if err != nil {
		return fmt.Errorf("error executing Lua resource action: %w", err)
	}
	for _, ir := range impacted {
		switch ir.K8SOperation {
		case lua.PatchOperation:
			newBytes, err := json.Marshal(ir.UnstructuredObj)
			if err != nil {
				return err
			}
			if err := patchResource(ctx, res, *name, liveBytes, newBytes); err != nil {
				return err
			}
		case lua.CreateOperation:
			obj := ir.UnstructuredObj
			if _, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("error creating resource: %w", err)
			}
		}
	}
	fmt.Printf("ran action %s on %s %s/%s (%d resources)\n", *actionName, gvr.Resource, *resourceNS, *name, len(impacted))
	return nil
}

// destinationClient is a client of the Application's destination cluster, as argocd-server's
// getApplicationClusterConfig makes it (impersonation off, Argo CD's default): the destination resolved over
// the cluster Secrets by util/argo GetDestinationCluster, and that Cluster's RESTConfig. The in-cluster
// destination is the -kubeconfig cluster (v1alpha1.EnvVarFakeInClusterConfig, as in run).
func destinationClient(ctx context.Context, kubeconfig string, cfg *rest.Config, kube kubernetes.Interface, settingsMgr *settings.SettingsManager, namespace, name string) (dynamic.Interface, error) {
	apps, err := appclientset.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	app, err := apps.ArgoprojV1alpha1().Applications(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("Application %s/%s: %w", namespace, name, err)
	}
	os.Setenv(v1alpha1.EnvVarFakeInClusterConfig, "true")
	os.Setenv("KUBECONFIG", kubeconfig)
	dest, err := argo.GetDestinationCluster(ctx, app.Spec.Destination, db.NewDB(namespace, settingsMgr, kube))
	if err != nil {
		return nil, fmt.Errorf("error validating destination: %w", err)
	}
	rc, err := dest.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("error getting cluster REST config: %w", err)
	}
	return dynamic.NewForConfig(rc)
}

// patchResource follows server/application/application.go patchResource: the status part first through
// the status subresource (a 404 means the CRD has none: the whole patch goes to the object), then the rest.
func patchResource(ctx context.Context, res dynamic.ResourceInterface, name string, liveBytes, newBytes []byte) error {
	diff, err := jsonpatch.CreateMergePatch(liveBytes, newBytes)
	if err != nil {
		return fmt.Errorf("error calculating merge patch: %w", err)
	}
	if string(diff) == "{}" {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(diff, &obj); err != nil {
		return err
	}
	if _, ok := obj["status"]; ok {
		// as the server does, the whole diff goes to the status subresource, which applies only status
		_, err = res.Patch(ctx, name, types.MergePatchType, diff, metav1.PatchOptions{}, "status")
		switch {
		case err == nil:
			delete(obj, "status")
			diff = nil
			if len(obj) > 0 {
				if diff, err = json.Marshal(obj); err != nil {
					return err
				}
			}
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("error patching resource: %w", err)
		}
	}
	if diff != nil {
		if _, err := res.Patch(ctx, name, types.MergePatchType, diff, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("error patching resource: %w", err)
		}
	}
	return nil
}

func parseGVR(s string) (schema.GroupVersionResource, error) {
	i := strings.LastIndex(s, "/")
	if i <= 0 {
		return schema.GroupVersionResource{}, fmt.Errorf("-resource %q: want group/version/resource", s)
	}
	pgv, err := schema.ParseGroupVersion(s[:i])
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return pgv.WithResource(s[i+1:]), nil
}
