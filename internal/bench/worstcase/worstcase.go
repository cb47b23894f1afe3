// Package worstcase builds the largest objects the health scripts plausibly meet in a cluster, for the
// worst-case benchmarks (each must evaluate in at most 10 ms in Argo CD's real VMs; Argo CD kills a script
// at 1 s) and as seeds of the fuzz target. Built in code rather than committed, so a size is a parameter,
// not megabytes of YAML.
package worstcase

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Object is one worst-case object, as sigs.k8s.io/yaml or encoding/json decodes it (numbers float64).
type Object struct {
	Name   string
	Kind   string
	Object map[string]any
}

// Objects are the worst cases, each decoded afresh (callers may mutate them):
//   - analysisrun-20x1000: an AnalysisRun of 20 metrics with 1,000 measurements each, one metric failed
//     within its limit, still Running (the progress message walks every metric);
//   - rollout-200-steps-50-pauses: a canary Rollout of 200 steps with 50 pause conditions and its step
//     analysis in flight;
//   - rollout-1mb: a Rollout of about 1 MB (a pod template of 2,000 environment variables and a 300 KB
//     annotation), steady.
func Objects() []Object {
	return []Object{
		{"analysisrun-20x1000", "AnalysisRun", AnalysisRun(20, 1000)},
		{"rollout-200-steps-50-pauses", "Rollout", Rollout(200, 50)},
		{"rollout-1mb", "Rollout", LargeRollout(1 << 20)},
	}
}

// decoded round-trips v through JSON, so the object has exactly the types a decoder gives.
func decoded(v any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

func meta(name string) (string, map[string]any) {
	return "argoproj.io/v1alpha1", map[string]any{
		"name": name, "namespace": "shop", "generation": 3, "uid": "5d3c1f2e-8a4b-4c6d-9e7f-0a1b2c3d4e5f",
		"labels":      map[string]any{"app": "checkout", "rollouts-pod-template-hash": "7bb9d897fd"},
		"annotations": map[string]any{"rollout.argoproj.io/revision": "7"},
	}
}

// AnalysisRun has metrics × measurements measurements.
func AnalysisRun(metrics, measurements int) map[string]any {
	api, md := meta("checkout-7bb9d897fd-7-2")
	var specs, results []any
	for m := 0; m < metrics; m++ {
		name := fmt.Sprintf("metric-%02d", m)
		specs = append(specs, map[string]any{
			"name": name, "interval": "1m", "count": measurements + 10, "failureLimit": 2,
			"successCondition": "result[0] >= 0.95",
			"provider": map[string]any{"prometheus": map[string]any{
				"address": "http://prometheus.monitoring.svc.cluster.local:9090",
				"query":   `sum(rate(http_requests_total{service="checkout-canary",code!~"5.."}[2m])) / sum(rate(http_requests_total{service="checkout-canary"}[2m]))`,
			}},
		})
		var ms []any
		failed := 0
		for i := 0; i < measurements; i++ {
			phase, value := "Successful", "[0.9912]"
			if m == 3 && i == 7 {
				phase, value = "Failed", "[0.81]"
				failed++
			}
			ms = append(ms, map[string]any{
				"phase": phase, "value": value,
				"startedAt":  fmt.Sprintf("2025-06-12T%02d:%02d:58Z", i/60%24, i%60),
				"finishedAt": fmt.Sprintf("2025-06-12T%02d:%02d:59Z", i/60%24, i%60),
			})
		}
		results = append(results, map[string]any{
			"name": name, "phase": "Running", "count": measurements, "successful": measurements - failed,
			"failed": failed, "consecutiveSuccess": measurements - 8, "measurements": ms,
			"metadata": map[string]any{"ResolvedPrometheusQuery": `sum(rate(http_requests_total{service="checkout-canary"}[2m]))`},
		})
	}
	return decoded(map[string]any{
		"apiVersion": api, "kind": "AnalysisRun", "metadata": md,
		"spec": map[string]any{"metrics": specs},
		"status": map[string]any{
			"phase": "Running", "startedAt": "2025-06-12T00:00:58Z",
			"runSummary":    map[string]any{"count": metrics * measurements, "successful": metrics*measurements - 1, "failed": 1},
			"metricResults": results,
		},
	})
}

func podTemplate(env int, annotation int) map[string]any {
	var vars []any
	for i := 0; i < env; i++ {
		vars = append(vars, map[string]any{
			"name":  fmt.Sprintf("FEATURE_FLAG_%04d", i),
			"value": strings.Repeat("x", 300) + fmt.Sprint(i),
		})
	}
	md := map[string]any{"labels": map[string]any{"app": "checkout"}}
	if annotation > 0 {
		md["annotations"] = map[string]any{"example.com/config": strings.Repeat("y", annotation)}
	}
	return map[string]any{
		"metadata": md,
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "checkout", "image": "registry.example.com/shop/checkout:1.15.0", "env": vars,
			"ports":     []any{map[string]any{"containerPort": 8080, "name": "http", "protocol": "TCP"}},
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
		}}},
	}
}

