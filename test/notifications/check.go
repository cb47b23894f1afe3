package notifications

import (
	"fmt"
	"strings"
)

// Subscriptions: the proofs subscribe each replayed Application to our trigger and to the catalog's
// on-health-degraded, each with a recipient of its own on one service, so that a delivery names its
// trigger.
const (
	CatalogTrigger = "on-health-degraded"
	// CatalogWhen is the catalog's on-health-degraded condition (notifications_catalog/triggers/
	// on-health-degraded.yaml), which the engine cannot evaluate on an Application without a status
	// (app.status is nil: "cannot fetch health from <nil>"); the replays find it in the catalog they load.
	CatalogWhen      = "app.status.health.status == 'Degraded'"
	OursRecipient    = "ours"
	CatalogRecipient = "catalog"
)

// Fired is one notification the engine delivered.
type Fired struct {
	// Frame is the Application frame whose processing sent it.
	Frame   int    `json:"frame"`
	Trigger string `json:"trigger"`
	Message string `json:"message"`
}

// Replay is what a release's notifications controller did with one scenario's frames, fed to it in
// order as its informer would see them.
type Replay struct {
	Scenario string
	Fired    []Fired
	// Skipped are the frames the controller did not process (notification_controller/controller
	// isAppSyncStatusRefreshed: the Application's sync status is older than its last operation).
	Skipped []int
	// CatalogErrors are the frames where the engine logged that it failed to evaluate the catalog's
	// condition (CatalogWhen); any other error fails the replay.
	CatalogErrors []int
}

// By is the deliveries of a trigger.
func (r Replay) By(trigger string) []Fired {
	var out []Fired
	for _, f := range r.Fired {
		if f.Trigger == trigger {
			out = append(out, f)
		}
	}
	return out
}

// Problems are the ways a replay breaks what our trigger promises (docs/notifications.md), against the
// scenario's ground truth: exactly one notification when the release has a run to notify (Failed or
// Error; with inconclusive also Inconclusive), at a frame where the Rollout is Degraded (or, for an
// inconclusive run, Suspended), naming the Rollout, the run (whenever the Rollout ever names it) and its
// metric; none otherwise. The catalog's trigger is reported beside it, not held to this.
func Problems(trigger string, truth Truth, sc *Scenario, r Replay, inconclusive bool) []string {
	var out []string
	fired := r.By(trigger)
	want := truth.Notified(inconclusive)
	if len(want) == 0 {
		for _, f := range fired {
			out = append(out, fmt.Sprintf("fired at frame %d without a run to notify (%s): %q", f.Frame, truth.Summary(), f.Message))
		}
		return out
	}
	if len(fired) != 1 {
		return append(out, fmt.Sprintf("fired %d times for %s, want once: %v", len(fired), truth.Summary(), fired))
	}
	f := fired[0]
	if f.Frame < 0 || f.Frame >= len(sc.Frames) {
		return append(out, fmt.Sprintf("fired at frame %d of %d", f.Frame, len(sc.Frames)))
	}
	status, _, _ := sc.Frames[f.Frame].ResourceHealth("Rollout")
	if status != "Degraded" && !(inconclusive && status == "Suspended") {
		out = append(out, fmt.Sprintf("fired at frame %d, where the Rollout is %q", f.Frame, status))
	}
	if !strings.Contains(f.Message, "Rollout ") || !strings.Contains(f.Message, "/checkout:") {
		out = append(out, fmt.Sprintf("the message does not name the Rollout checkout: %q", f.Message))
	}
	// the revision a user promoted, as Argo CD compared it at the release: with Kargo, whose sync runs
	// without a result until it ends, the message must still name it
	if rev := sc.ReleaseRevision(); rev == "" {
		out = append(out, "the recording marks no release frame with a compared revision")
	} else if !strings.Contains(f.Message, " at revision "+rev+":") {
		out = append(out, fmt.Sprintf("the message does not name the released revision %s: %q", rev, f.Message))
	}
	named := false
	for _, run := range want {
		metric := false
		for _, m := range run.Metrics {
			metric = metric || strings.Contains(f.Message, `Metric "`+m+`"`)
		}
		if metric && (strings.Contains(f.Message, run.Name) || !run.NamedByRollout) {
			named = true
		}
	}
	if !named {
		out = append(out, fmt.Sprintf("the message names no notified run with its metric (%s): %q", truth.Summary(), f.Message))
	}
	return out
}

