package probe

import "k8s.io/apimachinery/pkg/runtime/schema"

// ResolutionCases are argocd-cm contents exercising every branch of script resolution.
var ResolutionCases = []struct {
	Name string
	Data map[string]string
}{
	{Name: "empty", Data: map[string]string{}},
	{Name: "split keys", Data: map[string]string{
		"resource.customizations.health.argoproj.io_Rollout":      "return {status = 'Healthy'}",
		"resource.customizations.useOpenLibs.argoproj.io_Rollout": "true",
		"resource.customizations.health.PersistentVolumeClaim":    "return {status = 'Degraded'}",
		"resource.customizations.useOpenLibs.apps_Deployment":     "true",
	}},
	{Name: "wildcard replaces built-ins", Data: map[string]string{
		"resource.customizations": "argoproj.io/*:\n  health.lua: return {status = 'Suspended'}\n  health.lua.useOpenLibs: true\n",
	}},
	{Name: "exact key beats wildcard", Data: map[string]string{
		"resource.customizations": "argoproj.io/*:\n  health.lua: return {status = 'Suspended'}\n" +
			"argoproj.io/Rollout:\n  health.lua: return {status = 'Degraded'}\n",
	}},
	{Name: "actions merged with built-ins", Data: map[string]string{
		"resource.customizations.actions.argoproj.io_Rollout": "mergeBuiltinActions: true\ndiscovery.lua: return {mine = {}}\ndefinitions:\n- name: mine\n  action.lua: return obj\n- name: restart\n  action.lua: return obj\n",
	}},
	{Name: "actions hiding built-ins", Data: map[string]string{
		"resource.customizations.actions.apps_Deployment": "discovery.lua: return {mine = {}}\ndefinitions:\n- name: mine\n  action.lua: return obj\n",
	}},
	{Name: "actions for a kind without built-ins", Data: map[string]string{
		"resource.customizations.actions.example.com_Widget": "discovery.lua: return {go = {}}\ndefinitions:\n- name: go\n  action.lua: return obj\n",
		"resource.customizations.health.example.com_Widget":  "return {status = 'Healthy'}",
	}},
	{Name: "wildcard over a built-in wildcard", Data: map[string]string{
		"resource.customizations": "\"*.upbound.io/*\":\n  health.lua: return {status = 'Healthy'}\n",
	}},
	{Name: "legacy actions, split health", Data: map[string]string{
		"resource.customizations":                      "batch/CronJob:\n  actions: |\n    mergeBuiltinActions: true\n    discovery.lua: return {}\n",
		"resource.customizations.health.batch_CronJob": "return {status = 'Healthy'}",
	}},
}

// ResolutionKinds are kinds with built-in health, built-in actions, Go checks, core kinds and none.
var ResolutionKinds = []schema.GroupVersionKind{
	{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"},
	{Group: "argoproj.io", Version: "v1alpha1", Kind: "AnalysisRun"},
	{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Version: "v1", Kind: "ConfigMap"},
	{Group: "example.com", Version: "v1", Kind: "Widget"},
	{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"},
	{Group: "pkg.crossplane.io", Version: "v1", Kind: "Provider"},
	{Group: "s3.aws.upbound.io", Version: "v1beta1", Kind: "Bucket"},
}
