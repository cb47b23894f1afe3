package verdict_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// noAnalysisObjects are edits of the promoted frame of canary-step-successful (revision 2, one step
// analysis that passed) into the states in which the controller leaves a fully promoted revision with no
// run: what each case looks like in the objects the controller writes. The recorder proves the cases in
// the real controllers (test/rollouts/pluginproof, RunPluginVerification's no-analysis scenarios).
func noAnalysisObjects(t *testing.T, name string) verdict.Objects {
	o := fixture(t, "step-successful")
	canary := mapOf(mapOf(o.Rollout["spec"])["strategy"])["canary"].(map[string]any)
	earlierRun := func() map[string]any {
		// the run of the fixture, as the controller left it for an earlier revision (hash, revision)
		ar := deepCopy(t, o.AnalysisRuns[0])
		set(ar, "0123456789", "metadata", "labels", verdict.LabelPodTemplateHash)
		set(ar, "1", "metadata", "annotations", verdict.AnnotationRevision)
		set(ar, "checkout-0123456789-1-1", "metadata", "name")
		return ar
	}
	noSteps := func() {
		canary["steps"] = []any{map[string]any{"setWeight": int64(50)}, map[string]any{"pause": map[string]any{}}}
	}
	switch name {
	case "first deployment":
		// revision 1: the controller promoted it at once, with no analysis (initialDeploy)
		set(o.Rollout, "1", "metadata", "annotations", verdict.AnnotationRevision)
		o.AnalysisRuns = nil
	case "no analysis in the strategy":
		noSteps()
		o.AnalysisRuns = nil
	case "analysis removed":
		noSteps()
		o.AnalysisRuns = []map[string]any{earlierRun()}
	case "analysis not run":
		// revision 2 with the step analysis in its strategy, and no run of it: a full promotion
		o.AnalysisRuns = nil
	case "blue-green without analysis":
		delete(mapOf(o.Rollout["spec"])["strategy"].(map[string]any), "canary")
		set(o.Rollout, map[string]any{"activeService": "checkout-active"}, "spec", "strategy", "blueGreen")
		o.AnalysisRuns = nil
	case "blue-green first deployment":
		delete(mapOf(o.Rollout["spec"])["strategy"].(map[string]any), "canary")
		set(o.Rollout, map[string]any{"activeService": "checkout-active", "prePromotionAnalysis": map[string]any{"templates": []any{map[string]any{"templateName": "t"}}}}, "spec", "strategy", "blueGreen")
		set(o.Rollout, "1", "metadata", "annotations", verdict.AnnotationRevision)
		o.AnalysisRuns = nil
	case "background analysis without templates":
		// rollout/analysis.go creates no background run for an analysis without templates
		noSteps()
		canary["analysis"] = map[string]any{"templates": []any{}}
		o.AnalysisRuns = nil
	case "an experiment step":
		canary["steps"] = []any{map[string]any{"experiment": map[string]any{"templates": []any{}}}}
		o.AnalysisRuns = nil
	default:
		t.Fatalf("no objects %q", name)
	}
	return o
}

