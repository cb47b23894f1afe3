package v36

import (
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/argocd-v3-adapter"
	"github.com/analysis-health/analysis-health/test/suite"
)

// release is Argo CD v3.6.2 for test/suite: the v3 line's calls (test/argocd-v3-adapter) with the
// gitops-engine that moved into Argo CD's repository, and what v3.6 changed: `return nil` is "no
// health" and scripts see objects being deleted (NoHealth).
var release = argocdv3.Release[health.HealthStatus]{
	Release: "v3.6.2", Line: string(engine.V36),
	ResourceHealth: func(obj *unstructured.Unstructured, ov argolua.ResourceHealthOverrides) (*health.HealthStatus, error) {
		return health.GetResourceHealth(obj, ov)
	},
	HealthCheckFunc: func(gvk schema.GroupVersionKind) bool { return health.GetHealthCheckFunc(gvk) != nil },
	Caps: suite.Capabilities{
		NoHealth: true,
	},
}

// isWorse is gitops-engine v3.6.2's health.IsWorse, the Application health's aggregation.
func isWorse(current, next string) bool {
	return health.IsWorse(health.HealthStatusCode(current), health.HealthStatusCode(next))
}
