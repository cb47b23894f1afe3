package recorder

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Image of the first revision (deployed before recording starts) and of the revision being delivered.
const (
	ImageV1 = "ghcr.io/shop/checkout:1.0.0"
	ImageV2 = "ghcr.io/shop/checkout:1.1.0"
)

// selector labels. app.kubernetes.io/instance is Argo CD's default tracking label: the Rollout carries it
// because Argo CD applied it, and the Rollout's AnalysisRuns carry it because the controller copies
// spec.selector.matchLabels onto them (rollout/analysis.go newAnalysisRunFromRollout). So the runs look
// like members of the Application, and only their ownerReference keeps them out of its health.
func selectorLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/instance": App}
}

func baseRollout() *v1alpha1.Rollout {
	replicas := int32(4)
	return &v1alpha1.Rollout{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Rollout"},
		ObjectMeta: metav1.ObjectMeta{
			Name: Name, Namespace: Namespace,
			UID:    types.UID("6f1c2b9e-0d4a-4c55-9a51-3c1f6d0a7e21"),
			Labels: map[string]string{"app.kubernetes.io/instance": App},
		},
		Spec: v1alpha1.RolloutSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selectorLabels()},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  Name,
					Image: ImageV1,
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				}}},
			},
		},
	}
}

func analysis(templates ...string) *v1alpha1.RolloutAnalysis {
	a := &v1alpha1.RolloutAnalysis{}
	for _, t := range templates {
		a.Templates = append(a.Templates, v1alpha1.AnalysisTemplateRef{TemplateName: t})
	}
	return a
}

// CanaryRollout is a basic (replica-weighted, no traffic router) canary; background, if set, names the
// template of a background analysis that starts with the first step.
func CanaryRollout(background string, steps ...v1alpha1.CanaryStep) *v1alpha1.Rollout {
	ro := baseRollout()
	surge := intstr.FromString("25%")
	unavailable := intstr.FromInt32(0)
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{MaxSurge: &surge, MaxUnavailable: &unavailable, Steps: steps}
	if background != "" {
		ro.Spec.Strategy.Canary.Analysis = &v1alpha1.RolloutAnalysisBackground{RolloutAnalysis: *analysis(background)}
	}
	return ro
}

// TrafficRouted switches a canary to SMI traffic routing (a TrafficSplit between a canary and a stable
// Service): the controller then shifts traffic by weight instead of by replica counts.
func TrafficRouted(ro *v1alpha1.Rollout) *v1alpha1.Rollout {
	ro.Spec.Strategy.Canary.CanaryService = Name + "-canary"
	ro.Spec.Strategy.Canary.StableService = Name + "-stable"
	ro.Spec.Strategy.Canary.TrafficRouting = &v1alpha1.RolloutTrafficRouting{SMI: &v1alpha1.SMITrafficRouting{}}
	return ro
}

// BlueGreenRollout uses an active and a preview Service, auto-promotion, and the given pre- and
// post-promotion analysis templates ("" for none).
func BlueGreenRollout(pre, post string) *v1alpha1.Rollout {
	ro := baseRollout()
	ro.Spec.Replicas = ptr(int32(3))
	ro.Spec.Strategy.BlueGreen = &v1alpha1.BlueGreenStrategy{
		ActiveService:  Name + "-active",
		PreviewService: Name + "-preview",
	}
	if pre != "" {
		ro.Spec.Strategy.BlueGreen.PrePromotionAnalysis = analysis(pre)
	}
	if post != "" {
		ro.Spec.Strategy.BlueGreen.PostPromotionAnalysis = analysis(post)
	}
	return ro
}

// Services a strategy references (blue-green active/preview, canary canary/stable); the controller sets
// their rollouts-pod-template-hash selector.
func Services(ro *v1alpha1.Rollout) []*corev1.Service {
	var names []string
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		names = append(names, bg.ActiveService, bg.PreviewService)
	}
	if c := ro.Spec.Strategy.Canary; c != nil && c.CanaryService != "" {
		names = append(names, c.CanaryService, c.StableService)
	}
	var out []*corev1.Service
	for _, n := range names {
		out = append(out, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: Namespace, Labels: map[string]string{"app.kubernetes.io/instance": App}},
			Spec: corev1.ServiceSpec{
				Selector: selectorLabels(),
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
			},
		})
	}
	return out
}

func SetWeight(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: &w} }

func Pause(seconds int) v1alpha1.CanaryStep {
	p := &v1alpha1.RolloutPause{}
	if seconds > 0 {
		d := intstr.FromString(fmt.Sprintf("%ds", seconds))
		p.Duration = &d
	}
	return v1alpha1.CanaryStep{Pause: p}
}

func AnalysisStep(template string) v1alpha1.CanaryStep {
	return v1alpha1.CanaryStep{Analysis: analysis(template)}
}

// Templates: success-rate is a bounded Prometheus check (three measurements) used for step and
// blue-green analysis; error-rate has no count, so as background analysis it runs until the rollout
// controller terminates it.
func Templates() []*v1alpha1.AnalysisTemplate {
	prom := func(q string) v1alpha1.MetricProvider {
		return v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{
			Address: "http://prometheus.monitoring:9090",
			Query:   q,
		}}
	}
	three := intstr.FromInt32(3)
	one := intstr.FromInt32(1)
	return []*v1alpha1.AnalysisTemplate{{
		ObjectMeta: metav1.ObjectMeta{Name: "success-rate", Namespace: Namespace},
		Spec: v1alpha1.AnalysisTemplateSpec{Metrics: []v1alpha1.Metric{{
			Name:             "success-rate",
			Interval:         "1m",
			Count:            &three,
			FailureLimit:     &one,
			SuccessCondition: "result[0] >= 0.95",
			Provider:         prom(`sum(rate(http_requests_total{app="checkout",code!~"5.."}[1m])) / sum(rate(http_requests_total{app="checkout"}[1m]))`),
		}}},
	}, {
		ObjectMeta: metav1.ObjectMeta{Name: "error-rate", Namespace: Namespace},
		Spec: v1alpha1.AnalysisTemplateSpec{Metrics: []v1alpha1.Metric{{
			Name:             "error-rate",
			Interval:         "1m",
			FailureLimit:     &one,
			SuccessCondition: "result[0] <= 0.01",
			Provider:         prom(`sum(rate(http_requests_total{app="checkout",code=~"5.."}[1m])) / sum(rate(http_requests_total{app="checkout"}[1m]))`),
		}}},
	}}
}

func ptr[T any](v T) *T { return &v }
