// Package kargoui shows what a Kargo user sees of a Stage's verification: Kargo v1.11.2's own web UI,
// built from the vendored source (make kargo-ui), served by Kargo's own API server (the program of
// test/kargo-v1.11/cmd/kargo-api-ui, make kargo-api-ui) on 127.0.0.1 against a cluster's kubeconfig,
// and opened in Debian's Chromium, headless, through the Chrome DevTools protocol (chromedp). The browser
// logs in as admin on the real login page, opens the Stage's page, its Verifications tab and the
// AnalysisRun's details, and returns the text those show and screenshots of them (Browser.Verification).
//
// Where Kargo's UI shows a verification (ui/src, v1.11.2):
//   - the Stage's drawer (/project/:name/stage/:stageName, features/stage/stage-details.tsx), tab
//     "Verifications" (features/stage/verifications.tsx): a table of the verifications of every Freight of
//     the Stage's status.freightHistory, newest first, with a phase icon whose tooltip holds the phase and
//     the verification's message (what Kargo's controller copied from the AnalysisRun's status.message), the
//     date, the duration, the AnalysisRun's name (a link) and the Freight;
//   - the AnalysisRun's modal, opened by that link (features/common/analysis-modal/analysis-modal.tsx),
//     read from the API server's GET /v1beta1/projects/:project/analysis-runs/:name: a "Summary" tab
//     (panels/summary-panel.tsx: "Analysis failed" and the like, Runtime, and the run's status.message as
//     "Summary") and a tab per metric (panels/metric-panel.tsx: phase, counts, a table of measurements with
//     phase, Value and Time; a measurement's own message only for an Error measurement with condition
//     keys, which a plugin metric has none of).
//
// Argo Rollouts writes the last measurement's message into the run's status.message ("Metric "m" assessed
// Failed due to …: "Error Message: <measurement message>"", analysis/analysis.go assessRunStatus), so the
// plugin's measurement message reaches both the tooltip and the modal's Summary, on a run that did not
// succeed; its measurement value, a JSON string of words, is the metric tab's Value column, on every run.
package kargoui

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/upstream"
)

// KargoVersion is the Kargo release whose UI and API server this package drives.
const KargoVersion = "v1.11.2"

// Environment variables naming the programs (the Makefile's defaults are below the repository's bin/).
const (
	// EnvAPIServer is the API server program of test/kube-apiserver-v1.34 (as for the recorder).
	EnvAPIServer = "E2E_APISERVER"
	// EnvProgram is Kargo's API server with the UI (test/kargo-v1.11/cmd/kargo-api-ui).
	EnvProgram = "E2E_KARGO_API_UI"
	// EnvUI is the built UI: a folder with index.html at its top.
	EnvUI = "E2E_KARGO_UI"
	// EnvChromium is the browser (default: chromium on PATH, Debian's package).
	EnvChromium = "E2E_CHROMIUM"
)

// Programs are what the browser proof runs.
type Programs struct {
	APIServer string // the cluster
	Program   string // Kargo's API server serving UI
	UI        string
	Chromium  string
}

// FindPrograms locates the programs from the environment, else at the Makefile's paths below the
// repository root (bin/e2e-apiserver, bin/kargo-api-ui, bin/kargo-ui) and Chromium on PATH. Missing
// lists, one line each, what is not there and how to get it.
func FindPrograms() (p Programs, missing []string, err error) {
	root, err := upstream.RepoRoot()
	if err != nil {
		return p, nil, err
	}
	or := func(env, def string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		return def
	}
	bin := filepath.Join(root, "bin")
	p = Programs{
		APIServer: or(EnvAPIServer, filepath.Join(bin, "e2e-apiserver")),
		Program:   or(EnvProgram, filepath.Join(bin, "kargo-api-ui")),
		UI:        or(EnvUI, filepath.Join(bin, "kargo-ui")),
		Chromium:  os.Getenv(EnvChromium),
	}
	if _, err := os.Stat(p.APIServer); err != nil {
		missing = append(missing, fmt.Sprintf("the API server program %s (make e2e builds it; or set %s)", p.APIServer, EnvAPIServer))
	}
	if _, err := os.Stat(p.Program); err != nil {
		missing = append(missing, fmt.Sprintf("Kargo's API server with the UI %s (make kargo-api-ui; or set %s)", p.Program, EnvProgram))
	}
	if _, err := os.Stat(filepath.Join(p.UI, "index.html")); err != nil {
		missing = append(missing, fmt.Sprintf("Kargo's built UI %s (make kargo-ui, from the vendored source; or set %s)", filepath.Join(p.UI, "index.html"), EnvUI))
	}
	if p.Chromium == "" {
		if p.Chromium, err = exec.LookPath("chromium"); err != nil {
			missing = append(missing, fmt.Sprintf("Chromium (apt-get install -y chromium; or set %s)", EnvChromium))
		}
	} else if _, err := os.Stat(p.Chromium); err != nil {
		missing = append(missing, fmt.Sprintf("Chromium %s (%s)", p.Chromium, EnvChromium))
	}
	return p, missing, nil
}

