package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v2/controller"
	statecache "github.com/argoproj/argo-cd/v2/controller/cache"
	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	appfake "github.com/argoproj/argo-cd/v2/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-cd/v2/util/argo"
	"github.com/argoproj/argo-cd/v2/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v2/util/db"
	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"github.com/argoproj/argo-cd/v2/util/settings"
	clustercache "github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/kube/kubetest"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/timeline"
)

const (
	argocdNamespace = "argocd"
	appName         = "checkout" // the Application; also the value of the Rollout's tracking label
	appDestination  = "https://kubernetes.default.svc"
)

var (
	rolloutGVR     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	analysisRunGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}
)

// argoCD is Argo CD v2.14's application controller, as far as health goes: its AppStateManager (controller/
// state.go CompareAppState, the comparison every app refresh runs; it calls controller/health.go
// setApplicationHealth, which is unexported) with resource overrides read from argocd-cm by util/settings'
// SettingsManager, and live state from a gitops-engine cluster cache.
type argoCD struct {
	name     string
	settings *settings.SettingsManager
	db       db.ArgoDB
}

// newArgoCD starts a SettingsManager over a fake cluster holding argocd-cm with the given data (nil: no
// customizations, i.e. Argo CD's built-in health scripts) and argocd-secret.
func newArgoCD(t testing.TB, name string, cmData map[string]string) *argoCD {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: argocdNamespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data:       cmData,
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: argocdNamespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		Data:       map[string][]byte{"server.secretkey": []byte("test")},
	}
	kube := fake.NewSimpleClientset(cm, secret)
	// the settings manager's informers live as long as the test binary: both installations are shared
	// by every test
	mgr := settings.NewSettingsManager(context.Background(), kube, argocdNamespace)
	if _, err := mgr.GetResourceOverrides(); err != nil {
		t.Fatalf("argocd-cm for %s: %v", name, err)
	}
	return &argoCD{name: name, settings: mgr, db: db.NewDB(argocdNamespace, mgr, kube)}
}

// oursConfigMapData installs our three health scripts under argocd-cm's split keys
// (resource.customizations.health.<group>_<Kind>), as docs/install.md does.
func oursConfigMapData(t testing.TB) map[string]string {
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

func application() *v1alpha1.Application {
	return &v1alpha1.Application{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Name: appName, Namespace: argocdNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop/deploy.git", Path: "checkout", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: appDestination, Namespace: "shop"},
		},
	}
}

func defaultProject() *v1alpha1.AppProject {
	return &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: argocdNamespace},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []metav1.GroupKind{{Group: "*", Kind: "*"}},
		},
	}
}

// desiredManifest is the Rollout as it is in Git: what Argo CD applied (metadata it manages, the spec).
func desiredManifest(live map[string]any) (string, error) {
	md := live["metadata"].(map[string]any)
	desired := map[string]any{
		"apiVersion": live["apiVersion"],
		"kind":       live["kind"],
		"metadata": map[string]any{
			"name":      md["name"],
			"namespace": md["namespace"],
			"labels":    md["labels"],
		},
		"spec": live["spec"],
	}
	// controller/state.go unmarshalManifests reads JSON, as `argocd app diff --local` sends it
	raw, err := json.Marshal(desired)
	return string(raw), err
}

// appHealth is the Application's health for one frame: the recorded Rollout and AnalysisRuns as the live
// state of the destination namespace, the Rollout as the App's only desired manifest.
func (a *argoCD) appHealth(t testing.TB, f *timeline.Frame) *v1alpha1.HealthStatus {
	t.Helper()
	live := newLiveState(t, a.settings, append([]*unstructured.Unstructured{f.RolloutObject()}, f.RunObjects()...))
	defer live.cluster.Invalidate()
	mgr := controller.NewAppStateManager(a.db, appfake.NewSimpleClientset(), nil, argocdNamespace, nil, nil, a.settings, live,
		nil, nil, nil, time.Minute, argo.NewResourceTracking(), true, 0, false, normalizers.IgnoreNormalizerOpts{})
	desired, err := desiredManifest(f.Rollout)
	if err != nil {
		t.Fatal(err)
	}
	app := application()
	// localManifests stands in for the repo server (a Level-3 comparison with `argocd app diff --local`
	// takes the same path); everything after it is the controller's regular comparison.
	res, err := mgr.CompareAppState(app, defaultProject(), []string{"main"}, []v1alpha1.ApplicationSource{*app.Spec.Source},
		true, false, []string{desired}, false, false)
	if err != nil {
		t.Fatalf("CompareAppState: %v", err)
	}
	for _, c := range app.Status.Conditions {
		if c.IsError() {
			t.Fatalf("CompareAppState reported %s: %s", c.Type, c.Message)
		}
	}
	if live.managedCalls == 0 {
		t.Fatal("CompareAppState never asked for the managed live objects")
	}
	return res.GetHealthStatus()
}

// healthOverride is what the application controller hands gitops-engine's sync engine for health: the
// argocd-cm overrides through Argo CD's Lua VM (util/lua ResourceHealthOverrides).
func (a *argoCD) healthOverride(t testing.TB) health.HealthOverride {
	t.Helper()
	overrides, err := a.settings.GetResourceOverrides()
	if err != nil {
		t.Fatal(err)
	}
	return argolua.ResourceHealthOverrides(overrides)
}