func rolloutStatus() map[string]any {
	return map[string]any{
		"observedGeneration": "3", "phase": "Progressing", "message": "more replicas need to be updated",
		"currentPodHash": "c9c66885", "stableRS": "7b9c5d8f46", "currentStepIndex": 2,
		"replicas": 5, "updatedReplicas": 1, "readyReplicas": 5, "availableReplicas": 5,
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "AvailableReason", "message": "Rollout has minimum availability"},
			map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "message": "ReplicaSet checkout-c9c66885 is progressing."},
		},
	}
}

// Rollout is a canary Rollout with steps steps and pauses pause conditions, its step analysis Running.
func Rollout(steps, pauses int) map[string]any {
	api, md := meta("checkout")
	var ss []any
	for i := 0; i < steps; i++ {
		switch i % 3 {
		case 0:
			ss = append(ss, map[string]any{"setWeight": i % 100})
		case 1:
			ss = append(ss, map[string]any{"pause": map[string]any{"duration": "1m"}})
		default:
			ss = append(ss, map[string]any{"analysis": map[string]any{"templates": []any{map[string]any{"templateName": "success-rate"}}}})
		}
	}
	var pcs []any
	for i := 0; i < pauses; i++ {
		pcs = append(pcs, map[string]any{"reason": "CanaryPauseStep", "startTime": "2025-06-12T09:12:58Z"})
	}
	st := rolloutStatus()
	st["pauseConditions"] = pcs
	st["canary"] = map[string]any{"currentStepAnalysisRunStatus": map[string]any{"name": "checkout-c9c66885-3-2", "status": "Running"}}
	return decoded(map[string]any{
		"apiVersion": api, "kind": "Rollout", "metadata": md,
		"spec": map[string]any{
			"replicas": 5, "selector": map[string]any{"matchLabels": map[string]any{"app": "checkout"}},
			"strategy": map[string]any{"canary": map[string]any{"steps": ss}},
			"template": podTemplate(5, 0),
		},
		"status": st,
	})
}

// LargeRollout is a steady canary Rollout of at least size bytes of JSON.
func LargeRollout(size int) map[string]any {
	api, md := meta("checkout")
	annotation := 300 << 10
	env := (size - annotation) / 330
	st := rolloutStatus()
	st["phase"], st["message"], st["updatedReplicas"], st["stableRS"] = "Healthy", "", 5, "c9c66885"
	return decoded(map[string]any{
		"apiVersion": api, "kind": "Rollout", "metadata": md,
		"spec": map[string]any{
			"replicas": 5, "selector": map[string]any{"matchLabels": map[string]any{"app": "checkout"}},
			"strategy": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"setWeight": 20}}}},
			"template": podTemplate(env, annotation),
		},
		"status": st,
	})
}
