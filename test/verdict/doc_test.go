package verdict_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

const kargoDoc = "../../docs/kargo.md"

// pluginReport is test/testdata/plugin/<version>.yaml, written by the recorder modules'
// TestPluginVerification from the real analysis controller.
type pluginReport struct {
	Controller string `json:"controller"`
	Scenarios  []struct {
		Scenario      string            `json:"scenario"`
		Verdict       string            `json:"verdict"`
		Verifications map[string]string `json:"verifications"`
		Expected      map[string]string `json:"expected"`
		Requests      int               `json:"requests"`
		Measurements  int               `json:"measurements"`
		Duplicates    int               `json:"duplicates"`
		Unreached     int               `json:"unreached"`
	} `json:"scenarios"`
}

// TestDocRealControllerProof renders the recorder's reports into docs/kargo.md; -update rewrites it. Each
// verification of each scenario must have ended in the outcome the scenario declares (the recorder checks
// it as it records; this holds the committed report to it).
func TestDocRealControllerProof(t *testing.T) {
	paths, err := filepath.Glob("../testdata/plugin/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if len(paths) == 0 {
		b.WriteString("No report recorded yet (`make e2e UPDATE=1` writes `test/testdata/plugin/<version>.yaml`).\n")
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r pluginReport
		if err := yaml.UnmarshalStrict(raw, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fmt.Fprintf(&b, "\n**%s** (`test/testdata/plugin/%s`)\n\n", r.Controller, filepath.Base(p))
		b.WriteString("| scenario | analysis verdict (the Rollout's own runs) | declared: at release / Kargo | verification at release | Kargo order, Argo CD's built-in health | Kargo order, our health | metric requests / own measurements (unreached) | duplicates |\n|---|---|---|---|---|---|---|---|\n")
		for _, s := range r.Scenarios {
			v := s.Verifications
			for name, want := range map[string]string{"at release": s.Expected["at release"], "Kargo, built-in health": s.Expected["Kargo"], "Kargo, our health": s.Expected["Kargo"]} {
				seq := strings.Split(v[name], " → ")
				if got := seq[len(seq)-1]; want == "" || got != want {
					t.Errorf("%s %s: verification %s ended %q, the scenario declares %q", filepath.Base(p), s.Scenario, name, got, want)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s / %s | %s | %s | %s | %d / %d (%d) | %d |\n", s.Scenario, s.Verdict, s.Expected["at release"], s.Expected["Kargo"],
				v["at release"], v["Kargo, built-in health"], v["Kargo, our health"], s.Requests, s.Measurements, s.Unreached, s.Duplicates)
		}
	}
	docblock.Check(t, kargoDoc, "test/verdict TestDocRealControllerProof", []byte(b.String()))
}
