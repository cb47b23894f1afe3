// Command argocd-live runs Argo CD v3.6.2's own application controller and repo-server against an API
// server reached by kubeconfig, for the live end-to-end suite (test/rollouts-v1.10 live_test.go). It is a
// module of its own because Argo CD v3.6.2 pins k8s.io/* v0.37.0 and Argo Rollouts v1.10.2, whose
// controllers the suite runs in its own process, pins v0.34.5.
//
//	argocd-live install -kubeconfig K -namespace argocd [-values generated.yaml]... -chart DIR
//	argocd-live run -kubeconfig K -namespace argocd -state DIR
//	argocd-live action -kubeconfig K -namespace argocd -resource G/V/R -resource-namespace NS -name N -action A
//	argocd-live terminate-op -kubeconfig K -namespace argocd -app NAME
//
// install creates Argo CD's CRDs from the module's manifests/crds, the namespace, and argocd-cm,
// argocd-secret, argocd-cmd-params-cm and argocd-notifications-cm as the argo-helm chart renders them with
// the given values files, merged in order as `helm template -f a -f b` merges them (none: the chart's
// defaults, so Argo CD's built-in health checks), with Helm's own library, the steps of `helm template`.
//
// run wires the two components as cmd/argocd-repo-server and cmd/argocd-application-controller do
// (github.com/argoproj/argo-cd/v3@v3.6.2/cmd/*/commands), the controller's --persist-resource-health read
// from argocd-cmd-params-cm's controller.resource.health.persist as the chart's StatefulSet passes it (an
// env var from a configMapKeyRef, optional), with these differences, all for a test on a
// shared machine: the caches are in memory (util/cache NewInMemoryCache) instead of Redis, the repo-server
// serves plaintext gRPC on 127.0.0.1, the controller's metrics server listens on 127.0.0.1 and the
// askpass socket lives in -state. It prints "ready <repo-server address>" once both run, and stops when
// its stdin is closed.
//
// action runs a resource action, and terminate-op terminates a running sync, as argocd-server does
// (action.go, terminate.go).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"

	log "github.com/sirupsen/logrus"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	commitclient "github.com/argoproj/argo-cd/v3/commitserver/apiclient"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/controller/sharding"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	appclientset "github.com/argoproj/argo-cd/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-cd/v3/reposerver"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	reposervercache "github.com/argoproj/argo-cd/v3/reposerver/cache"
	repometrics "github.com/argoproj/argo-cd/v3/reposerver/metrics"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/argo"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v3/util/askpass"
	cacheutil "github.com/argoproj/argo-cd/v3/util/cache"
	appstatecache "github.com/argoproj/argo-cd/v3/util/cache/appstate"
	"github.com/argoproj/argo-cd/v3/util/env"
	kubeutil "github.com/argoproj/argo-cd/v3/util/kube"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/argo-cd/v3/util/tls"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-live install|run|action|terminate-op|cluster-add [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "install":
		err = install(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	case "action":
		err = action(os.Args[2:])
	case "terminate-op":
		err = terminateOp(os.Args[2:])
	case "cluster-add":
		err = clusterAdd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (install, run, action, terminate-op or cluster-add)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-live:", err)
		os.Exit(1)
	}
}

func config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, errors.New("-kubeconfig is required")
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// moduleDir is the directory of the argo-cd module this program is built against (not built with
// -trimpath: the file names of its functions are absolute).
func moduleDir() (string, error) {
	pc := reflect.ValueOf(controller.NewApplicationController).Pointer()
	file, _ := runtime.FuncForPC(pc).FileLine(pc)
	// .../argo-cd/v3@v3.6.2/controller/appcontroller.go
	dir := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(dir, "manifests", "crds")); err != nil {
		return "", fmt.Errorf("Argo CD's manifests/crds not found next to %s (built with -trimpath?)", file)
	}
	return dir, nil
}

var crdFiles = map[string]string{
	"application-crd.yaml": "applications.argoproj.io",
	"appproject-crd.yaml":  "appprojects.argoproj.io",
}

