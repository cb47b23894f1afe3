package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// liveReport is what test/rollouts/live RunLive writes (test/testdata/live/<version>.yaml; its LiveReport, in
// another module), decoded strictly so that the two cannot drift apart unseen.
type liveReport struct {
	ArgoCD    string `json:"argocd"`
	Rollouts  string `json:"rollouts"`
	Scenarios []struct {
		Scenario         string   `json:"scenario"`
		Install          string   `json:"install"`
		Health           []string `json:"health"`
		Replay           []string `json:"replay,omitempty"`
		Operation        string   `json:"operation"`
		Promotion        string   `json:"promotion"`
		PromotionMessage string   `json:"promotionMessage,omitempty"`
		PromotionSeconds int      `json:"promotionSeconds"`
		Stage            []string `json:"stage"`
		StageMessage     string   `json:"stageMessage,omitempty"`
		Verification     []string `json:"verification"`
		Verified         bool     `json:"verified"`
		VerificationMsg  string   `json:"verificationMessage,omitempty"`
		Rollback         string   `json:"rollback,omitempty"`
		RollbackVerif    []string `json:"rollbackVerification,omitempty"`
		Violations       []string `json:"violations,omitempty"`
		Kargo            string   `json:"kargo,omitempty"`
		KargoFrames      []struct {
			Tick  int        `json:"tick"`
			App   string     `json:"app"`
			Kargo kargoState `json:"kargo"`
			Model kargoState `json:"model"`
		} `json:"kargoFrames,omitempty"`
		ModelDiffs []string `json:"modelDiffs,omitempty"`
		// KargoUI is what Kargo's UI showed (the recorder's KargoUIRecord); no doc renders it yet
		KargoUI *struct {
			Row          []string `json:"row,omitempty"`
			Duration     string   `json:"duration,omitempty"`
			RealDuration string   `json:"realDuration,omitempty"`
			Tooltip      string   `json:"tooltip,omitempty"`
			Summary      string   `json:"summary,omitempty"`
			Metrics      []struct {
				Tab     string     `json:"tab"`
				Columns []string   `json:"columns,omitempty"`
				Rows    [][]string `json:"rows,omitempty"`
			} `json:"metrics,omitempty"`
		} `json:"kargoUI,omitempty"`
	} `json:"scenarios"`
	Declared []struct {
		Name         string   `json:"name"`
		Health       []string `json:"health"`
		Promotion    string   `json:"promotion"`
		Stage        string   `json:"stage"`
		Verification string   `json:"verification"`
		Verified     bool     `json:"verified"`
		Rollback     string   `json:"rollback,omitempty"`
		RollbackVer  string   `json:"rollbackVerification,omitempty"`
		Case         string   `json:"case,omitempty"`
	} `json:"declared"`
	BuiltinBroken int `json:"builtinBroken"`
}

// kargoState is what Kargo's controller wrote at a frame (the recorder's KargoState).
type kargoState struct {
	Promotion    string `json:"promotion"`
	Health       string `json:"health"`
	Verification string `json:"verification,omitempty"`
	AnalysisRun  string `json:"analysisRun,omitempty"`
	Verified     bool   `json:"verified"`
}