// ProgramsOrSkip is FindPrograms for a test: one that lacks a program skips with one line naming what is
// missing (upstream.Missing, which CI's skip log fails on).
func ProgramsOrSkip(t testing.TB) Programs {
	t.Helper()
	p, missing, err := FindPrograms()
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		upstream.Missing(t, "Kargo's UI in a browser needs "+strings.Join(missing, "; "))
	}
	return p
}

// Open starts Kargo's API server with the UI against the cluster of kubeconfig and a browser logged in
// as admin; both stop when t ends.
func Open(t testing.TB, p Programs, kubeconfig string) (*Server, *Browser) {
	t.Helper()
	s, err := StartServer(p.Program, p.UI, kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	b, err := NewBrowser(p.Chromium)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.Login(s); err != nil {
		t.Fatalf("%v\nKargo's log: %s", err, s.LogTail())
	}
	return s, b
}

// Verification is what the Stage's page showed of its newest verification.
type Verification struct {
	// Row is the visible text of the verification's row in the Verifications tab (date, duration,
	// AnalysisRun, Freight), "" when the table is empty; AnalysisRun the text of its link, "" when the
	// verification names no AnalysisRun (then Summary, Metrics and RunShot are empty).
	Row         string
	AnalysisRun string
	// Columns are the Verifications table's column titles and Cells the row's cells under them (the
	// phase icon's is "", then Date, Duration, AnalysisRun, Freight).
	Columns, Cells []string
	// Tooltip is the text of the phase icon's tooltip: the phase, then the verification's message.
	Tooltip string
	// Phase is the tooltip's first line, Message the rest.
	Phase, Message string
	// Summary is the visible text of the AnalysisRun modal's Summary tab; Metrics the text of each
	// metric's tab, by the tab's label, and Tables its table of measurements (panels/metric-panel.tsx,
	// metric-table/metric-table.tsx), by the tab's label: the column titles first (for a plugin's metric:
	// the phase icon's "", Value, Time; "Data Point <key>" columns, which show a measurement's message,
	// only for a metric with condition keys), then each row's cells. A metric whose values the UI charts
	// has no table.
	Summary string
	Metrics map[string]string
	Tables  map[string][][]string
	// TabShot is a PNG of the page with the Verifications tab and the tooltip; RunShot of the
	// AnalysisRun's modal on its Summary tab.
	TabShot, RunShot []byte
}

// Screenshot is one PNG of the page, named for the file it goes to.
type Screenshot struct {
	Name string
	PNG  []byte
}

// Screenshots are v's screenshots: the Verifications tab, and the AnalysisRun's modal when the row
// named one (a verification without an AnalysisRun has no modal to show).
func (v *Verification) Screenshots() []Screenshot {
	shots := []Screenshot{{"verifications", v.TabShot}}
	if v.AnalysisRun != "" {
		shots = append(shots, Screenshot{"analysisrun", v.RunShot})
	}
	return shots
}

// CheckScreenshots fails if one of v's screenshots is blank (NotBlank), naming it.
func CheckScreenshots(prefix string, v *Verification) error {
	for _, s := range v.Screenshots() {
		if err := NotBlank(s.PNG); err != nil {
			return fmt.Errorf("%s-%s.png: %w", prefix, s.Name, err)
		}
	}
	return nil
}

// WriteScreenshots writes v's screenshots as <prefix>-verifications.png and, with an AnalysisRun,
// <prefix>-analysisrun.png into dir (made if needed), after checking that none is blank, and returns
// their paths.
func WriteScreenshots(dir, prefix string, v *Verification) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, s := range v.Screenshots() {
		path := filepath.Join(dir, prefix+"-"+s.Name+".png")
		if err := NotBlank(s.PNG); err != nil {
			return paths, fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, s.PNG, 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// NotBlank fails for data that is not a PNG or a PNG of (almost) one colour: a page that did not render
// is white, or the dark of a failed start.
func NotBlank(data []byte) error {
	if len(data) == 0 {
		return errors.New("no screenshot")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a PNG: %w", err)
	}
	b := img.Bounds()
	colours := map[[4]uint32]bool{}
	// a grid of samples is enough to tell text and icons from an empty page
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
			if len(colours) >= 16 {
				return nil
			}
		}
	}
	return fmt.Errorf("the %dx%d screenshot is blank: %d colours", b.Dx(), b.Dy(), len(colours))
}

// Cell is the text of the Verifications row's cell under the column titled title ("Duration"), and
// false when the table has no such column.
func (v *Verification) Cell(title string) (string, bool) {
	for i, c := range v.Columns {
		if c == title && i < len(v.Cells) {
			return v.Cells[i], true
		}
	}
	return "", false
}
