package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/test/picture"
	"github.com/analysis-health/analysis-health/test/svg"
)

// PicturesDir holds the pictures of the timelines, docs/timelines/<version>/<scenario>.svg, relative to
// the e2e directory; docs/why.md shows them.
const picturesDir = "../../../docs/timelines"

// pictures are the SVGs of a version's evaluations, by path.
func pictures(t *testing.T, version string, evals []*evaluation) map[string][]byte {
	t.Helper()
	report, err := picture.LoadPluginReport(filepath.Join(testDir, picture.PluginDir), version)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range evals {
		v := report[e.tl.Name]
		r := picture.Results{
			Version:   version,
			Builtin:   e.builtin.installation(v[picture.VerificationBuiltin]),
			Ours:      e.ours.installation(v[picture.VerificationOurs]),
			AtRelease: v[picture.VerificationAtRelease],
		}
		raw, err := picture.Draw(e.tl, r)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Join(picturesDir, version, e.tl.Name+".svg")] = raw
	}
	return out
}

func (r result) installation(verification string) picture.Installation {
	in := picture.Installation{
		Verified:     r.verified,
		Promo:        picture.Promotion{Phase: r.promotion.Phase, At: r.promotion.At.Seconds(), Message: r.promotion.Message},
		Problems:     r.problems,
		Verification: verification,
	}
	for i := range r.app {
		in.App = append(in.App, string(r.app[i].Status))
		in.Stage = append(in.Stage, string(r.stage[i]))
	}
	return in
}

// checkPictures requires docs/timelines to hold exactly the pictures, each one a readable SVG
// (svg.Check); with -update it writes them and removes pictures of timelines that no longer exist.
func checkPictures(t *testing.T, want map[string][]byte) {
	for path, raw := range want {
		if err := svg.Check(raw); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	// the README shows one of them: it must be one that is drawn
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`docs/timelines/[^)\s]+\.svg`).FindAllString(string(readme), -1) {
		if _, ok := want["../../../"+m]; !ok {
			t.Errorf("README.md shows %s, which no timeline draws", m)
		}
	}
	if t.Failed() {
		return
	}
	existing, err := filepath.Glob(filepath.Join(picturesDir, "*", "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	var stale, differ []string
	for _, p := range existing {
		if _, ok := want[p]; !ok {
			stale = append(stale, p)
		}
	}
	for path, raw := range want {
		if cur, err := os.ReadFile(path); err != nil || !bytes.Equal(cur, raw) {
			differ = append(differ, path)
		}
	}
	slices.Sort(differ)
	if !golden.Updating() {
		if len(stale) > 0 || len(differ) > 0 {
			t.Errorf("docs/timelines is out of date with what the e2e test computes (%d pictures differ or are missing: %s; %d have no timeline: %s); run make e2e UPDATE=1 and review the diff",
				len(differ), strings.Join(differ, ", "), len(stale), strings.Join(stale, ", "))
		}
		return
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range differ {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want[path], 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// picturePath is a picture's path relative to docs/.
func picturePath(version, scenario string) string {
	return fmt.Sprintf("timelines/%s/%s.svg", version, scenario)
}

// gallery is docs/why.md's section of a version's pictures.
func gallery(version string, evals []*evaluation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### The timelines of %s, drawn\n\n", version)
	b.WriteString("Drawn by `test/picture` from the same timeline and the same results as the rows above (`docs/timelines/`; `make e2e UPDATE=1` regenerates them). Time runs left to right in seconds after Argo CD applied the new revision; the lanes under the analysis are Argo CD's built-in Rollout health and ours, one above the other, each with the Stage health Kargo derives from it, the moment it verifies the Freight (the dashed line), the Promotion with the barrier hook and the plugin's verification.\n")
	for _, e := range evals {
		fmt.Fprintf(&b, "\n#### %s `%s`\n\n![%s, Argo Rollouts %s: %s](%s)\n", version, e.tl.Name, e.tl.Name, version, strings.NewReplacer("[", "(", "]", ")").Replace(e.tl.Summary), picturePath(version, e.tl.Name))
	}
	return b.String()
}
