// Package notifications_test is the proof of generate --format notifications in Argo CD v3.6.2's own
// notifications controller (and the notifications-engine version it pins), against the Applications the
// live suite recorded: the notifications suite (test/notifications/replay) on this release.
package notifications_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/controller"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	notificationcontroller "github.com/argoproj/argo-cd/v3/notification_controller/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/notification/expression/shared"

	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/notifications/replay"
)

// Our trigger, in Argo CD v3.6.2's notifications controller, on every recorded frame: once per release
// with a failed run (with --inconclusive degraded, also an inconclusive one), naming the Rollout, the run
// and its metric; never otherwise. The catalog's on-health-degraded never names a run.
func TestNotifications(t *testing.T) { replay.Notifications(t, release) }

// A failed analysis's revision that is retried and fails again notifies once, as oncePer promises.
func TestOncePerRevision(t *testing.T) { replay.OncePerRevision(t, release) }

// TestNotificationsDoc renders docs/notifications.md's table for Argo CD v3.6.2 from the default replays.
func TestNotificationsDoc(t *testing.T) { replay.Doc(t, release) }

// release is Argo CD v3.6.2's notifications controller.
var release = replay.Release{
	Module:      "github.com/argoproj/argo-cd/v3",
	Owner:       "test/argocd-v3.6/notifications TestNotificationsDoc",
	Unpersisted: "Argo CD v3 then keeps no resource health in the Application",
	Install:     formats.Notifications,
	NewController: func(kube kubernetes.Interface, dyn dynamic.Interface, namespace, secretName, cmName string) replay.Controller {
		return notificationcontroller.NewController(kube, dyn, &argocdService{namespace: namespace}, namespace, nil, "",
			controller.NewMetricsRegistry("argocd"), secretName, cmName, false)
	},
}

// argocdService stands in for util/notification/argocd's service, which the controller asks for the
// AppProject of the `appProject` template variable and which backs the repo.* expressions (none of which
// our trigger, our template or the catalog's on-health-degraded use). It serves the AppProject from the
// controller's informer, as the real one does.
type argocdService struct {
	namespace string
	informer  cache.SharedIndexInformer
}

func (s *argocdService) GetCommitMetadata(context.Context, string, string, string) (*shared.CommitMetadata, error) {
	return nil, fmt.Errorf("no repo-server in the replay")
}

func (s *argocdService) GetAppDetails(context.Context, *v1alpha1.Application) (*shared.AppDetail, error) {
	return nil, fmt.Errorf("no repo-server in the replay")
}

func (s *argocdService) GetAppProject(_ context.Context, name string) (*unstructured.Unstructured, error) {
	if s.informer != nil {
		if obj, ok, err := s.informer.GetIndexer().GetByKey(s.namespace + "/" + name); err == nil && ok {
			return obj.(*unstructured.Unstructured).DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("no AppProject %s", name)
}

func (s *argocdService) SetAppProjectInformer(i cache.SharedIndexInformer) { s.informer = i }
