// Package notifications_test is the proof of generate --format notifications in Argo CD v2.14.21's own
// notifications controller (and the notifications-engine version it pins), against the Applications the
// live suite recorded: the notifications suite (test/notifications/replay) on this release.
package notifications_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/controller"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	notificationcontroller "github.com/argoproj/argo-cd/v2/notification_controller/controller"
	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/notification/expression/shared"

	"github.com/analysis-health/analysis-health/test/formats"
	"github.com/analysis-health/analysis-health/test/notifications/replay"
)

// Our trigger, in Argo CD v2.14.21's notifications controller, on every recorded frame: once per release
// with a failed run (with --inconclusive degraded, also an inconclusive one), naming the Rollout, the run
// and its metric; never otherwise. The catalog's on-health-degraded never names a run.
func TestNotifications(t *testing.T) { replay.Notifications(t, release) }

// A failed analysis's revision that is retried and fails again notifies once, as oncePer promises.
func TestOncePerRevision(t *testing.T) { replay.OncePerRevision(t, release) }

// TestNotificationsDoc renders docs/notifications.md's table for Argo CD v2.14.21 from the default replays.
func TestNotificationsDoc(t *testing.T) { replay.Doc(t, release) }

// release is Argo CD v2.14.21's notifications controller.
var release = replay.Release{
	Module:      "github.com/argoproj/argo-cd/v2",
	Owner:       "test/argocd-v2.14/notifications TestNotificationsDoc",
	Unpersisted: "its frames are not what Argo CD v2.14 (which persists by default) writes",
	Install:     formats.Notifications,
	NewController: func(kube kubernetes.Interface, dyn dynamic.Interface, namespace, secretName, cmName string) replay.Controller {
		return notificationcontroller.NewController(kube, dyn, &argocdService{}, namespace, nil, "",
			controller.NewMetricsRegistry("argocd"), secretName, cmName, false)
	},
}

// argocdService stands in for util/notification/argocd's service, which backs the repo.* expressions
// (none of which our trigger, our template or the catalog's on-health-degraded use). Argo CD v2.14 has no
// appProject template variable.
type argocdService struct{}

func (s *argocdService) GetCommitMetadata(context.Context, string, string, string) (*shared.CommitMetadata, error) {
	return nil, fmt.Errorf("no repo-server in the replay")
}

func (s *argocdService) GetAppDetails(context.Context, *v1alpha1.Application) (*shared.AppDetail, error) {
	return nil, fmt.Errorf("no repo-server in the replay")
}
