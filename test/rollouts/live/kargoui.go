package live

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
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
// README's hero), an inconclusive step analysis a person resumed, and a first deployment, promoted
// without analysis.
var kargoUIScenarios = []string{"canary-step-successful", "canary-step-failed", "canary-background-promoted-while-running",
	"canary-step-inconclusive-resumed", "first-deployment"}

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
	// start and finish are the verification's startTime (Kargo's controller's clock) and finishTime (the
	// AnalysisRun's completedAt, on the analysis controller's clock; Kargo's own without a run)
	start, finish time.Time
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
	for _, x := range []struct {
		field string
		to    *time.Time
	}{{"startTime", &v.start}, {"finishTime", &v.finish}} {
		if at, _, _ := unstructured.NestedString(m, x.field); at != "" {
			t, err := time.Parse(time.RFC3339, at)
			if err != nil {
				return v, fmt.Errorf("Kargo Stage %s/%s: the verification's %s %q: %w", project, kargoStageName, x.field, at, err)
			}
			*x.to = t
		}
	}
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
	res.KargoUI = record(got)
	for _, text := range res.KargoUI.texts() {
		if strings.Contains(text, "[object Object]") {
			t.Errorf("Kargo Stage %s/%s: the page shows %q", project, kargoStageName, text)
		}
	}
	// the Duration the row shows, in the UI's words from the Stage's times: the port of its words
	// (momentHumanize) held to the page
	if shown, ok := got.Cell("Duration"); ok && shown != "" && !want.start.IsZero() && !want.finish.IsZero() {
		if words := momentHumanize(want.finish.Sub(want.start)); words != shown {
			t.Errorf("Kargo Stage %s/%s: the row's Duration is %q; from the Stage's startTime %s and finishTime %s the UI's words are %q",
				project, kargoStageName, shown, want.start, want.finish, words)
		}
		res.KargoUI.RealDuration = shown // one clock: Kargo's start and end (no run), corrected below for a run
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
	// The run's end on the real clock, which Kargo's start is on: our plugin's last measurement's
	// finishedAt (the plugin runs on the real clock; the analysis controller's completedAt, which the row's
	// Duration ends at, is on the recorder's, an hour ahead: docs/kargo.md "What the Verification tab shows")
	var end time.Time
	for _, mr := range st.MetricResults {
		for _, m := range mr.Measurements {
			if m.FinishedAt != nil && m.FinishedAt.After(end) {
				end = m.FinishedAt.Time
			}
		}
	}
	if !end.IsZero() && !want.start.IsZero() && res.KargoUI.Duration != "" {
		res.KargoUI.RealDuration = momentHumanize(end.Sub(want.start))
	}
	checkOurWords(t, argo, project, ar, got)
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

// KargoUIRecord is what Kargo's UI showed of a Stage's newest verification, for the live report
// (LiveResult.KargoUI): the Verifications row's cells, the phase icon's tooltip, the AnalysisRun modal's
// Summary and each metric tab's table of measurements, whose Value column holds our plugin's words.
type KargoUIRecord struct {
	// Row is the row's cells (Date, Duration, AnalysisRun, Freight) and Duration the Duration cell.
	Row      []string `json:"row,omitempty"`
	Duration string   `json:"duration,omitempty"`
	// RealDuration is the same span on one clock, in the UI's words: to the AnalysisRun's last
	// measurement's end, on the real clock as Kargo's start is; the Duration the live suite's row shows
	// ends at the run's completedAt, on the recorder's clock, an hour ahead.
	RealDuration string          `json:"realDuration,omitempty"`
	Tooltip      string          `json:"tooltip,omitempty"`
	Summary      string          `json:"summary,omitempty"`
	Metrics      []KargoUIMetric `json:"metrics,omitempty"`
}

// KargoUIMetric is one metric tab: its label's first line, its table's column titles and rows.
type KargoUIMetric struct {
	Tab     string     `json:"tab"`
	Columns []string   `json:"columns,omitempty"`
	Rows    [][]string `json:"rows,omitempty"`
}

func record(v *kargoui.Verification) *KargoUIRecord {
	r := &KargoUIRecord{Tooltip: v.Tooltip, Summary: v.Summary}
	for i, c := range v.Cells {
		if i < len(v.Columns) && v.Columns[i] == "" && c == "" {
			continue // the phase icon's cell
		}
		r.Row = append(r.Row, c)
	}
	r.Duration, _ = v.Cell("Duration")
	for _, label := range slices.Sorted(maps.Keys(v.Metrics)) {
		first, _, _ := strings.Cut(label, "\n")
		m := KargoUIMetric{Tab: strings.TrimSpace(first)}
		if table := v.Tables[label]; len(table) > 0 {
			m.Columns, m.Rows = table[0], table[1:]
		}
		r.Metrics = append(r.Metrics, m)
	}
	return r
}

// texts are every text the record holds.
func (r *KargoUIRecord) texts() []string {
	out := append([]string{r.Tooltip, r.Summary}, r.Row...)
	for _, m := range r.Metrics {
		out = append(out, m.Columns...)
		for _, row := range m.Rows {
			out = append(out, row...)
		}
	}
	return out
}

// checkOurWords holds the metric tabs to our plugin's verification run: the Value column shows the words
// of each measurement's value (the JSON string our plugin returned, as the AnalysisRun's status holds it),
// and a Successful verification's words name the Rollout's own AnalysisRun of the verified revision and its
// metrics, or, for a revision promoted without analysis, say so.
func checkOurWords(t *testing.T, argo versioned.Interface, project string, ar *v1alpha1.AnalysisRun, got *kargoui.Verification) {
	t.Helper()
	var cells []string
	for _, table := range got.Tables {
		for _, row := range table[1:] {
			cells = append(cells, row...)
		}
	}
	var last string // the words of the run's newest measurement
	revision := ""
	for _, mr := range ar.Status.MetricResults {
		for _, m := range mr.Measurements {
			if m.Value == "" {
				continue
			}
			var words string
			if err := json.Unmarshal([]byte(m.Value), &words); err != nil {
				t.Errorf("AnalysisRun %s/%s metric %s: the value %s is not a JSON string (%v)", project, ar.Name, mr.Name, m.Value, err)
				continue
			}
			if !slices.Contains(cells, words) {
				t.Errorf("AnalysisRun %s/%s metric %s: the UI's tables %v do not show the value's words %q", project, ar.Name, mr.Name, got.Tables, words)
			}
			last = words
			// the revision our plugin pinned (verdict.MetadataRevision; the package is not imported here:
			// its dependencies are not the recorders' modules')
			if r := m.Metadata["revision"]; r != "" {
				revision = r
			}
		}
	}
	if ar.Status.Phase != v1alpha1.AnalysisPhaseSuccessful {
		return
	}
	if last == "" || revision == "" {
		t.Fatalf("AnalysisRun %s/%s is Successful with no words (%q) or no pinned revision (%q)", project, ar.Name, last, revision)
	}
	// the Rollout's own runs of the revision, as its controller created them
	runs, err := argo.ArgoprojV1alpha1().AnalysisRuns(project).List(context.Background(), metav1.ListOptions{LabelSelector: v1alpha1.DefaultRolloutUniqueLabelKey + "=" + revision})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, r := range runs.Items {
		if !strings.Contains(last, "AnalysisRun "+r.Name+" ") {
			continue
		}
		named++
		for _, m := range r.Spec.Metrics {
			if !strings.Contains(last, " "+m.Name+" ") {
				t.Errorf("AnalysisRun %s/%s: the words %q name the Rollout's AnalysisRun %s but not its metric %s", project, ar.Name, last, r.Name, m.Name)
			}
		}
	}
	switch {
	case len(runs.Items) > 0 && named == 0:
		t.Errorf("AnalysisRun %s/%s: the words %q name none of the Rollout's AnalysisRuns of revision %s (%d)", project, ar.Name, last, revision, len(runs.Items))
	case len(runs.Items) == 0 && !strings.Contains(last, "no analysis ran for it"):
		t.Errorf("AnalysisRun %s/%s: revision %s ran no analysis, and the words %q do not say so", project, ar.Name, revision, last)
	}
}

// momentHumanize is moment.duration(d).humanize({ ss: 1 }) in moment's English locale, as Kargo's
// Verifications table writes a Duration (ui/src/features/stage/verifications.tsx, v1.11.2; moment
// humanize and relativeTime: thresholds ss 1, s 45, m 45, h 22, d 26, M 11, each unit rounded).
func momentHumanize(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	round := func(x float64) int { return int(math.Floor(x + 0.5)) }
	seconds, minutes, hours, days := round(d.Seconds()), round(d.Minutes()), round(d.Hours()), round(d.Hours()/24)
	months, years := round(d.Hours()/24/30.436875), round(d.Hours()/24/365.2425)
	switch {
	case seconds <= 1:
		return "a few seconds"
	case seconds < 45:
		return fmt.Sprintf("%d seconds", seconds)
	case minutes <= 1:
		return "a minute"
	case minutes < 45:
		return fmt.Sprintf("%d minutes", minutes)
	case hours <= 1:
		return "an hour"
	case hours < 22:
		return fmt.Sprintf("%d hours", hours)
	case days <= 1:
		return "a day"
	case days < 26:
		return fmt.Sprintf("%d days", days)
	case months <= 1:
		return "a month"
	case months < 11:
		return fmt.Sprintf("%d months", months)
	case years <= 1:
		return "a year"
	}
	return fmt.Sprintf("%d years", years)
}
