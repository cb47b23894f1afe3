package rolloutplugin

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// noAnalysis is the verdict's no-analysis option from the config: the policy, and the runs and
// experiments of the Rollout's other revisions, which read lists no more of (it selects the judged
// revision's hash). The verdict asks for them only for a revision fully promoted without analysis whose
// strategy names none, to tell "analysis removed" from "no analysis in the strategy"; that judgement is
// the verification's last, so the extra lists happen at most once a verification. They select by the
// pod-template hash label's presence, as every run and experiment the rollout controller creates carries
// it (reliability's least-privilege proof refuses lists without a selector), within maxListed.
func noAnalysis(parent context.Context, c dynamic.Interface, cfg Config, where site) verdict.NoAnalysis {
	return verdict.NoAnalysis{Policy: cfg.NoAnalysis, Earlier: func() (verdict.Objects, error) {
		ctx, cancel := context.WithTimeout(parent, cfg.apiTimeout)
		defer cancel()
		var objs verdict.Objects
		what := "Rollout " + cfg.Namespace + "/" + cfg.Name
		for _, r := range []struct {
			gvr schema.GroupVersionResource
			dst *[]map[string]any
		}{{analysisRunsGVR, &objs.AnalysisRuns}, {experimentsGVR, &objs.Experiments}} {
			list, err := c.Resource(r.gvr).Namespace(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: verdict.LabelPodTemplateHash, Limit: maxListed})
			if err != nil {
				return objs, apiError(err, r.gvr.Resource+" of "+what, where, cfg.apiTimeout)
			}
			for _, it := range list.Items {
				*r.dst = append(*r.dst, it.Object)
			}
		}
		return objs, nil
	}}
}