// TestNoAnalysisCases: the message and the value name the case, and each policy gives its phase in every
// case; a revision that had analysis is unaffected by the policy.
func TestNoAnalysisCases(t *testing.T) {
	for _, tc := range []struct {
		objects, want, because string
	}{
		{"first deployment", verdict.CaseFirstDeployment, "revision 1 is the Rollout's first"},
		{"no analysis in the strategy", verdict.CaseNoAnalysisInStrategy, "its canary strategy has no analysis step, background analysis or experiment step"},
		{"analysis removed", verdict.CaseAnalysisRemoved, "its canary strategy names no analysis any more, while revision 1 ran AnalysisRun checkout-0123456789-1-1"},
		{"analysis not run", verdict.CaseAnalysisNotRun, "its strategy names analysis, but the controller ran none"},
		{"blue-green without analysis", verdict.CaseNoAnalysisInStrategy, "its blueGreen strategy has no prePromotionAnalysis or postPromotionAnalysis"},
		{"blue-green first deployment", verdict.CaseFirstDeployment, "revision 1"},
		{"background analysis without templates", verdict.CaseNoAnalysisInStrategy, "its canary strategy has no analysis step"},
		{"an experiment step", verdict.CaseAnalysisNotRun, "its strategy names analysis"},
	} {
		for _, policy := range []struct{ policy, phase string }{
			{"", verdict.Successful}, {"successful", verdict.Successful}, {"Inconclusive", verdict.Inconclusive}, {"failed", verdict.Failed},
		} {
			t.Run(tc.objects+"/"+policy.policy, func(t *testing.T) {
				v, err := verdict.Judge(noAnalysisObjects(t, tc.objects), verdict.Options{NoAnalysis: verdict.NoAnalysis{Policy: policy.policy}})
				if err != nil {
					t.Fatal(err)
				}
				if v.Phase != policy.phase {
					t.Errorf("phase %s, want %s (%q)", v.Phase, policy.phase, v.Message)
				}
				for _, part := range []string{"no analysis ran for it: " + tc.want + " (", tc.because, "noAnalysis: " + strings.ToLower(policy.policy)} {
					if !strings.Contains(v.Message, part) {
						t.Errorf("message %q lacks %q", v.Message, part)
					}
				}
				if policy.policy == "" && !strings.HasSuffix(v.Message, "noAnalysis: successful, the default") {
					t.Errorf("the default is not named: %q", v.Message)
				}
				var sum verdict.Summary
				if err := json.Unmarshal([]byte(v.Structured), &sum); err != nil || sum.NoAnalysis != tc.want || sum.Verdict != v.Phase || len(sum.Runs) != 0 {
					t.Errorf("structured verdict %s (%v), want noAnalysis %q", v.Structured, err, tc.want)
				}
				if words := valueWords(t, v.Value); !strings.Contains(words, v.Phase+": ") || !strings.Contains(words, tc.want) {
					t.Errorf("value %s does not say %s and %q", v.Value, v.Phase, tc.want)
				}
			})
		}
	}
	for _, policy := range verdict.NoAnalysisPolicies {
		v, err := verdict.Judge(fixture(t, "step-successful"), verdict.Options{NoAnalysis: verdict.NoAnalysis{Policy: policy}})
		if err != nil || v.Phase != verdict.Successful || strings.Contains(v.Message, "noAnalysis") || strings.Contains(v.Value+v.Structured, "noAnalysis") {
			t.Errorf("%s: a revision whose analysis passed: %s %q %s %s (%v)", policy, v.Phase, v.Message, v.Value, v.Structured, err)
		}
	}
}

// TestNoAnalysisEarlier: the plugin lists only the judged revision's runs, and gives the others through
// Earlier, which is asked only for a revision promoted without analysis whose strategy names none; its
// error is the judgement's.
func TestNoAnalysisEarlier(t *testing.T) {
	removed := noAnalysisObjects(t, "analysis removed")
	earlier := verdict.Objects{AnalysisRuns: removed.AnalysisRuns}
	calls := 0
	list := func() (verdict.Objects, error) { calls++; return earlier, nil }
	alone := removed
	alone.AnalysisRuns = nil
	v, err := verdict.Judge(alone, verdict.Options{NoAnalysis: verdict.NoAnalysis{Policy: "failed", Earlier: list}})
	if err != nil || v.Phase != verdict.Failed || !strings.Contains(v.Message, verdict.CaseAnalysisRemoved+" (") || calls != 1 {
		t.Errorf("with the earlier runs listed: %s %q (%v), %d calls", v.Phase, v.Message, err, calls)
	}
	if v, _ := verdict.Judge(alone, verdict.Options{}); !strings.Contains(v.Message, verdict.CaseNoAnalysisInStrategy+" (") {
		t.Errorf("without them: %q", v.Message)
	}
	for _, objs := range []string{"first deployment", "analysis not run"} {
		calls = 0
		if _, err := verdict.Judge(noAnalysisObjects(t, objs), verdict.Options{NoAnalysis: verdict.NoAnalysis{Earlier: list}}); err != nil || calls != 0 {
			t.Errorf("%s: %d calls (%v): the strategy names analysis, nothing earlier to look for", objs, calls, err)
		}
	}
	calls = 0
	if _, err := verdict.Judge(fixture(t, "step-successful"), verdict.Options{NoAnalysis: verdict.NoAnalysis{Earlier: list}}); err != nil || calls != 0 {
		t.Errorf("a revision with analysis: %d calls (%v)", calls, err)
	}
	broken := errors.New("the API server is gone")
	_, err = verdict.Judge(alone, verdict.Options{NoAnalysis: verdict.NoAnalysis{Earlier: func() (verdict.Objects, error) { return verdict.Objects{}, broken }}})
	if !errors.Is(err, broken) {
		t.Errorf("a failing list: %v", err)
	}
	// the newest earlier revision is named, whichever order the list has
	second := deepCopy(t, removed.AnalysisRuns[0])
	set(second, "1111111111", "metadata", "labels", verdict.LabelPodTemplateHash)
	set(second, "checkout-1111111111-3-1", "metadata", "name")
	set(second, "3", "metadata", "annotations", verdict.AnnotationRevision)
	for _, runs := range [][]map[string]any{{removed.AnalysisRuns[0], second}, {second, removed.AnalysisRuns[0]}} {
		o := alone
		o.AnalysisRuns = runs
		if v, _ := verdict.Judge(o, verdict.Options{}); !strings.Contains(v.Message, "while revision 3 ran AnalysisRun checkout-1111111111-3-1") {
			t.Errorf("%q", v.Message)
		}
	}
	// a run of another Rollout is not the Rollout's earlier analysis
	other := deepCopy(t, removed.AnalysisRuns[0])
	set(other, []any{map[string]any{"kind": "Rollout", "name": "payments"}}, "metadata", "ownerReferences")
	o := alone
	o.AnalysisRuns = []map[string]any{other}
	if v, _ := verdict.Judge(o, verdict.Options{}); !strings.Contains(v.Message, verdict.CaseNoAnalysisInStrategy+" (") {
		t.Errorf("another Rollout's run: %q", v.Message)
	}
}