func install(args []string) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := fs.String("namespace", "argocd", "Argo CD's namespace")
	var values valuesFiles
	fs.Var(&values, "values", "a Helm values file for the argo-helm argo-cd chart (generate --format helm, --format notifications), repeatable; none: the chart's defaults")
	chartDir := fs.String("chart", "", "the argo-helm argo-cd chart directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	if *chartDir == "" {
		return errors.New("-chart is required")
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := installCRDs(ctx, dyn); err != nil {
		return err
	}
	objs, err := renderChart(*chartDir, values, *namespace)
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, o := range objs {
		res := schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(o.GetKind()) + "s"}
		client := dyn.Resource(res).Namespace(*namespace)
		// replaced, not merged: a run with the built-ins follows one with our scripts
		if err := client.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := client.Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func installCRDs(ctx context.Context, dyn dynamic.Interface) error {
	dir, err := moduleDir()
	if err != nil {
		return err
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for file, name := range crdFiles {
		path := filepath.Join(dir, "manifests", "crds", file)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if obj.GetName() != name {
			return fmt.Errorf("%s: CRD %q, want %q", path, obj.GetName(), name)
		}
		if _, err := crds.Create(ctx, &obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, name := range crdFiles {
		for {
			crd, err := crds.Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after a minute", name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// valuesFiles is the repeatable -values flag.
type valuesFiles []string

func (v *valuesFiles) String() string     { return strings.Join(*v, ",") }
func (v *valuesFiles) Set(s string) error { *v = append(*v, s); return nil }

// renderedObjects are what install creates from the chart, by name.
var renderedObjects = map[string]string{
	"argocd-cm": "ConfigMap", "argocd-secret": "Secret", "argocd-cmd-params-cm": "ConfigMap", "argocd-notifications-cm": "ConfigMap",
}

// renderChart renders the chart as `helm template argocd <chart> -n <namespace> -f values...` does (Helm's
// loader, dependency processing, schema validation and engine; the values files merged in order, a later
// one's keys over an earlier one's, as `helm template` merges -f files: pkg/cli/values Options.MergeValues)
// and returns the renderedObjects.
func renderChart(chartDir string, valuesFiles []string, namespace string) ([]*unstructured.Unstructured, error) {
	vals := map[string]any{}
	for _, valuesFile := range valuesFiles {
		raw, err := os.ReadFile(valuesFile)
		if err != nil {
			return nil, err
		}
		cur, err := chartutil.ReadValues(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", valuesFile, err)
		}
		vals = mergeMaps(vals, cur)
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	// the chart's one dependency, redis-ha (condition redis-ha.enabled, false by default), is not
	// vendored: dropped, as test/argocd-v3.6's chartCopy drops it
	var deps []*chart.Dependency
	for _, d := range chrt.Metadata.Dependencies {
		if d.Name != "redis-ha" {
			deps = append(deps, d)
		}
	}
	chrt.Metadata.Dependencies = deps
	if err := chartutil.ProcessDependenciesWithMerge(chrt, chartutil.Values(vals)); err != nil {
		return nil, err
	}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, chartutil.Values(vals),
		chartutil.ReleaseOptions{Name: "argocd", Namespace: namespace, Revision: 1, IsInstall: true},
		chartutil.DefaultCapabilities.Copy(), false)
	if err != nil {
		return nil, err
	}
	rendered, err := helmengine.Render(chrt, top)
	if err != nil {
		return nil, fmt.Errorf("helm template: %w", err)
	}
	want := renderedObjects
	found := map[string]*unstructured.Unstructured{}
	for name, content := range rendered {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil || obj.Object == nil {
				continue
			}
			if kind, ok := want[obj.GetName()]; ok && obj.GetKind() == kind {
				if found[obj.GetName()] != nil {
					return nil, fmt.Errorf("the chart rendered %s twice (%s)", obj.GetName(), name)
				}
				obj.SetNamespace(namespace)
				found[obj.GetName()] = &obj
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, name := range []string{"argocd-cm", "argocd-secret", "argocd-cmd-params-cm", "argocd-notifications-cm"} {
		if found[name] == nil {
			return nil, fmt.Errorf("the chart %s rendered no %s", chartDir, name)
		}
		out = append(out, found[name])
	}
	return out, nil
}

// mergeMaps is b over a, maps merged key by key at every depth, any other value of b replacing a's: the
// merge of `helm template -f a -f b`.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// persistResourceHealthEnv is the application controller's --persist-resource-health flag's variable
// (cmd/argocd-application-controller/commands), which the chart's StatefulSet sets from
// argocd-cmd-params-cm's controller.resource.health.persist (configMapKeyRef, optional: unset without it).
const persistResourceHealthEnv = "ARGOCD_APPLICATION_CONTROLLER_PERSIST_RESOURCE_HEALTH"

// persistResourceHealth is the flag's value as the controller's command reads it, from the installed
// argocd-cmd-params-cm: env.ParseBoolFromEnv with the command's default, false.
func persistResourceHealth(ctx context.Context, kube kubernetes.Interface, namespace string) (bool, error) {
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, "argocd-cmd-params-cm", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	os.Unsetenv(persistResourceHealthEnv)
	if v, ok := cm.Data["controller.resource.health.persist"]; err == nil && ok {
		os.Setenv(persistResourceHealthEnv, v)
	}
	return env.ParseBoolFromEnv(persistResourceHealthEnv, false), nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := fs.String("namespace", "argocd", "Argo CD's namespace")
	state := fs.String("state", "", "directory for the askpass socket")
	logLevel := fs.String("loglevel", "info", "logrus level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *state == "" {
		return errors.New("-state is required")
	}
	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	lvl, err := log.ParseLevel(*logLevel)
	if err != nil {
		return err
	}
	log.SetLevel(lvl)
	log.SetFormatter(&log.JSONFormatter{})
	log.SetOutput(os.Stderr)
	// the in-cluster destination (https://kubernetes.default.svc) is this kubeconfig's server, and GnuPG
	// is off for the repo-server, as in Argo CD's own Procfile
	os.Setenv(v1alpha1.EnvVarFakeInClusterConfig, "true")
	os.Setenv("KUBECONFIG", *kubeconfig)
	os.Setenv("ARGOCD_GPG_ENABLED", "false")
	// the repo-server clones into $TMPDIR/_argocd-repo (reposerver/server.go): this run's own
	os.Setenv("TMPDIR", *state)
	if err := installHelpers(*state); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := runRepoServer(ctx, *state)
	if err != nil {
		return err
	}
	persist, err := runController(ctx, cfg, *namespace, addr)
	if err != nil {
		return err
	}
	fmt.Println("ready", addr, "persist-resource-health", persist)
	// stop with the parent
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return nil
}

// installHelpers puts the scripts Argo CD's image ships in /usr/local/bin (Dockerfile: hack/git-verify-wrapper.sh,
// which the repo-server runs for every revision it generates manifests of, util/git VerifyCommitSignature)
// on PATH, from the module.
func installHelpers(state string) error {
	dir, err := moduleDir()
	if err != nil {
		return err
	}
	bin := filepath.Join(state, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "hack", "git-verify-wrapper.sh"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(bin, "git-verify-wrapper.sh"), raw, 0o755); err != nil {
		return err
	}
	return os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// runRepoServer is cmd/argocd-repo-server/commands NewCommand's RunE with its flags' defaults.
func runRepoServer(ctx context.Context, state string) (string, error) {
	quantity := func(s string) int64 { q := resource.MustParse(s); return q.ToDec().Value() }
	repoCacheExpiration := 24 * time.Hour
	cache := reposervercache.NewCache(cacheutil.NewCache(cacheutil.NewInMemoryCache(repoCacheExpiration)),
		repoCacheExpiration, 3*time.Minute, 10*time.Second)
	askpass.SocketPath = filepath.Join(state, "reposerver-ask-pass.sock")
	askPassServer := askpass.NewServer(askpass.SocketPath)
	server, err := reposerver.NewServer(repometrics.NewMetricsServer(), cache, nil, repository.RepoServerInitConstants{
		PauseGenerationAfterFailedGenerationAttempts: 3,
		PauseGenerationOnFailureForMinutes:           60,
		SubmoduleEnabled:                             true,
		MaxCombinedDirectoryManifestsSize:            resource.MustParse("10M"),
		StreamedManifestMaxTarSize:                   quantity("100M"),
		StreamedManifestMaxExtractedSize:             quantity("1G"),
		HelmManifestMaxExtractedSize:                 quantity("1G"),
		HelmRegistryMaxIndexSize:                     quantity("1G"),
		OCIManifestMaxExtractedSize:                  quantity("1G"),
		EnableBuiltinGitConfig:                       true,
		HelmChartCacheExpiration:                     repoCacheExpiration,
	}, askPassServer, "", true)
	if err != nil {
		return "", err
	}
	go func() {
		if err := askPassServer.Run(); err != nil {
			log.Fatalf("askpass: %v", err)
		}
	}()
	grpc := server.CreateGRPC()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		if err := grpc.Serve(ln); err != nil {
			log.Fatalf("repo-server: %v", err)
		}
	}()
	return ln.Addr().String(), nil
}

// runController is cmd/argocd-application-controller/commands NewCommand's RunE with its flags' defaults,
// except the resync period (-app-resync): 24 h, so that what the controller does is driven by its watches
// (and the refreshes the suite requests), not by a timer racing the test; and --persist-resource-health,
// from argocd-cmd-params-cm as installed. It returns that flag's value.
func runController(ctx context.Context, config *rest.Config, namespace, repoAddr string) (bool, error) {
	if err := v1alpha1.SetK8SConfigDefaults(config); err != nil {
		return false, err
	}
	config.UserAgent = fmt.Sprintf("%s/%s", common.DefaultApplicationControllerName, common.GetVersion().Version)
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return false, err
	}
	appClient, err := appclientset.NewForConfig(config)
	if err != nil {
		return false, err
	}
	persist, err := persistResourceHealth(ctx, kubeClient, namespace)
	if err != nil {
		return false, err
	}
	repoClientset := apiclient.NewRepoServerClientset(repoAddr, 60, tls.Configuration{DisableTLS: true})
	// the hydrator is off: the commit server is never called
	commitClientset := commitclient.NewCommitServerClientset(common.DefaultCommitServerAddr)
	cache := appstatecache.NewCache(cacheutil.NewCache(cacheutil.NewInMemoryCache(time.Hour)), time.Hour)
	var appController *controller.ApplicationController
	settingsMgr := settings.NewSettingsManager(ctx, kubeClient, namespace, settings.WithRepoOrClusterChangedHandler(func() {
		appController.InvalidateProjectsCache()
	}))
	clusterSharding, err := sharding.GetClusterSharding(kubeClient, settingsMgr, common.DefaultShardingAlgorithm, false)
	if err != nil {
		return false, err
	}
	appController, err = controller.NewApplicationController(
		namespace, settingsMgr, kubeClient, appClient, repoClientset, commitClientset, cache, kubeutil.NewKubectl(),
		24*time.Hour, // appResyncPeriod
		0,            // appHardResyncPeriod
		0,            // appResyncJitter
		0,            // selfHealTimeout
		&wait.Backoff{Duration: 2 * time.Second, Factor: 3, Cap: 300 * time.Second},
		0,                 // syncTimeout
		180*time.Second,   // repoErrorGracePeriod
		0,                 // metricsPort (the address is set below)
		0,                 // metricsCacheExpiration
		nil, nil, nil, 20, // metrics labels, conditions, cluster labels; kubectlParallelismLimit
		persist, // persistResourceHealth
		clusterSharding,
		nil, // applicationNamespaces
		nil, // the default work queue rate limits
		false, false, normalizers.IgnoreNormalizerOpts{}, argo.DefaultEnableEventList(), false,
	)
	if err != nil {
		return false, err
	}
	appController.GetMetricsServer().Addr = "127.0.0.1:0"
	go appController.Run(ctx, 20, 10, 5)
	return persist, nil
}
