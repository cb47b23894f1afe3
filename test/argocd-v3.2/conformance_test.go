package v3

import (
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/health"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/argocd-v3-adapter"
)

// release is Argo CD v3.2.12 for test/suite: the v3 line's calls and capabilities
// (test/argocd-v3-adapter) with this release's gitops-engine, and nothing of its own.
var release = argocdv3.Release[health.HealthStatus]{
	Release: "v3.2.12", Line: string(engine.V32),
	ResourceHealth: func(obj *unstructured.Unstructured, ov argolua.ResourceHealthOverrides) (*health.HealthStatus, error) {
		return health.GetResourceHealth(obj, ov)
	},
	HealthCheckFunc: func(gvk schema.GroupVersionKind) bool { return health.GetHealthCheckFunc(gvk) != nil },
}
