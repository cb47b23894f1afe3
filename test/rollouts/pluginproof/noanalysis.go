// The plugin proof's no-analysis scenarios: a revision the controller fully promotes without running any
// analysis of it, verified under each of the plugin's noAnalysis policies (docs/kargo.md, "No analysis").

package pluginproof

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/plugin/analysisruns"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// noAnalysisPolicies are the values of --no-analysis, in the report's order.
var noAnalysisPolicies = []string{"successful", "inconclusive", "failed"}

// NoAnalysisResult is one no-analysis scenario's outcome in the report.
type NoAnalysisResult struct {
	Scenario string `json:"scenario"`
	// Case is the scenario's, declared; Revision the revision number verified, as the controller wrote it.
	Case     string `json:"case"`
	Revision string `json:"revision"`
	// Runs counts what the controllers created for the revision (analysis runs and experiments): none.
	Runs     int                `json:"runs"`
	Policies []NoAnalysisPolicy `json:"policies"`
	// Requests and Measurements as in PluginResult: the Rollout's own runs of earlier revisions only.
	Requests     int `json:"requests"`
	Measurements int `json:"measurements"`
}

// NoAnalysisPolicy is what the verifications of one policy ended in.
type NoAnalysisPolicy struct {
	Policy        string            `json:"policy"`
	Expected      string            `json:"expected"`
	Verifications map[string]string `json:"verifications"`
	// Message is the plugin's last measurement message of the verification at release, as the analysis
	// controller stored it.
	Message string `json:"message"`
}

