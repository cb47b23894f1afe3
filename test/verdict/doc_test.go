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

const kargoDoc = "../../docs/kargo-proofs.md"

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
	// NoAnalysis are the no-analysis scenarios, each verified under every noAnalysis policy.
	NoAnalysis []struct {
		Scenario     string `json:"scenario"`
		Case         string `json:"case"`
		Revision     string `json:"revision"`
		Runs         int    `json:"runs"`
		Requests     int    `json:"requests"`
		Measurements int    `json:"measurements"`
		Policies     []struct {
			Policy        string            `json:"policy"`
			Expected      string            `json:"expected"`
			Verifications map[string]string `json:"verifications"`
			Message       string            `json:"message"`
		} `json:"policies"`
	} `json:"noAnalysis"`
}

// noAnalysisPolicies are the plugin's noAnalysis values: every no-analysis scenario is verified under each.
var noAnalysisPolicies = []string{"successful", "inconclusive", "failed"}

// policyOutcome is what docs/kargo.md promises of each policy; a report that declared another outcome
// would prove the recorder's declaration, not the documented behaviour.
var policyOutcome = map[string]string{"successful": "Successful", "inconclusive": "Inconclusive", "failed": "Failed"}

// TestDocRealControllerProof renders the recorder's reports into docs/kargo-proofs.md; -update rewrites it. Each
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
		if len(r.NoAnalysis) == 0 {
			t.Errorf("%s records no no-analysis scenario", filepath.Base(p))
			continue
		}
		fmt.Fprintf(&b, "\nRevisions fully promoted without analysis, verified under each `noAnalysis` policy ([No analysis](kargo.md#no-analysis)):\n\n")
		b.WriteString("| scenario | case | revision | runs of it | `noAnalysis` | declared | verification at release | Kargo order, Argo CD's built-in health | Kargo order, our health |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range r.NoAnalysis {
			if s.Runs != 0 {
				t.Errorf("%s %s: %d runs of the revision recorded, the scenario is of none", filepath.Base(p), s.Scenario, s.Runs)
			}
			var policies []string
			for _, pol := range s.Policies {
				policies = append(policies, pol.Policy)
				if pol.Expected != policyOutcome[pol.Policy] {
					t.Errorf("%s %s: noAnalysis %s declares %q, the documented outcome is %q", filepath.Base(p), s.Scenario, pol.Policy, pol.Expected, policyOutcome[pol.Policy])
				}
				for _, name := range []string{"at release", "Kargo, built-in health", "Kargo, our health"} {
					seq := strings.Split(pol.Verifications[name], " → ")
					if got := seq[len(seq)-1]; pol.Expected == "" || got != pol.Expected {
						t.Errorf("%s %s, noAnalysis %s: verification %s ended %q, the scenario declares %q", filepath.Base(p), s.Scenario, pol.Policy, name, got, pol.Expected)
					}
				}
				if !strings.Contains(pol.Message, "no analysis ran for it: "+s.Case+" (") {
					t.Errorf("%s %s, noAnalysis %s: the message %q does not name the case %q", filepath.Base(p), s.Scenario, pol.Policy, pol.Message, s.Case)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", s.Scenario, s.Case, s.Revision, s.Runs, pol.Policy, pol.Expected,
					pol.Verifications["at release"], pol.Verifications["Kargo, built-in health"], pol.Verifications["Kargo, our health"])
			}
			if strings.Join(policies, ",") != strings.Join(noAnalysisPolicies, ",") {
				t.Errorf("%s %s: verified under %v, want every policy %v", filepath.Base(p), s.Scenario, policies, noAnalysisPolicies)
			}
		}
		b.WriteString("\nThe plugin's last message at release, by scenario (the same under each policy but for its name):\n\n")
		for _, s := range r.NoAnalysis {
			if len(s.Policies) > 0 {
				fmt.Fprintf(&b, "- %s: `%s`\n", s.Scenario, s.Policies[len(s.Policies)-1].Message)
			}
		}
	}
	docblock.Check(t, kargoDoc, "test/verdict TestDocRealControllerProof", []byte(b.String()))
}