// resourceHealth is one object's health as the controller computes it for the resource tree
// (gitops-engine health.GetResourceHealth with the argocd-cm overrides), for the report's messages.
func (a *argoCD) resourceHealth(t testing.TB, obj *unstructured.Unstructured) *health.HealthStatus {
	t.Helper()
	overrides, err := a.settings.GetResourceOverrides()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := health.GetResourceHealth(obj.DeepCopy(), argolua.ResourceHealthOverrides(overrides))
	if err != nil {
		t.Fatalf("GetResourceHealth %s: %v", obj.GetName(), err)
	}
	if hs == nil {
		return &health.HealthStatus{}
	}
	return hs
}

// liveState implements controller/cache.LiveStateCache over a real gitops-engine cluster cache (pkg/
// cache.NewClusterCache, the cache the application controller keeps per cluster) that lists a fake
// dynamic client holding the frame's objects. Only the methods CompareAppState calls are implemented.
type liveState struct {
	statecache.LiveStateCache
	cluster      clustercache.ClusterCache
	appLabelKey  string
	tracking     v1alpha1.TrackingMethod
	installation string
	managedCalls int
}

func newLiveState(t testing.TB, mgr *settings.SettingsManager, objs []*unstructured.Unstructured) *liveState {
	t.Helper()
	scheme := runtime.NewScheme()
	var runtimeObjs []runtime.Object
	for _, o := range objs {
		runtimeObjs = append(runtimeObjs, o.DeepCopy())
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		rolloutGVR:     "RolloutList",
		analysisRunGVR: "AnalysisRunList",
	}, runtimeObjs...)
	appLabelKey, err := mgr.GetAppInstanceLabelKey()
	if err != nil {
		t.Fatal(err)
	}
	installation, err := mgr.GetInstallationID()
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveState{appLabelKey: appLabelKey, tracking: argo.GetTrackingMethod(mgr), installation: installation}
	tracking := argo.NewResourceTracking()
	resources := []kube.APIResourceInfo{
		{GroupKind: schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}, GroupVersionResource: rolloutGVR, Meta: metav1.APIResource{Namespaced: true}},
		{GroupKind: schema.GroupKind{Group: "argoproj.io", Kind: "AnalysisRun"}, GroupVersionResource: analysisRunGVR, Meta: metav1.APIResource{Namespaced: true}},
	}
	ls.cluster = clustercache.NewClusterCache(&rest.Config{Host: appDestination},
		clustercache.SetLogr(logr.Discard()),
		clustercache.SetKubectl(&kubetest.MockKubectlCmd{APIResources: resources, DynamicClient: client}),
		// as argo-cd controller/cache/cache.go getCluster: a resource belongs to an app only if it is a root
		// (no ownerReferences) and carries the app's tracking label/annotation
		clustercache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, isRoot bool) (any, bool) {
			info := &statecache.ResourceInfo{}
			if name := tracking.GetAppName(un, ls.appLabelKey, ls.tracking, ls.installation); isRoot && name != "" {
				info.AppName = name
			}
			return info, info.AppName != ""
		}),
	)
	if err := ls.cluster.EnsureSynced(); err != nil {
		t.Fatalf("cluster cache: %v", err)
	}
	return ls
}

func (l *liveState) GetClusterCache(string) (clustercache.ClusterCache, error) { return l.cluster, nil }

func (l *liveState) IsNamespaced(_ string, gk schema.GroupKind) (bool, error) {
	return l.cluster.IsNamespaced(gk)
}

// GetManagedLiveObjs is argo-cd controller/cache/cache.go liveStateCache.GetManagedLiveObjs: gitops-engine's
// ClusterCache.GetManagedLiveObjs keeps `isManaged(o) && len(o.OwnerRefs) == 0`, so the Rollout's
// AnalysisRuns never reach setApplicationHealth even though they carry the tracking label.
func (l *liveState) GetManagedLiveObjs(a *v1alpha1.Application, targetObjs []*unstructured.Unstructured) (map[kube.ResourceKey]*unstructured.Unstructured, error) {
	l.managedCalls++
	return l.cluster.GetManagedLiveObjs(targetObjs, func(r *clustercache.Resource) bool {
		info, ok := r.Info.(*statecache.ResourceInfo)
		return ok && info != nil && info.AppName == a.InstanceName(argocdNamespace)
	})
}

// argoCDs are the two installations every frame goes through; built once per test binary because a
// SettingsManager and its informers are not free.
var (
	argoCDsOnce sync.Once
	ours        *argoCD
	builtin     *argoCD
)

func installations(t testing.TB) (*argoCD, *argoCD) {
	argoCDsOnce.Do(func() {
		ours = newArgoCD(t, "ours", oursConfigMapData(t))
		builtin = newArgoCD(t, "built-in", nil)
	})
	if ours == nil || builtin == nil {
		t.Fatal("Argo CD installations failed to start")
	}
	return ours, builtin
}

func describe(hs *v1alpha1.HealthStatus) string {
	if hs.Message == "" {
		return string(hs.Status)
	}
	return fmt.Sprintf("%s (%s)", hs.Status, hs.Message)
}
