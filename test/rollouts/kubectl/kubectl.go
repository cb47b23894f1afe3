// Package kubectl says what kubectl-argo-rollouts shows for an upstream corpus object, for the corpus
// proofs of the main module (Argo Rollouts v1.8.5) and test/rollouts-v1.10/corpus (v1.10.2): each compiles
// it against the Rollouts release it pins.
package kubectl

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/kubectl-argo-rollouts/info"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/corpus"
)

// Status is what `kubectl argo rollouts get` shows for the object: pkg/kubectl-argo-rollouts/info of
// the Argo Rollouts version the calling module pins, on the object decoded into its API types.
func Status(o corpus.Object) (status, message string, err error) {
	switch o.Kind {
	case "Rollout":
		var ro v1alpha1.Rollout
		if err := yaml.Unmarshal(o.Raw, &ro); err != nil {
			return "", "", err
		}
		ri := info.NewRolloutInfo(&ro, nil, nil, nil, nil, nil)
		return ri.Status, ri.Message, nil
	case "Experiment":
		var ex v1alpha1.Experiment
		if err := yaml.Unmarshal(o.Raw, &ex); err != nil {
			return "", "", err
		}
		ei := info.NewExperimentInfo(&ex, nil, nil, nil)
		return ei.Status, ei.Message, nil
	case "AnalysisRun":
		var run v1alpha1.AnalysisRun
		if err := yaml.Unmarshal(o.Raw, &run); err != nil {
			return "", "", err
		}
		// kubectl-argo-rollouts shows AnalysisRuns under their owner: give the run one.
		owner := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "owner", UID: types.UID("corpus-owner")}}
		run.OwnerReferences = append(run.OwnerReferences, metav1.OwnerReference{UID: owner.UID, Name: owner.Name, Kind: "Rollout"})
		ri := info.NewRolloutInfo(owner, nil, nil, nil, []*v1alpha1.AnalysisRun{&run}, nil)
		if len(ri.AnalysisRuns) != 1 {
			return "", "", fmt.Errorf("kubectl-argo-rollouts listed %d AnalysisRuns", len(ri.AnalysisRuns))
		}
		return ri.AnalysisRuns[0].Status, run.Status.Message, nil
	}
	return "", "", fmt.Errorf("kind %s", o.Kind)
}
