package harness

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Image of the first revision (deployed before recording starts) and of the revision being delivered.
const (
	ImageV1 = "ghcr.io/shop/checkout:1.0.0"
	ImageV2 = "ghcr.io/shop/checkout:1.1.0"
	// ImageV3 is a later Freight, released while the revision of ImageV2 is still being verified.
	ImageV3 = "ghcr.io/shop/checkout:1.2.0"
	// ImageRepo is the Freight's image repository (a Kargo Warehouse's subscription).
	ImageRepo = "ghcr.io/shop/checkout"
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

// The args every use of Templates sets, which the metric URLs and queries carry (metrics.go runOf): the
// revision being analysed, and which analysis of it the use is. The controller resolves the revision from
// the ReplicaSet it analyses (utils/analysis factory.go BuildArgumentsForRolloutAnalysisRun, for
// rollout/analysis.go's step, background, pre- and post-promotion runs and rollout/experiment.go's
// experiment analyses alike). The templates give neither a default, so a use that forgets one makes run
// creation fail (utils/analysis helpers.go MergeArgs: "args.use was not resolved") rather than sharing a
// key with another use.
const (
	argRevision = "revision"
	argUse      = "use"
)

// useArgs are the args of one use of a template.
func useArgs(use string) []v1alpha1.AnalysisRunArgument {
	latest := v1alpha1.Latest
	return []v1alpha1.AnalysisRunArgument{
		{Name: argRevision, ValueFrom: &v1alpha1.ArgumentValueFrom{PodTemplateHashValue: &latest}},
		{Name: argUse, Value: use},
	}
}

// The literal use of each kind of analysis (step analyses and experiments add the step index).
const (
	useBackground = "background"
	usePre        = "pre"
	usePost       = "post"
)

func analysisOf(use string, templates ...string) *v1alpha1.RolloutAnalysis {
	a := &v1alpha1.RolloutAnalysis{Args: useArgs(use)}
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
	for i := range steps {
		// AnalysisStep and ExperimentStep do not know their index; the use does.
		if a := steps[i].Analysis; a != nil {
			a.Args = useArgs(fmt.Sprintf("step-%d", i))
		}
		if e := steps[i].Experiment; e != nil {
			for j := range e.Analyses {
				e.Analyses[j].Args = useArgs(fmt.Sprintf("step-%d-%s", i, e.Analyses[j].Name))
			}
		}
	}
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{MaxSurge: &surge, MaxUnavailable: &unavailable, Steps: steps}
	if background != "" {
		ro.Spec.Strategy.Canary.Analysis = &v1alpha1.RolloutAnalysisBackground{RolloutAnalysis: *analysisOf(useBackground, background)}
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
// Post-promotion analysis templates ("" for none).
func BlueGreenRollout(pre, post string) *v1alpha1.Rollout {
	ro := baseRollout()
	ro.Spec.Replicas = Ptr(int32(3))
	ro.Spec.Strategy.BlueGreen = &v1alpha1.BlueGreenStrategy{
		ActiveService:  Name + "-active",
		PreviewService: Name + "-preview",
	}
	if pre != "" {
		ro.Spec.Strategy.BlueGreen.PrePromotionAnalysis = analysisOf(usePre, pre)
	}
	if post != "" {
		ro.Spec.Strategy.BlueGreen.PostPromotionAnalysis = analysisOf(usePost, post)
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

// AnalysisStep is a step analysis; CanaryRollout sets its use args (the step index).
func AnalysisStep(template string) v1alpha1.CanaryStep {
	a := &v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: template}}}
	return v1alpha1.CanaryStep{Analysis: a}
}

// Templates every scenario creates. Each metric is measured by the analysis controller through a real
// provider against the scripted metrics server (metrics.go); the thresholds are the same everywhere:
// success at >= 0.95, failure below 0.8, inconclusive in between (a success-rate metric).
//   - success-rate: web, every 30 s, three measurements, one failure tolerated;
//   - error-rate: web, every 30 s, no count (as background analysis it runs until the rollout
//     controller terminates it), one failure tolerated; success at <= 0.01, failure above 0.05;
//   - error-rate-fast: error-rate every 10 s, no failure tolerated;
//   - success-rate-delayed: success-rate after an initialDelay of 30 s;
//   - success-rate-fragile: success-rate, errors retried every 10 s, consecutiveErrorLimit 2;
//   - success-rate-slow: success-rate with a 1 s provider timeout;
//   - success-rate-long: success-rate with five measurements every 10 s;
//   - latency: prometheus (instant query latency_p99 against Prometheus' HTTP API), every 20 s, two
//     measurements, success at <= 0.3 s;
//   - smoke: web, one measurement (the experiment's analysis);
//   - with-dry-run: success-rate plus canary-errors (error-rate's thresholds), which scenarios mark dryRun.
//
// Every template declares the args revision and use (useArgs), without defaults, and its URLs and queries
// carry them, so that the metrics server counts requests per run (metrics.go runOf).
func Templates(m *MetricsServer) []*v1alpha1.AnalysisTemplate {
	web := func(metric string) v1alpha1.MetricProvider {
		return v1alpha1.MetricProvider{Web: &v1alpha1.WebMetric{URL: m.URL(metric) + webRunQuery, JSONPath: "{$.value}"}}
	}
	successRate := func(name, endpoint string) v1alpha1.Metric {
		return v1alpha1.Metric{
			Name:             name,
			Interval:         "30s",
			Count:            Ptr(intstr.FromInt32(3)),
			FailureLimit:     Ptr(intstr.FromInt32(1)),
			SuccessCondition: "result >= 0.95",
			FailureCondition: "result < 0.8",
			Provider:         web(endpoint),
		}
	}
	errorRate := func(name, endpoint string) v1alpha1.Metric {
		return v1alpha1.Metric{
			Name:             name,
			Interval:         "30s",
			FailureLimit:     Ptr(intstr.FromInt32(1)),
			SuccessCondition: "result <= 0.01",
			FailureCondition: "result > 0.05",
			Provider:         web(endpoint),
		}
	}
	tmpl := func(name string, metrics ...v1alpha1.Metric) *v1alpha1.AnalysisTemplate {
		return &v1alpha1.AnalysisTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
			Spec: v1alpha1.AnalysisTemplateSpec{Metrics: metrics,
				Args: []v1alpha1.Argument{{Name: argRevision}, {Name: argUse}}},
		}
	}
	delayed := successRate("success-rate", "success-rate")
	delayed.InitialDelay = "30s"
	fragile := successRate("success-rate", "success-rate")
	fragile.ConsecutiveErrorLimit = Ptr(intstr.FromInt32(2))
	slow := successRate("success-rate", "success-rate")
	slow.Provider.Web.TimeoutSeconds = 1
	long := successRate("success-rate", "success-rate")
	long.Interval, long.Count = "10s", Ptr(intstr.FromInt32(5))
	canaryErrors := errorRate("canary-errors", "canary-errors")
	canaryErrors.Count = Ptr(intstr.FromInt32(3))
	fast := errorRate("error-rate", "error-rate")
	fast.Interval, fast.FailureLimit = "10s", nil
	smoke := successRate("smoke", "smoke")
	smoke.Count, smoke.FailureLimit = Ptr(intstr.FromInt32(1)), nil
	latency := v1alpha1.Metric{
		Name:             "latency",
		Interval:         "20s",
		Count:            Ptr(intstr.FromInt32(2)),
		SuccessCondition: "result[0] <= 0.3",
		FailureCondition: "result[0] > 0.5",
		Provider: v1alpha1.MetricProvider{Prometheus: &v1alpha1.PrometheusMetric{
			Address: m.PrometheusAddress(),
			Query:   "latency_p99" + promRunMatchers,
		}},
	}
	return []*v1alpha1.AnalysisTemplate{
		tmpl("success-rate", successRate("success-rate", "success-rate")),
		tmpl("error-rate", errorRate("error-rate", "error-rate")),
		tmpl("error-rate-fast", fast),
		tmpl("success-rate-delayed", delayed),
		tmpl("success-rate-fragile", fragile),
		tmpl("success-rate-slow", slow),
		tmpl("success-rate-long", long),
		tmpl("latency", latency),
		tmpl("smoke", smoke),
		tmpl("with-dry-run", successRate("success-rate", "success-rate"), canaryErrors),
	}
}

// ExperimentStep runs the Rollout's new pod template as one canary pod for the experiment, with the
// analysis template as a requiredForCompletion analysis (no duration: the experiment ends with it).
// CanaryRollout sets the analysis's use args (the step index and the analysis's name).
func ExperimentStep(template string) v1alpha1.CanaryStep {
	return v1alpha1.CanaryStep{Experiment: &v1alpha1.RolloutExperimentStep{
		Templates: []v1alpha1.RolloutExperimentTemplate{{Name: "canary", SpecRef: v1alpha1.CanarySpecRef, Replicas: Ptr(int32(1))}},
		Analyses:  []v1alpha1.RolloutExperimentStepAnalysisTemplateRef{{Name: template, TemplateName: template, RequiredForCompletion: true}},
	}}
}

// WorkloadRefRollout moves the Rollout's pod template into a Deployment (scaled to zero; there is no
// Deployment controller anyway) that the Rollout references with spec.workloadRef.
func WorkloadRefRollout(ro *v1alpha1.Rollout) (*v1alpha1.Rollout, *appsv1.Deployment) {
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{"app.kubernetes.io/instance": App}},
		Spec: appsv1.DeploymentSpec{
			Replicas: Ptr(int32(0)),
			Selector: ro.Spec.Selector.DeepCopy(),
			Template: *ro.Spec.Template.DeepCopy(),
		},
	}
	ro.Spec.Template = corev1.PodTemplateSpec{}
	ro.Spec.Selector = nil
	ro.Spec.WorkloadRef = &v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: Name}
	return ro, dep
}

func Ptr[T any](v T) *T { return &v }