// TestNoAnalysisReplaced: a revision judged after it was replaced, which had no run, gets the policy
// too; its strategy is its successor's now, so only the revision number says anything of it.
func TestNoAnalysisReplaced(t *testing.T) {
	for _, tc := range []struct {
		rolloutRevision, want string
	}{{"1", verdict.CaseFirstDeployment}, {"2", verdict.CaseAnalysisNotRun}} {
		o := noAnalysisObjects(t, "no analysis in the strategy")
		hash := text(mapOf(o.Rollout["status"])["currentPodHash"])
		// a later revision is being delivered; the judged one is still the stable one
		set(o.Rollout, "abcdef0123", "status", "currentPodHash")
		pin := &verdict.Pin{Hash: hash, RolloutRevision: tc.rolloutRevision, Promoted: true}
		v, err := verdict.Judge(o, verdict.Options{Pin: pin, NoAnalysis: verdict.NoAnalysis{Policy: "inconclusive"}})
		if err != nil || v.Phase != verdict.Inconclusive || !strings.Contains(v.Message, "is the Rollout's stable revision, and no analysis ran for it: "+tc.want) {
			t.Errorf("revision %s: %s %q (%v)", tc.rolloutRevision, v.Phase, v.Message, err)
		}
	}
}

func TestNoAnalysisPolicyRejected(t *testing.T) {
	_, err := verdict.Judge(fixture(t, "step-successful"), verdict.Options{NoAnalysis: verdict.NoAnalysis{Policy: "degraded"}})
	if err == nil || !strings.Contains(err.Error(), `noAnalysis "degraded" is not one of successful, inconclusive, failed`) {
		t.Fatalf("%v", err)
	}
	for _, p := range []string{"", "successful", "SUCCESSFUL", "inconclusive", "failed"} {
		if _, ok := verdict.NoAnalysisPhase(p); !ok {
			t.Errorf("%q refused", p)
		}
	}
	for _, p := range []string{"success", "fail", " failed", "none"} {
		if _, ok := verdict.NoAnalysisPhase(p); ok {
			t.Errorf("%q accepted", p)
		}
	}
}

// TestNoAnalysisLatePin: a verification may pin the revision before the controller annotated its number
// (the first judgement of a first deployment); the number is read when the revision is current, so the
// first deployment is still named as such.
func TestNoAnalysisLatePin(t *testing.T) {
	o := noAnalysisObjects(t, "first deployment")
	pin := &verdict.Pin{Hash: text(mapOf(o.Rollout["status"])["currentPodHash"])}
	v, err := verdict.Judge(o, verdict.Options{Pin: pin, NoAnalysis: verdict.NoAnalysis{Policy: "failed"}})
	if err != nil || v.Phase != verdict.Failed || !strings.Contains(v.Message, verdict.CaseFirstDeployment+" (") || v.Pin.RolloutRevision != "1" {
		t.Errorf("%s %q (%v), pin %+v", v.Phase, v.Message, err, v.Pin)
	}
}
