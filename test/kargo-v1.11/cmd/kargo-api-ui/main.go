// Command kargo-api-ui is Kargo v1.11.2's own API server (github.com/akuity/kargo/pkg/server) serving
// Kargo's own web UI, built from its source (bin/upstream/kargo/v1.11.2/ui, `make upstream`, `make kargo-ui`),
// for the browser proof of test/rollouts/kargoui. Kargo's released image embeds the built UI in
// pkg/server/ui; the Go module holds that folder empty, so the command `controlplane api` of the module
// serves no page. This program runs the server as that command does (cmd/controlplane/api.go,
// apiOptions.run: the configuration from Kargo's own environment variables, config.ServerConfigFromEnv,
// the Kubernetes client, the Argo Rollouts check, the roles database and the event sender), with two
// differences: ServerConfig.DashboardFS is the folder given by -ui, and it listens on 127.0.0.1 only.
//
// Environment: Kargo's own (KUBECONFIG, KARGO_NAMESPACE, ADMIN_ACCOUNT_* for the admin login, LOG_LEVEL,
// ...; the chart's templates/api/configmap.yaml and secret.yaml set them in a cluster), and PORT (default
// 0: a free port). BIND_ADDRESS is refused unless it is 127.0.0.1. Once listening, the program prints
// "listening http://127.0.0.1:PORT" on stdout; it stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	k8sevent "github.com/akuity/kargo/pkg/event/kubernetes"
	"github.com/akuity/kargo/pkg/kubernetes/event"
	"github.com/akuity/kargo/pkg/logging"
	kargoos "github.com/akuity/kargo/pkg/os"
	"github.com/akuity/kargo/pkg/server"
	"github.com/akuity/kargo/pkg/server/config"
	"github.com/akuity/kargo/pkg/server/kubernetes"
	"github.com/akuity/kargo/pkg/server/rbac"
)

// host is the only address the program listens on: the proof's browser and API server are on this
// machine, and nothing else should reach a server whose admin password the test chose.
const host = "127.0.0.1"

func main() {
	ui := flag.String("ui", "", "the built UI: a folder with index.html at its top (make kargo-ui writes bin/kargo-ui)")
	flag.Parse()
	if *ui == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: kargo-api-ui -ui DIR")
		os.Exit(2)
	}
	ctx := signals.SetupSignalHandler()
	if err := run(ctx, *ui); err != nil {
		fmt.Fprintln(os.Stderr, "kargo-api-ui:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, ui string) error {
	logger := logging.LoggerFromContext(ctx)
	dashboard := os.DirFS(ui)
	// A folder without index.html would serve Kargo's "not found" for every page: say so at the start.
	if _, err := fs.Stat(dashboard, "index.html"); err != nil {
		return fmt.Errorf("the built UI %s has no index.html (make kargo-ui builds it): %w", ui, err)
	}
	if b := os.Getenv("BIND_ADDRESS"); b != "" && b != host {
		return fmt.Errorf("BIND_ADDRESS=%s: this program listens on %s only", b, host)
	}
	port := kargoos.GetEnv("PORT", "0")

	// From here on as apiOptions.complete and apiOptions.run (cmd/controlplane/api.go).
	serverCfg := config.ServerConfigFromEnv()
	serverCfg.DashboardFS = dashboard
	restCfg, err := kubernetes.GetRestConfig(ctx, os.Getenv("KUBECONFIG"))
	if err != nil {
		return fmt.Errorf("the Kubernetes client configuration (KUBECONFIG=%q): %w", os.Getenv("KUBECONFIG"), err)
	}
	// Parsed here rather than with Kargo's types.MustParse*, which panic on a bad value.
	qps, err := strconv.ParseFloat(kargoos.GetEnv("KUBE_API_QPS", "50.0"), 32)
	if err != nil {
		return fmt.Errorf("KUBE_API_QPS: %w", err)
	}
	burst, err := strconv.Atoi(kargoos.GetEnv("KUBE_API_BURST", "300"))
	if err != nil {
		return fmt.Errorf("KUBE_API_BURST: %w", err)
	}
	kubernetes.ConfigureQPSBurst(ctx, restCfg, float32(qps), burst)
	serverCfg.RestConfig = restCfg

	kubeClientOptions := kubernetes.ClientOptions{KargoNamespace: serverCfg.KargoNamespace}
	if serverCfg.OIDCConfig != nil {
		kubeClientOptions.GlobalServiceAccountNamespaces = serverCfg.OIDCConfig.GlobalServiceAccountNamespaces
	}
	kubeClient, err := kubernetes.NewClient(ctx, restCfg, kubeClientOptions)
	if err != nil {
		return fmt.Errorf("the Kubernetes client of Kargo's API server: %w", err)
	}
	if serverCfg.RolloutsIntegrationEnabled {
		// The AnalysisRuns of a Stage's verification are shown only with the integration, which the
		// command turns off when the cluster has no Argo Rollouts CRDs.
		exists, err := argoRolloutsExists(ctx, restCfg)
		if err != nil {
			return fmt.Errorf("whether Argo Rollouts is installed: %w", err)
		}
		if !exists {
			logger.Info("Argo Rollouts integration was enabled, but no Argo Rollouts CRDs were found. Proceeding without Argo Rollouts integration.")
			serverCfg.RolloutsIntegrationEnabled = false
		}
	}
	if serverCfg.AdminConfig != nil {
		logger.Info("admin account is enabled")
	}

	recorder, shutdown := event.NewRecorderWithShutdown(ctx, kubeClient.InternalClient().Scheme(), kubeClient.InternalClient(), "api")
	sender := k8sevent.NewEventSenderWithShutdown(recorder, shutdown)
	defer sender.Shutdown()

	srv := server.NewServer(serverCfg, kubeClient,
		rbac.NewKubernetesRolesDatabase(kubeClient, kubeClient.InternalClient(), rbac.RolesDatabaseConfigFromEnv()),
		sender)
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("listen on %s port %s: %w", host, port, err)
	}
	defer l.Close()
	// The one line a harness waits for: the port is known only now when PORT is 0.
	fmt.Printf("listening http://%s\n", l.Addr())
	if err := srv.Serve(ctx, l); err != nil {
		return fmt.Errorf("serving Kargo's API: %w", err)
	}
	return nil
}

// argoRolloutsExists tells whether the cluster serves Argo Rollouts' AnalysisTemplates, as the
// command's own check does (cmd/controlplane/utils.go argoRolloutsExists, unexported in package main):
// a list that fails with NotFound means "not installed", any other failure is an error.
func argoRolloutsExists(ctx context.Context, restCfg *rest.Config) (bool, error) {
	c, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return false, err
	}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysistemplates"}
	if _, err = c.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
		return true, nil
	}
	if client.IgnoreNotFound(err) == nil {
		return false, nil
	}
	return false, errors.Join(errors.New("listing analysistemplates.argoproj.io"), err)
}
