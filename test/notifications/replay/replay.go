package replay

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/test/notifications"
)

// The replay: the release's own notifications controller (notification_controller/controller
// NewController, as cmd/argocd-notification runs it, on notifications-engine's controller, trigger, template
// and service packages at the version the release pins), on fake Kubernetes clients, fed one scenario's
// recorded Application frame by frame: frame 0 is there when the controller starts, each later one
// replaces the Application's spec and status (keeping the annotations the controller wrote: its notified
// state) once the controller has processed the one before, and every annotation patch it makes comes back
// to it as a watch event, as from an API server. Its deliveries go to the engine's mattermost service,
// pointed at a local HTTP server: the request carries the template's message as the engine rendered it.

const (
	namespace  = "argocd"
	cmName     = "argocd-notifications-cm"
	secretName = "argocd-notifications-secret"
)

var (
	applications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	appProjects  = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
)

// hook counts the controller's ends of processing (notifications-engine pkg/controller processQueueItem
// logs "Processing completed" or "Processing skipped: <reason>" at the end of each) and keeps its errors.
type hook struct {
	mu      sync.Mutex
	ends    int
	skipped []string
	errors  []string
}

func (h *hook) Levels() []log.Level { return log.AllLevels }

func (h *hook) Fire(e *log.Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case e.Message == "Processing completed":
		h.ends++
	case strings.HasPrefix(e.Message, "Processing skipped"):
		h.ends++
		h.skipped = append(h.skipped, e.Message)
	case e.Level <= log.ErrorLevel:
		h.errors = append(h.errors, e.Message)
	}
	return nil
}

func (h *hook) state() (ends, skipped int, errs []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ends, len(h.skipped), append([]string(nil), h.errors...)
}

// capture is the mattermost API the deliveries reach.
type capture struct {
	mu    sync.Mutex
	frame int
	fired []notifications.Fired
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var post struct {
		Channel string `json:"channel_id"`
		Message string `json:"message"`
	}
	raw, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/api/v4/posts" || json.Unmarshal(raw, &post) != nil {
		http.Error(w, "not a post", http.StatusBadRequest)
		return
	}
	trigger := map[string]string{notifications.OursRecipient: generator.NotificationsTrigger, notifications.CatalogRecipient: notifications.CatalogTrigger}[post.Channel]
	c.mu.Lock()
	c.fired = append(c.fired, notifications.Fired{Frame: c.frame, Trigger: trigger, Message: post.Message})
	c.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte("{}"))
}

// subscriptions are the Application's annotations subscribing it to both triggers, each on its own
// recipient of the mattermost service (notifications-engine pkg/subscriptions).
func subscriptions() map[string]any {
	return map[string]any{
		"notifications.argoproj.io/subscribe." + generator.NotificationsTrigger + ".mattermost": notifications.OursRecipient,
		"notifications.argoproj.io/subscribe." + notifications.CatalogTrigger + ".mattermost":   notifications.CatalogRecipient,
	}
}

