package conformance

import (
	"testing"

	_ "github.com/argoproj/argo-cd/v2/util/lua"
	_ "github.com/argoproj/argo-cd/v2/util/settings"
	_ "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	_ "github.com/argoproj/gitops-engine/pkg/health"
	_ "k8s.io/client-go/kubernetes/fake"
)

func TestWarm(t *testing.T) {}
