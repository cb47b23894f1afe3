package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/clusterauth"
	"github.com/argoproj/argo-cd/v3/util/db"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// clusterAdd registers a workload cluster with Argo CD as `argocd cluster add` does (cmd/argocd/commands/
// cluster.go, v3.6.2): util/clusterauth InstallClusterManagerRBAC makes the argocd-manager ServiceAccount,
// ClusterRole and binding in the workload cluster and reads the bearer token of its service-account-token
// Secret, and the cluster (server, token, the CA) is stored by util/db CreateCluster, as argocd-server's
// cluster Create stores it: a Secret labelled argocd.argoproj.io/secret-type=cluster.
//
// The workload API server runs no kube-controller-manager, whose token controller fills such a Secret: this
// command stands in for it, with a TokenRequest bound to the Secret (deleting the Secret revokes it).
//
//	argocd-live cluster-add -kubeconfig CONTROL_PLANE -namespace argocd -cluster-kubeconfig WORKLOAD -name N -server URL -ca-file CA
func clusterAdd(args []string) error {
	fs := flag.NewFlagSet("cluster-add", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "Argo CD's cluster")
	namespace := fs.String("namespace", "argocd", "Argo CD's namespace")
	clusterKubeconfig := fs.String("cluster-kubeconfig", "", "the workload cluster, with rights to make the argocd-manager RBAC")
	name := fs.String("name", "", "the cluster's name in Argo CD")
	server := fs.String("server", "", "the workload API server's address, as Argo CD reaches it")
	caFile := fs.String("ca-file", "", "the workload API server's certificate authority (PEM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *server == "" || *caFile == "" {
		return errors.New("-name, -server and -ca-file are required")
	}
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		return fmt.Errorf("-ca-file: %w", err)
	}
	wcfg, err := config(*clusterKubeconfig)
	if err != nil {
		return err
	}
	workload, err := kubernetes.NewForConfig(wcfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go fillTokenSecret(ctx, workload, "kube-system", clusterauth.ArgoCDManagerServiceAccount+clusterauth.SATokenSecretSuffix)
	token, err := clusterauth.InstallClusterManagerRBAC(workload, "kube-system", nil, 30*time.Second)
	if err != nil {
		return err
	}
	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	argoDB := db.NewDB(*namespace, settings.NewSettingsManager(ctx, kube, *namespace), kube)
	c, err := argoDB.CreateCluster(ctx, &v1alpha1.Cluster{Server: *server, Name: *name, Config: v1alpha1.ClusterConfig{
		BearerToken: token, TLSClientConfig: v1alpha1.TLSClientConfig{CAData: ca}}})
	if err != nil {
		return err
	}
	fmt.Printf("cluster %s (%s) added\n", c.Name, c.Server)
	return nil
}

// fillTokenSecret is the token controller's part for one Secret: once clusterauth has made it, its
// token is set to a TokenRequest for its ServiceAccount, bound to the Secret.
func fillTokenSecret(ctx context.Context, kube kubernetes.Interface, ns, name string) {
	for ctx.Err() == nil {
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || s.Type != corev1.SecretTypeServiceAccountToken || len(s.Data[corev1.ServiceAccountTokenKey]) > 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		sa := s.Annotations[corev1.ServiceAccountNameKey]
		expiry := int64(24 * time.Hour / time.Second)
		tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &expiry,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: s.Name, UID: s.UID},
		}}, metav1.CreateOptions{})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(tr.Status.Token)
		if _, err := kube.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
}
