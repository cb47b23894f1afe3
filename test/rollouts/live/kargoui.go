package live

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoui"
)

// kargoUIScenarios are the live scenarios whose Stages the browser opens, with ours and with the
// built-ins: a step analysis that passed, one that failed (its Promotion Errors at the barrier, so Kargo
// verifies nothing: the tab must be empty), a background analysis still running at promotion (the
// README's hero) and a first deployment, promoted without analysis.
var kargoUIScenarios = []string{"canary-step-successful", "canary-step-failed", "canary-background-promoted-while-running", "first-deployment"}

// kargoUIShots is where -update writes the screenshots, below the repository root:
// <scenario>-<install>-verifications.png and, with an AnalysisRun, -analysisrun.png.
const kargoUIShots = "docs/images/kargo-ui"

// runKargoUI opens, in Kargo v1.11.2's own UI served by its own API server on the live suite's cluster
// and read in headless Chromium (package kargoui), the Stage of each of kargoUIScenarios that this run
// played, with each install, after both passes: the scenarios' namespaces, Kargo Projects, are kept, so
// each Stage still holds what Kargo's controller wrote at the scenario's end. What the page shows is held
// to the cluster's objects: the Stage's newest verification and its AnalysisRun.
func runKargoUI(t *testing.T, env *harness.Env, played []LiveScenario, results []LiveResult, update bool) {
	progs := kargoui.ProgramsOrSkip(t)
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	argo, err := versioned.NewForConfig(env.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, b := kargoui.Open(t, progs, env.Cluster.Kubeconfig)
	t.Logf("Kargo's API server with its UI and Chromium ready, logged in, in %s", time.Since(start).Round(time.Second))
	ran := map[string]bool{}
	for _, sc := range played {
		ran[sc.Name] = true
	}
	for _, name := range kargoUIScenarios {
		if !ran[name] {
			continue // left out by E2E_LIVE_SCENARIOS
		}
		for _, install := range []string{"ours", "built-in"} {
			t.Run(name+"/"+install, func(t *testing.T) {
				var res *LiveResult
				for i := range results {
					if results[i].Scenario == name && results[i].Install == install {
						res = &results[i]
					}
				}
				if res == nil || res.KargoProject == "" {
					t.Fatalf("no result of %s with %s on Kargo's controller: the scenario failed before its end", name, install)
				}
				checkKargoUI(t, dyn, argo, s, b, res, filepath.Join(root, kargoUIShots), update)
			})
		}
	}
	t.Logf("Kargo's UI read in %s", time.Since(start).Round(time.Second))
}

// stageVerification is the newest verification of the Stage's current Freight, as Kargo's controller
// wrote it in the Stage's status (the one the UI lists first: the freightHistory and each
// verificationHistory are newest first).
type stageVerification struct {
	found               bool
	phase, message, run string
}

func readStageVerification(dyn dynamic.Interface, project string) (stageVerification, error) {
	var v stageVerification
	st, err := dyn.Resource(kargoStages).Namespace(project).Get(context.Background(), kargoStageName, metav1.GetOptions{})
	if err != nil {
		return v, fmt.Errorf("Kargo Stage %s/%s: %w", project, kargoStageName, err)
	}
	history, _, _ := unstructured.NestedSlice(st.Object, "status", "freightHistory")
	if len(history) == 0 {
		return v, nil
	}
	current, _ := history[0].(map[string]any)
	vs, _, _ := unstructured.NestedSlice(current, "verificationHistory")
	if len(vs) == 0 {
		return v, nil
	}
	m, _ := vs[0].(map[string]any)
	v.found = true
	v.phase, _, _ = unstructured.NestedString(m, "phase")
	v.message, _, _ = unstructured.NestedString(m, "message")
	v.run, _, _ = unstructured.NestedString(m, "analysisRun", "name")
	return v, nil
}

// checkKargoUI opens one scenario's Stage and holds what the page shows to Kargo's status and the
// AnalysisRun's.
func checkKargoUI(t *testing.T, dyn dynamic.Interface, argo versioned.Interface, s *kargoui.Server, b *kargoui.Browser,
	res *LiveResult, dir string, update bool) {
	project, final := res.KargoProject, res.KargoFinal
	want, err := readStageVerification(dyn, project)
	if err != nil {
		t.Fatal(err)
	}
	// the Stage is read after both passes: it must still hold what Kargo's controller wrote at the
	// scenario's end, or the page would be held to something else than the live result
	if want.phase != final.Verification || want.run != final.AnalysisRun {
		t.Errorf("Kargo Stage %s/%s now holds the verification %q (AnalysisRun %q); at the scenario's end Kargo's controller had written %q (%q)",
			project, kargoStageName, want.phase, want.run, final.Verification, final.AnalysisRun)
	}
	got, err := b.Verification(s, project, kargoStageName)
	if err != nil {
		t.Fatalf("Kargo Stage %s/%s: %v\nKargo's log: %s", project, kargoStageName, err, s.LogTail())
	}
	t.Logf("Kargo Stage %s/%s: row %q; tooltip %q; AnalysisRun %q", project, kargoStageName, got.Row, got.Tooltip, got.AnalysisRun)
	if got.Summary != "" {
		t.Logf("AnalysisRun Summary: %q", got.Summary)
	}
	for label, text := range got.Metrics {
		t.Logf("metric tab %q: %q", label, text)
	}

	prefix := res.Scenario + "-" + res.Install
	if update {
		paths, err := kargoui.WriteScreenshots(dir, prefix, got)
		if err != nil {
			t.Error(err)
		}
		t.Logf("screenshots: %s", strings.Join(paths, ", "))
	} else if err := kargoui.CheckScreenshots(prefix, got); err != nil {
		t.Error(err)
	}

	if !want.found {
		if got.Row != "" {
			t.Errorf("Kargo Stage %s/%s has no verification, the Verifications tab shows %q", project, kargoStageName, got.Row)
		}
		return
	}
	if got.Phase != final.Verification {
		t.Errorf("Kargo Stage %s/%s: the newest verification's phase shown is %q, Kargo's controller wrote %q", project, kargoStageName, got.Phase, final.Verification)
	}
	if got.Message != strings.TrimSpace(want.message) {
		t.Errorf("Kargo Stage %s/%s: the verification's message shown is %q, the Stage's status holds %q", project, kargoStageName, got.Message, want.message)
	}
	if got.AnalysisRun != final.AnalysisRun {
		t.Errorf("Kargo Stage %s/%s: the verification's AnalysisRun shown is %q, Kargo's controller wrote %q", project, kargoStageName, got.AnalysisRun, final.AnalysisRun)
	}
	if res.Install == "built-in" {
		// a Stage without spec.verification: Kargo verifies on the Stage's health alone, with no run
		if final.AnalysisRun != "" {
			t.Errorf("Kargo Stage %s/%s has no spec.verification, yet Kargo's controller names the AnalysisRun %q", project, kargoStageName, final.AnalysisRun)
		}
		return
	}
	if final.AnalysisRun == "" {
		t.Fatalf("Kargo Stage %s/%s: with ours, Kargo's controller named no AnalysisRun for the verification %q", project, kargoStageName, final.Verification)
	}
	ar, err := argo.ArgoprojV1alpha1().AnalysisRuns(project).Get(context.Background(), final.AnalysisRun, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("AnalysisRun %s/%s: %v", project, final.AnalysisRun, err)
	}
	st := ar.Status
	rs := st.RunSummary
	label := analysisStatusLabel(st.Phase, rs.Failed, rs.Error, rs.Inconclusive)
	for _, part := range []string{label, st.Message} {
		if part != "" && !strings.Contains(got.Summary, part) {
			t.Errorf("AnalysisRun %s/%s (phase %s, message %q): its Summary in the UI %q lacks %q", project, ar.Name, st.Phase, st.Message, got.Summary, part)
		}
	}
	for _, mr := range st.MetricResults {
		text, ok := "", false
		for l, tx := range got.Metrics {
			if first, _, _ := strings.Cut(l, "\n"); strings.TrimSpace(first) == mr.Name {
				text, ok = tx, true
			}
		}
		if !ok {
			t.Errorf("AnalysisRun %s/%s: the UI has no tab for its metric %s (tabs %v)", project, ar.Name, mr.Name, slices.Sorted(maps.Keys(got.Metrics)))
			continue
		}
		if l := analysisStatusLabel(mr.Phase, mr.Failed, mr.Error, mr.Inconclusive); !strings.Contains(text, l) {
			t.Errorf("AnalysisRun %s/%s: the UI's tab of its metric %s (phase %s) %q lacks %q", project, ar.Name, mr.Name, mr.Phase, text, l)
		}
	}
}

// analysisStatusLabel is the words Kargo's UI gives a run's or a metric's phase with its counts
// (ui/src/features/common/analysis-modal/transforms.ts metricStatusLabel, v1.11.2).
func analysisStatusLabel(phase v1alpha1.AnalysisPhase, failed, errored, inconclusive int32) string {
	switch phase {
	case v1alpha1.AnalysisPhasePending:
		return "Analysis pending"
	case v1alpha1.AnalysisPhaseRunning:
		return "Analysis in progress"
	case v1alpha1.AnalysisPhaseFailed:
		return "Analysis failed"
	case v1alpha1.AnalysisPhaseInconclusive:
		return "Analysis inconclusive"
	case v1alpha1.AnalysisPhaseError:
		return "Analysis errored"
	case v1alpha1.AnalysisPhaseSuccessful:
		switch {
		case failed > 0 && errored == 0 && inconclusive == 0:
			return "Analysis passed with measurement failures"
		case failed == 0 && errored > 0 && inconclusive == 0:
			return "Analysis passed with measurement errors"
		case failed == 0 && errored == 0 && inconclusive > 0:
			return "Analysis passed with inconclusive measurements"
		case failed > 0 || errored > 0 || inconclusive > 0:
			return "Analysis passed with multiple issues"
		}
		return "Analysis passed"
	}
	return "Analysis status unknown"
}
