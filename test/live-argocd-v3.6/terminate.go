package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	appclientset "github.com/argoproj/argo-cd/v3/pkg/client/clientset/versioned"
)

// terminateOp is `argocd app terminate-op` as argocd-server's TerminateOperation carries it out
// (server/application/application.go, v3.6.2): with an operation in progress, the Application's
// status.operationState.phase set to Terminating by an update, retried on conflicts up to ten times; the
// application controller then stops the sync. The server's RBAC check and audit event are left out.
//
//	argocd-live terminate-op -kubeconfig K -namespace argocd -app NAME
func terminateOp(args []string) error {
	fs := flag.NewFlagSet("terminate-op", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the API server")
	namespace := fs.String("namespace", "argocd", "the Application's namespace")
	name := fs.String("app", "", "the Application")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" {
		return errors.New("-app is required")
	}
	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	apps, err := appclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	client := apps.ArgoprojV1alpha1().Applications(*namespace)
	a, err := client.Get(ctx, *name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for range 10 {
		if a.Operation == nil || a.Status.OperationState == nil {
			return fmt.Errorf("unable to terminate operation of %s: no operation is in progress", *name)
		}
		a.Status.OperationState.Phase = common.OperationTerminating
		_, err := client.Update(ctx, a, metav1.UpdateOptions{})
		if err == nil {
			fmt.Printf("terminating the operation of %s\n", *name)
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("error updating application: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
		if a, err = client.Get(ctx, *name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("error getting application by name: %w", err)
		}
	}
	return fmt.Errorf("failed to terminate the operation of %s: too many conflicts", *name)
}