// liveDifferences are where the live run's Promotion or Freight verification parts from the replay's, by
// scenario, with the cause: a test fails on a difference not listed here, and on a listed one that no
// longer happens (docs/why.md "Live").
var liveDifferences = map[string]string{
	"canary-step-inconclusive-resumed": "Kargo's 5-minute argocd-update timeout. The replay counts it on the recorded clock, on which " +
		"the barrier's sync runs past 300 s (the user resumes after a pause), so the Promotion Errors. Live, Kargo's clock is the real one, " +
		"on which the scenario takes seconds, so the Promotion succeeds and the verification runs. A real release this long needs the step's retry.timeout raised.",
	"canary-rollback-during-analysis": "the replay runs one sync over every frame, and the rollback's Healthy Rollout ends it Succeeded. " +
		"Live, the release's sync still waits at the barrier when the previous image is synced back: Kargo starts no other Promotion " +
		"to the Stage while one runs, and argocd-update waits for a foreign operation, so the user aborts the release's Promotion and " +
		"terminates its sync first. The released Freight is never verified; the previous Freight's Promotion succeeds and its verification passes.",
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// TestLiveDoc holds the live run (Argo CD v3.6's own controller and repo-server, the Kargo driver) to
// the replay of the same scenarios' committed timelines: the Promotion with the barrier as gitops-engine's
// sync decides it over the frames, and the Freight verified as Kargo's rules decide it over our Argo CD
// health (verified only after a Succeeded Promotion). It renders docs/why.md "Live" from the report.
func TestLiveDoc(t *testing.T) {
	const version = "v1.10.2"
	path := filepath.Join(testDir, "testdata", "live", version+".yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep liveReport
	if err := yaml.UnmarshalStrict(raw, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rep.Declared) < 12 {
		t.Fatalf("%s: %d scenarios declared", path, len(rep.Declared))
	}
	oursCD, _ := installations(t)
	byName := map[string]*timeline.Timeline{}
	for _, tl := range loadTimelines(t, version) {
		byName[tl.Name] = tl
	}
	var b strings.Builder
	kargo := "the model of `test/kargo/stage` (`E2E_LIVE_KARGO=0`), acting through the API server"
	if len(rep.Scenarios) > 0 && strings.HasPrefix(rep.Scenarios[0].Kargo, "kargo ") {
		kargo = "Kargo " + strings.TrimPrefix(rep.Scenarios[0].Kargo, "kargo ") + "'s own controller and webhooks (`test/kargo-v1.11`)"
	}
	fmt.Fprintf(&b, "Argo CD %s's application controller and repo-server (`test/live-argocd-v3.6`) syncing each scenario from git, beside Argo Rollouts %s's controllers on the real API server; "+
		"the Promotion, the Stage's health, the verification and the Freight's verification are %s's. The replay columns are this page's, for the same scenarios' recorded timelines; the live report is `test/testdata/live/%s.yaml`. "+
		"*Without analysis-health* is Argo CD's built-in health checks (argocd-cm as the chart renders it) and a Stage without `spec.verification`, so that Kargo verifies the Freight on the Stage's health alone.\n\n", rep.ArgoCD, rep.Rollouts, kargo, version)
	b.WriteString("| scenario | Application health, live (= replay) | barrier sync | Promotion: live / replay | Stage at the end | verification (our plugin) | Freight verified: live / replay | without analysis-health: health; rules broken |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	builtin := map[string]int{}
	for i := range rep.Scenarios {
		if s := &rep.Scenarios[i]; s.Install == "built-in" {
			builtin[s.Scenario] = i
		}
	}
	noAnalysis := map[string]string{} // scenario: case
	for _, d := range rep.Declared {
		if d.Case != "" {
			noAnalysis[d.Name] = d.Case
		}
	}
	n := 0
	var notes []string
	var na strings.Builder
	for _, s := range rep.Scenarios {
		if s.Install != "ours" {
			continue
		}
		n++
		if c, ok := noAnalysis[s.Scenario]; ok {
			// no recorded timeline to replay: the plugin proof plays these (docs/kargo.md, "No analysis")
			bi := "not run"
			if j, ok := builtin[s.Scenario]; ok {
				bs := rep.Scenarios[j]
				bi = fmt.Sprintf("%s; %s; verified %v", strings.Join(bs.Health, ", "), bs.Promotion, bs.Verified)
			}
			fmt.Fprintf(&na, "| %s | %s | %s | %s | %s | %s | %v | %s | %s |\n", s.Scenario, c, strings.Join(s.Health, ", "), s.Promotion, last(s.Stage),
				strings.Join(s.Verification, " → "), s.Verified, s.VerificationMsg, bi)
			continue
		}
		tl := byName[s.Scenario]
		if tl == nil {
			t.Errorf("%s: no recorded timeline %s/%s to replay", path, version, s.Scenario)
			continue
		}
		e := &evaluation{tl: tl, verdicts: tl.AllVerdicts()}
		r := e.run(t, oursCD)
		replayVerified := r.promotion.Phase == "Succeeded" && r.verified >= 0
		if strings.Join(s.Health, " ") != strings.Join(s.Replay, " ") {
			t.Errorf("%s: live health %v, replay %v", s.Scenario, s.Health, s.Replay)
		}
		var diffs []string
		if s.Promotion != r.promotion.Phase {
			diffs = append(diffs, fmt.Sprintf("live Promotion %s, the replay's %s", s.Promotion, r.promotion))
		}
		if s.Verified != replayVerified {
			diffs = append(diffs, fmt.Sprintf("live Freight verified %v, the replay's %v (Promotion %s, verified at frame %d)", s.Verified, replayVerified, r.promotion.Phase, r.verified))
		}
		cause, listed := liveDifferences[s.Scenario]
		switch {
		case len(diffs) > 0 && !listed:
			t.Errorf("%s: %s", s.Scenario, strings.Join(diffs, "; "))
		case len(diffs) == 0 && listed:
			t.Errorf("%s: listed in liveDifferences, but live and replay agree", s.Scenario)
		case listed:
			notes = append(notes, fmt.Sprintf("* `%s`: %s", s.Scenario, cause))
		}
		bi := "not run"
		if j, ok := builtin[s.Scenario]; ok {
			bs := rep.Scenarios[j]
			bi = strings.Join(bs.Health, ", ") + "; " + fmt.Sprint(len(bs.Violations))
			if len(bs.Violations) > 0 {
				bi += " (" + strings.Join(bs.Violations, "; ") + ")"
			}
		}
		promo, verif := s.Promotion, strings.Join(s.Verification, " → ")
		if s.Rollback != "" {
			promo += " (the previous Freight's: " + s.Rollback + ")"
			verif += " (the previous Freight's: " + strings.Join(s.RollbackVerif, " → ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s / %s | %s | %s | %v / %v | %s |\n", s.Scenario, strings.Join(s.Health, ", "), s.Operation,
			promo, r.promotion.Phase, last(s.Stage), verif, s.Verified, replayVerified, bi)
	}
	if n != len(rep.Declared) {
		t.Errorf("%s: %d scenarios run with our scripts, %d declared", path, n, len(rep.Declared))
	}
	differ := 0
	for _, s := range rep.Scenarios {
		if j, ok := builtin[s.Scenario]; ok && s.Install == "ours" && strings.Join(s.Health, " ") != strings.Join(rep.Scenarios[j].Health, " ") {
			differ++
		}
	}
	fmt.Fprintf(&b, "\nWithout analysis-health, the Application's health differs from ours in %d of the %d scenarios, and the suite's rules against the analysis verdict flagged %d check(s). "+
		"Behind the barrier, Kargo's Promotion gate hides most of what the built-ins get wrong (the replay above shows it frame by frame); what it does not hide is a Rollout the built-ins call Healthy while an analysis still runs. "+
		"The Promotion may succeed while a background run released by the promotion still measures (analysisruns EndedWithoutVerdict: the rollout controller no longer waits on it, and terminates it at its next reconcile); "+
		"such a run may still fail, which the Freight's verification shows, so the suite holds the Promotion to the release and the Freight to the analysis.\n", differ, len(rep.Declared), rep.BuiltinBroken)
	if len(notes) > 0 {
		b.WriteString("\nWhere live and replay differ, and why:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if na.Len() > 0 {
		b.WriteString("\n**Promoted without analysis**, live: the plugin proof's three no-analysis scenarios (the Rollouts controller promotes the revision and runs no analysis of it), " +
			"delivered through git, Argo CD and Kargo as the others; our verification with its default policy (`--no-analysis successful`), whose message names the case. " +
			"They have no recorded timeline, so no replay columns.\n\n" +
			"| scenario | case | Application health, live | Promotion | Stage at the end | verification (our plugin) | Freight verified | our plugin's last message | without analysis-health: health; Promotion; verified |\n" +
			"|---|---|---|---|---|---|---|---|---|\n" + na.String())
	}
	b.WriteString(kargoTable(t, &rep))
	docblock.Check(t, whyDoc, "test/argocd-v2.14/e2e TestLiveDoc", []byte("\n"+b.String()+"\n"))
}

// verificationOrder ranks a verification phase as a Stage's verification moves through it: not started,
// Pending (the run created), Running, then an end.
func verificationOrder(phase string) int {
	switch phase {
	case "":
		return 0
	case "Pending":
		return 1
	case "Running":
		return 2
	}
	return 3
}

// modelDifference is a kind of frame where the model of test/kargo/stage decides otherwise than Kargo's
// controller wrote, with the Kargo code that explains it. A test fails on a differing frame of no kind
// listed here, and on a kind no frame shows.
type modelDifference struct {
	name  string
	match func(kargo, model kargoState) bool
	why   string
}

// sameButVerification: Kargo and the model agree on the Promotion and the Stage's health, which is Healthy.
func sameButVerification(k, m kargoState) bool {
	return k.Promotion == m.Promotion && k.Health == m.Health && k.Health == "Healthy"
}

var modelDifferences = []modelDifference{
	{
		name: "Kargo's Promotion a step ahead of the model",
		match: func(k, m kargoState) bool {
			return (k.Promotion == "Succeeded" || k.Promotion == "Errored") && m.Promotion == "Running" &&
				(k.Health == "" || k.Health == m.Health) && k.Verification == m.Verification && k.Verified == m.Verified
		},
		why: "Argo CD runs on the real clock and goes on after the suite's refresh: it can finish the sync between the suite's read of " +
			"the Application, on which the model decides, and Kargo's reconcile, which reads the Application through its own watch " +
			"(pkg/promotion/runner/builtin/argocd_updater.go mustPerformUpdate). Kargo's Promotion then ends a tick before the model's; " +
			"when it Succeeded, the Stage's health can read as not assessed, the state Kargo patches when it takes up the finished " +
			"Promotion (regular_stages.go syncPromotions: \"Erase any health checks that were performed for the previous Freight\") before " +
			"its next sub-reconciler assesses the health. The model takes the same step at the next tick.",
	},
	{
		name: "Kargo's Promotion and the Stage reconcile after it ahead of the model",
		match: func(k, m kargoState) bool {
			return k.Promotion == "Succeeded" && m.Promotion == "Running" && (m.Health == "" || m.Health == "Unknown") &&
				m.Verification == "" && !m.Verified && k.Health == "Healthy"
		},
		why: "the first entry's case, a reconcile further: after Argo CD finished the sync behind the suite's read, the Stage " +
			"reconcile Kargo's own watch of the Promotion started (regular_stages.go SetupWithManager) took up the finished Promotion, " +
			"assessed the Application Healthy and, in the same reconcile, started the verification (verifyStageFreight) or, for a Stage " +
			"without spec.verification, verified the Freight on its health, all before the suite's next tick. The model takes the " +
			"same steps over the next ticks.",
	},
	{
		name: "Kargo ahead of the model at the first Healthy frame",
		match: func(k, m kargoState) bool {
			return sameButVerification(k, m) && verificationOrder(k.Verification) > verificationOrder(m.Verification) &&
				(k.Verified == m.Verified || k.Verification == "Successful")
		},
		why: "the model decides once per tick; Kargo's Stage reconciler also runs on its own watches of Promotions, Applications and " +
			"AnalysisRuns (pkg/controller/stages/regular_stages.go SetupWithManager: `stageEnqueuerForAnalysisRuns`), so between two ticks it " +
			"starts the verification and, as the plugin's measurement answers at once, takes it to the run's next phase (and verifies the " +
			"Freight when that is Successful, markFreightVerifiedForStage) where the model has only started it. The model reaches the same " +
			"state at the next tick.",
	},
	{
		name: "the model ahead of a Kargo reconcile read between two status patches",
		match: func(k, m kargoState) bool {
			return sameButVerification(k, m) && k.Verification == "" && m.Verification == "Pending" && !k.Verified && !m.Verified
		},
		why: "Kargo's Stage reconciler patches the Stage's status after each of its sub-reconcilers (regular_stages.go reconcile: " +
			"\"Patch the status of the Stage after each sub-reconciler to show progress\"), and writes the refresh token only at the end of the " +
			"reconcile that handled it. A reconcile its own watches started right after the suite's can be read between \"assessing health\" " +
			"(Healthy) and \"verifying Stage Freight\" (the verification started, Pending): the model, which reads a whole reconcile, " +
			"has already started it. Kargo's next patch shows it.",
	},
}

// kargoTable is Kargo's own status per scenario and install, as Kargo v1.11.2's controller wrote it in
// the live run (the report's kargoFrames), and where the model (test/kargo/stage) decided otherwise on
// the same frames; empty for a report recorded with the model alone.
func kargoTable(t *testing.T, rep *liveReport) string {
	var b strings.Builder
	early := []string{}
	oursEarly := 0
	seen := map[int][]string{}
	for _, s := range rep.Scenarios {
		if !strings.HasPrefix(s.Kargo, "kargo ") {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\n**Kargo's own status** (%s's controller and webhooks, `test/kargo-v1.11`; a Project and Stage per scenario): "+
				"the Stage's `status.health`, the current Freight's verification and its `status.verifiedIn`, as Kargo wrote them after every tick, "+
				"and the ticks where the model of `test/kargo/stage` decides otherwise on the same frames (`modelDiffs` in the report).\n\n", strings.TrimPrefix(s.Kargo, "kargo "))
			b.WriteString("| scenario | install | Promotion | Stage health (Kargo) | verification (Kargo) | Freight verified by Kargo | verified before the analysis passed | model ≠ Kargo (ticks) |\n|---|---|---|---|---|---|---|---|\n")
		}
		ticks := 0
		for fi, f := range s.KargoFrames {
			if f.Kargo == f.Model {
				continue
			}
			ticks++
			// a difference of timing only: the model's next frame is where Kargo was, or is, or differs from
			// Kargo's by timing again (a chain of them; the last frame must agree)
			if fi+1 >= len(s.KargoFrames) {
				t.Errorf("%s (%s), tick %d: the last frame differs (Kargo %+v, model %+v)", s.Scenario, s.Install, f.Tick, f.Kargo, f.Model)
			} else if next := s.KargoFrames[fi+1]; stripRun(next.Model) != stripRun(f.Kargo) && stripRun(next.Model) != stripRun(next.Kargo) &&
				!explained(next.Kargo, next.Model) {
				t.Errorf("%s (%s), tick %d: Kargo %+v, the model %+v, and at the next tick the model %+v: not one tick behind", s.Scenario, s.Install, f.Tick, f.Kargo, f.Model, next.Model)
			}
			kind := -1
			for i, d := range modelDifferences {
				if d.match(f.Kargo, f.Model) {
					kind = i
					break
				}
			}
			if kind < 0 {
				t.Errorf("%s (%s), tick %d: Kargo wrote %+v, the model decides %+v: a difference no entry of modelDifferences explains", s.Scenario, s.Install, f.Tick, f.Kargo, f.Model)
				continue
			}
			seen[kind] = append(seen[kind], fmt.Sprintf("`%s` (%s) tick %d: Kargo %s, model %s", s.Scenario, s.Install, f.Tick, stateWords(f.Kargo), stateWords(f.Model)))
		}
		if ticks != len(s.ModelDiffs) {
			t.Errorf("%s (%s): %d frames differ, %d modelDiffs", s.Scenario, s.Install, ticks, len(s.ModelDiffs))
		}
		premature := false
		for _, v := range s.Violations {
			if strings.Contains(v, "Freight verified before") {
				premature = true
			}
		}
		if premature {
			if s.Install == "ours" {
				oursEarly++
			} else {
				early = append(early, "`"+s.Scenario+"`")
			}
		}
		verif := strings.Join(s.Verification, " → ")
		if s.Rollback != "" {
			verif += " (the previous Freight's: " + strings.Join(s.RollbackVerif, " → ") + ")"
		}
		install := s.Install
		if install == "built-in" {
			install = "without analysis-health"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %v | %v | %d of %d |\n", s.Scenario, install, s.Promotion, strings.Join(s.Stage, " → "), verif, s.Verified, premature, ticks, len(s.KargoFrames))
	}
	if b.Len() == 0 {
		return ""
	}
	if oursEarly > 0 {
		t.Errorf("with our argocd-cm, Kargo verified a Freight before its revision's analysis passed in %d scenario(s)", oursEarly)
	}
	named := "none of the scenarios"
	if len(early) > 0 {
		named = strings.Join(early, ", ")
	}
	fmt.Fprintf(&b, "\nWith ours, Kargo verified no Freight while an analysis of its revision was Running or had Failed. Without analysis-health, Kargo verified the Freight before its revision's analysis passed in: %s.\n", named)
	b.WriteString("\nWhere the model and Kargo's controller differ, by kind, with the frames. Each is a difference of timing only: at the next tick the model " +
		"decides what Kargo wrote at the differing one, or what Kargo writes at the next (the test fails otherwise), and the two never " +
		"end apart.\n\n")
	for i, d := range modelDifferences {
		if len(seen[i]) == 0 {
			t.Errorf("no frame shows the model difference %q: remove it from modelDifferences", d.name)
			continue
		}
		fmt.Fprintf(&b, "* **%s** (%d frames): %s Frames: %s.\n", d.name, len(seen[i]), d.why, strings.Join(seen[i], "; "))
	}
	return b.String()
}

// stateWords is a Kargo state as the doc names it: "Healthy, verification Pending, verified".
func stateWords(k kargoState) string {
	v := k.Verification
	if v == "" {
		v = "not started"
	}
	h := k.Health
	if h == "" {
		h = "not assessed"
	}
	out := fmt.Sprintf("%s, verification %s", h, v)
	if k.Verified {
		out += ", verified"
	}
	return out
}

// stripRun: a state without the AnalysisRun's name, which the model takes from Kargo.
// explained says whether an entry of modelDifferences explains Kargo's k beside the model's m.
func explained(k, m kargoState) bool {
	for _, d := range modelDifferences {
		if d.match(k, m) {
			return true
		}
	}
	return false
}

func stripRun(k kargoState) kargoState {
	k.AnalysisRun = ""
	return k
}
