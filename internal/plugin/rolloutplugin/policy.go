package rolloutplugin

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The plugin reads with the Rollouts controller's identity, which reads every namespace. Who writes an
// AnalysisRun (or the template or Stage it comes from) in one namespace must not read through it what
// the namespace's own RBAC keeps from them: a run reads a Rollout of its own namespace, and of another
// only where the platform admin allows that pair. The policy is the plugin's args in argo-rollouts-config
// metricProviderPlugins, which only who may change the controller's own namespace writes, and which the
// controller passes to the plugin's command line (utils/plugin GetPluginInfo returns PluginItem.Args;
// metricproviders/plugin/client startPluginSystem runs exec.Command(pluginPath, args...), in v1.8.5 and
// v1.10.2 alike). A remote cluster, read with the credentials of a kubeconfig Secret, is governed by that
// cluster's RBAC of those credentials instead.

// AllowNamespacePairFlag is the plugin's flag of the policy, repeated once a pair.
const AllowNamespacePairFlag = "allow-namespace-pair"

// NamespacePair lets AnalysisRuns in Run read Rollouts in Rollout with the controller's identity.
type NamespacePair struct{ Run, Rollout string }

func (p NamespacePair) String() string { return p.Run + "=" + p.Rollout }

// Flag is the pair as the plugin's args give it.
func (p NamespacePair) Flag() string { return "--" + AllowNamespacePairFlag + "=" + p.String() }

// ParseNamespacePair reads RUN_NAMESPACE=ROLLOUT_NAMESPACE.
func ParseNamespacePair(s string) (NamespacePair, error) {
	run, rollout, ok := strings.Cut(s, "=")
	p := NamespacePair{Run: run, Rollout: rollout}
	if !ok {
		return p, fmt.Errorf("--%s %q is not RUN_NAMESPACE=ROLLOUT_NAMESPACE", AllowNamespacePairFlag, s)
	}
	for _, ns := range []string{run, rollout} {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return p, fmt.Errorf("--%s %q: %q is not a namespace name: %s", AllowNamespacePairFlag, s, ns, strings.Join(msgs, "; "))
		}
	}
	return p, nil
}

// allowed says whether a run in runNamespace may read the config's Rollout with the controller's identity.
func (p *Plugin) allowed(cfg Config, runNamespace string) error {
	if cfg.KubeconfigSecret != nil || cfg.Namespace == runNamespace || p.pairs[NamespacePair{runNamespace, cfg.Namespace}] {
		return nil
	}
	pair := NamespacePair{runNamespace, cfg.Namespace}
	return fmt.Errorf("Rollout %s/%s is in another namespace than the AnalysisRun (%s), and the platform admin's policy does not let runs in %s read %s: "+
		"add %q to the plugin's args in argo-rollouts-config metricProviderPlugins (docs/security.md)",
		cfg.Namespace, cfg.Name, runNamespace, runNamespace, cfg.Namespace, pair.Flag())
}