// replay runs the scenario's frames through rel's controller configured with cm's data (and the
// mattermost service, whose token comes from the secret).
func replay(t *testing.T, rel Release, data map[string]string, sc *notifications.Scenario) notifications.Replay {
	t.Helper()
	cap := &capture{}
	srv := httptest.NewServer(cap)
	defer srv.Close()
	cmData := map[string]string{"service.mattermost": "apiURL: " + srv.URL + "\ntoken: $mattermost-token\n"}
	for k, v := range data {
		cmData[k] = v
	}
	kube := kubefake.NewSimpleClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cmName, Namespace: namespace}, Data: cmData},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}, Data: map[string][]byte{"mattermost-token": []byte("replay")}},
	)
	frameObject := func(i int, annotations map[string]any) *unstructured.Unstructured {
		raw, _ := json.Marshal(sc.Frames[i].Application)
		var obj map[string]any
		_ = json.Unmarshal(raw, &obj)
		_ = unstructured.SetNestedMap(obj, annotations, "metadata", "annotations")
		return &unstructured.Unstructured{Object: obj}
	}
	project := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": namespace},
		"spec":     map[string]any{"sourceRepos": []any{"*"}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{applications: "ApplicationList", appProjects: "AppProjectList"},
		frameObject(0, subscriptions()), project)
	var mu sync.Mutex
	patches := 0
	dyn.PrependReactor("patch", "applications", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		patches++
		mu.Unlock()
		return false, nil, nil
	})
	watching := make(chan struct{}, 8)
	dyn.PrependWatchReactor("applications", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := dyn.Tracker().Watch(applications, a.GetNamespace())
		watching <- struct{}{}
		return true, w, err
	})

	h := &hook{}
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.AddHook(h)
	log.SetLevel(log.InfoLevel)
	log.SetOutput(io.Discard)
	defer log.StandardLogger().ReplaceHooks(log.LevelHooks{})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl := rel.NewController(kube, dyn, namespace, secretName, cmName)
	if err := ctrl.Init(ctx); err != nil {
		t.Fatal(err)
	}
	go ctrl.Run(ctx, 1)

	if !strings.Contains(data["trigger."+notifications.CatalogTrigger], notifications.CatalogWhen) {
		t.Fatalf("the catalog's %s is not %q: %s", notifications.CatalogTrigger, notifications.CatalogWhen, data["trigger."+notifications.CatalogTrigger])
	}
	out := notifications.Replay{Scenario: sc.Name}
	start := time.Now()
	for i := range sc.Frames {
		ends0, skipped0, errs0 := h.state()
		mu.Lock()
		patches0 := patches
		mu.Unlock()
		cap.mu.Lock()
		cap.frame = i
		cap.mu.Unlock()
		if i > 0 {
			cur, err := dyn.Resource(applications).Namespace(namespace).Get(ctx, sc.Frames[i].Application["metadata"].(map[string]any)["name"].(string), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ann := map[string]any{}
			for k, v := range cur.GetAnnotations() {
				ann[k] = v
			}
			next := frameObject(i, ann)
			next.SetResourceVersion(cur.GetResourceVersion())
			if _, err := dyn.Resource(applications).Namespace(namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// every processing of this frame: its own, and one more per annotation patch (the watch event)
		deadline := time.Now().Add(30 * time.Second)
		for {
			ends, _, errs := h.state()
			mu.Lock()
			want := ends0 + 1 + patches - patches0
			mu.Unlock()
			for _, e := range errs[len(errs0):] {
				_, hasStatus := sc.Frames[i].Application["status"]
				if !strings.Contains(e, notifications.CatalogWhen) || hasStatus {
					t.Fatalf("frame %d: the controller logged an error: %v", i, e)
				}
				if n := len(out.CatalogErrors); n == 0 || out.CatalogErrors[n-1] != i {
					out.CatalogErrors = append(out.CatalogErrors, i)
				}
			}
			errs0 = errs
			if ends >= want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("frame %d: the controller processed %d of %d times in 30 s", i, ends-ends0, want-ends0)
			}
			time.Sleep(time.Millisecond)
		}
		if _, skipped, _ := h.state(); skipped > skipped0 {
			out.Skipped = append(out.Skipped, i)
		}
		if i == 0 {
			select {
			case <-watching:
			case <-time.After(30 * time.Second):
				t.Fatal("the controller's informer never watched the Applications")
			}
		}
	}
	// the informer resyncs every 60 s (notification_controller/controller resyncPeriod), which would
	// process the last frame once more: the replay must end before
	if d := time.Since(start); d > 50*time.Second {
		t.Fatalf("the replay took %s, near the informer's 60 s resync", d)
	}
	cap.mu.Lock()
	out.Fired = append(out.Fired, cap.fired...)
	cap.mu.Unlock()
	return out
}