// CatalogProblems: the catalog's message names the Application only, never a run (argo-cd
// notifications_catalog/templates/app-health-degraded.yaml): if it ever named one, the comparison would
// be moot.
func CatalogProblems(truth Truth, r Replay) []string {
	var out []string
	for _, f := range r.By(CatalogTrigger) {
		for _, run := range truth.Runs {
			if strings.Contains(f.Message, run.Name) {
				out = append(out, fmt.Sprintf("the catalog's %s names %s at frame %d: %q", CatalogTrigger, run.Name, f.Frame, f.Message))
			}
		}
	}
	return out
}

// Row is one scenario of the docs table.
type Row struct {
	Scenario string
	Truth    Truth
	Frames   int
	Release  int
	Ours     []Fired
	// OursInconclusive are our trigger's deliveries as generated with --inconclusive degraded.
	OursInconclusive []Fired
	Catalog          []Fired
	Skipped          []int
	sc               *Scenario
}

// NewRow is a scenario's row: r the replay of the default trigger, inconclusive the one generated with
// --inconclusive degraded.
func NewRow(truth Truth, sc *Scenario, r, inconclusive Replay, trigger string) Row {
	row := Row{Scenario: sc.Name, Truth: truth, Frames: len(sc.Frames), Release: -1, Ours: r.By(trigger),
		OursInconclusive: inconclusive.By(trigger), Catalog: r.By(CatalogTrigger), Skipped: r.Skipped,
		sc: sc}
	for _, f := range sc.Frames {
		if f.Release {
			row.Release = f.Frame
			break
		}
	}
	return row
}

// Table is the markdown table of docs/notifications.md: per scenario, its ground truth, how often and
// where our trigger fired and its message, the same with --inconclusive degraded, how often and where the
// catalog's on-health-degraded fired and its message, and the frames the controller skipped.
func Table(rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario (frames; release from) | the release's runs (timeline) | `%s` fired | its message | with `--inconclusive degraded` | `%s` fired | skipped |\n", "on-analysis-failed", CatalogTrigger)
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		sc := r.sc
		ours, msg := "0×", "—"
		if len(r.Ours) > 0 {
			var fs, ms []string
			for _, f := range r.Ours {
				fs = append(fs, frameAt(sc, f.Frame))
				ms = append(ms, cell(f.Message))
			}
			ours, msg = fmt.Sprintf("%d× at %s", len(r.Ours), strings.Join(fs, ", ")), strings.Join(ms, "<br>")
		}
		cat := "0×"
		if len(r.Catalog) > 0 {
			var fs []string
			for _, f := range r.Catalog {
				fs = append(fs, frameAt(sc, f.Frame))
			}
			cat = fmt.Sprintf("%d× at %s: %s", len(r.Catalog), strings.Join(fs, ", "), cell(firstLine(r.Catalog[0].Message)))
		}
		incon := fmt.Sprintf("%d×", len(r.OursInconclusive))
		if len(r.OursInconclusive) > 0 {
			var fs []string
			for _, f := range r.OursInconclusive {
				fs = append(fs, frameAt(sc, f.Frame))
			}
			incon += " at " + strings.Join(fs, ", ")
		}
		skipped := "—"
		if len(r.Skipped) > 0 {
			skipped = intList(r.Skipped)
		}
		fmt.Fprintf(&b, "| `%s` (%d; %d) | %s | %s | %s | %s | %s | %s |\n", r.Scenario, r.Frames, r.Release, cell(r.Truth.Summary()), ours, msg, incon, cat, skipped)
	}
	return b.String()
}

// frameAt is "frame N (Rollout <status>)".
func frameAt(sc *Scenario, n int) string {
	if n < 0 || n >= len(sc.Frames) {
		return fmt.Sprint(n)
	}
	st, _, _ := sc.Frames[n].ResourceHealth("Rollout")
	return fmt.Sprintf("%d (app %s, Rollout %s)", n, sc.Frames[n].AppHealth(), st)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func cell(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

func intList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}