// playNoAnalysis plays sc with three verifications per policy and checks them against what the
// controllers stored: every verification ends in the policy's declared outcome, none is Successful
// before the revision is fully promoted (nor ever, for a policy that does not declare Successful), each
// pins the verified revision, each last message names the scenario's case and the policy, and the
// controllers created no run or experiment for the revision.
func playNoAnalysis(env *harness.Env, sc harness.NoAnalysisScenario, bins kargoverify.PluginBinaries, config map[string]string) (res NoAnalysisResult, err error) {
	type policyVerification struct {
		*kargoverify.Verification
		policy string
	}
	var vs []policyVerification
	for _, policy := range noAnalysisPolicies {
		want := sc.Outcomes[policy]
		if want == "" {
			return res, fmt.Errorf("scenario %s declares no outcome for noAnalysis %s", sc.Name, policy)
		}
		for _, v := range []*kargoverify.Verification{
			{Name: kargoverify.VerificationAtStart, Stage: "at-release-" + policy, Healthy: func(*v1alpha1.Rollout) (bool, error) { return true, nil }},
			{Name: kargoverify.VerificationBuiltin, Stage: "builtin-" + policy, Healthy: func(ro *v1alpha1.Rollout) (bool, error) {
				h, err := bins.Health(ro, bins.BuiltinCM)
				return h == "Healthy", err
			}},
			{Name: kargoverify.VerificationOurs, Stage: "ours-" + policy, Healthy: func(ro *v1alpha1.Rollout) (bool, error) {
				h, err := bins.Health(ro, "")
				return h == "Healthy", err
			}},
		} {
			v.Started, v.Want = -1, want
			vs = append(vs, policyVerification{v, policy})
		}
	}
	released := "" // the revision delivered: the first current one that is not the stable one of frame 0
	opts := harness.Options{RolloutsConfig: config, Epoch: time.Now().UTC().Truncate(time.Second).Add(time.Hour)}
	opts.AfterTick = func(w *harness.World) error {
		if !w.Recording {
			return nil
		}
		tick := w.Reconciles
		ro := w.Rollout()
		stable, _, _ := unstructured.NestedString(w.Frames()[0].Rollout, "status", "stableRS")
		if released == "" && ro.Status.CurrentPodHash != stable && ro.Status.CurrentPodHash != "" {
			released = ro.Status.CurrentPodHash
		}
		for _, v := range vs {
			if v.Started < 0 {
				ok, err := v.Healthy(ro)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				ar, err := bins.VerificationRun(w.Namespace, v.Stage, kargoverify.FreightImage(ro), "--no-analysis", v.policy)
				if err != nil {
					return err
				}
				if err := w.Create(ar); err != nil {
					return err
				}
				v.Run, v.Started = ar.Name, tick
				if v.Name != kargoverify.VerificationAtStart {
					v.Hash = ro.Status.CurrentPodHash
				}
				continue
			}
			if v.Name == kargoverify.VerificationAtStart {
				v.Hash = released
			}
			ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), v.Run, metav1.GetOptions{})
			if err != nil {
				return err
			}
			v.Note(string(ar.Status.Phase))
			truth, err := kargoverify.GroundTruth(w, ro, v.Hash)
			if err != nil {
				return err
			}
			if ar.Status.Phase == v1alpha1.AnalysisPhaseSuccessful && (!truth.Passed || v.Want != string(v1alpha1.AnalysisPhaseSuccessful)) {
				v.Violations = append(v.Violations, fmt.Sprintf("%s (%s) tick %d: Successful with revision %s promoted %v", v.Name, v.policy, tick, v.Hash, truth.Passed))
			}
			for _, mr := range ar.Status.MetricResults {
				for _, m := range mr.Measurements {
					if pinned := m.Metadata["revision"]; pinned != "" && v.Hash != "" && pinned != v.Hash {
						v.Violations = append(v.Violations, fmt.Sprintf("%s (%s) tick %d: the plugin pinned revision %s, the verification is of %s", v.Name, v.policy, tick, pinned, v.Hash))
					}
				}
			}
		}
		return nil
	}
	w, err := env.NewWorld(opts)
	if err != nil {
		return res, err
	}
	defer w.Close()
	if err := harness.Play(w, func(s *harness.S) {
		sc.Play(s)
		s.Ticks(3) // the verifications' next measurement follows the last change
	}); err != nil {
		return res, err
	}
	if errs := w.SyncErrors(); len(errs) > 0 {
		return res, fmt.Errorf("the controllers failed to reconcile: %v", errs)
	}
	if n := w.RefusedWrites(); n > 0 {
		return res, fmt.Errorf("the scenario tried to write %d AnalysisRun/Experiment objects; only the controllers may", n)
	}
	ro := w.Rollout()
	res = NoAnalysisResult{Scenario: sc.Name, Case: sc.Case, Revision: harness.RevisionOf(ro)}
	var problems []string
	if released == "" || !harness.Promoted(ro) || ro.Status.CurrentPodHash != released {
		problems = append(problems, fmt.Sprintf("the released revision %q is not the promoted one (current %s, stable %s)", released, ro.Status.CurrentPodHash, ro.Status.StableRS))
	}
	// what the controllers created for the revision: nothing, which is what the scenario is about
	rollout, runs, exps, err := w.UnstructuredState()
	if err != nil {
		return res, err
	}
	rv := analysisruns.Of(rollout, runs, exps, released)
	res.Runs = len(rv.Runs) + len(rv.Superseded) + len(rv.Experiments)
	if res.Runs > 0 {
		problems = append(problems, fmt.Sprintf("the controllers created %d runs and experiments for revision %s", res.Runs, released))
	}
	byPolicy := map[string]*NoAnalysisPolicy{}
	for _, policy := range noAnalysisPolicies {
		res.Policies = append(res.Policies, NoAnalysisPolicy{Policy: policy, Expected: sc.Outcomes[policy], Verifications: map[string]string{}})
	}
	for i := range res.Policies {
		byPolicy[res.Policies[i].Policy] = &res.Policies[i]
	}
	for _, v := range vs {
		p := byPolicy[v.policy]
		p.Verifications[v.Name] = v.Sequence()
		problems = append(problems, v.Violations...)
		if v.Started < 0 {
			problems = append(problems, fmt.Sprintf("%s (%s) never started", v.Name, v.policy))
			continue
		}
		if got := v.Final(); got != v.Want {
			problems = append(problems, fmt.Sprintf("%s (%s): ended %s (%s), the scenario declares %s", v.Name, v.policy, got, v.Sequence(), v.Want))
		}
		ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), v.Run, metav1.GetOptions{})
		if err != nil {
			return res, err
		}
		msg := ""
		if mrs := ar.Status.MetricResults; len(mrs) == 1 && len(mrs[0].Measurements) > 0 {
			msg = mrs[0].Measurements[len(mrs[0].Measurements)-1].Message
		}
		for _, part := range []string{"no analysis ran for it: " + sc.Case + " (", "noAnalysis: " + v.policy} {
			if !strings.Contains(msg, part) {
				problems = append(problems, fmt.Sprintf("%s (%s): the last measurement's message %q does not say %q", v.Name, v.policy, msg, part))
			}
		}
		if v.Name == kargoverify.VerificationAtStart {
			p.Message = msg
		}
	}
	counts, countProblems, err := countRequests(env, w)
	if err != nil {
		return res, err
	}
	res.Requests, res.Measurements = counts.requests, counts.measurements
	problems = append(problems, countProblems...)
	if len(problems) > 0 {
		return res, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return res, nil
}
