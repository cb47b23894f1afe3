package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/lua"
)

const hooksDoc = "../../docs/hooks.md"

// gateState and humanGateReport are test/testdata/live/human-gate-<version>.yaml, which
// test/rollouts/live RunLiveHumanGate writes (its GateState and HumanGateReport, in another module),
// decoded strictly so that the two cannot drift apart unseen.
type gateState struct {
	Health              string `json:"health"`
	Message             string `json:"message"`
	Operation           string `json:"operation"`
	Barrier             string `json:"barrier"`
	Promotion           string `json:"promotion"`
	Stage               string `json:"stage"`
	Verification        string `json:"verification"`
	VerificationMessage string `json:"verificationMessage,omitempty"`
	Verified            bool   `json:"verified"`
}

type humanGateReport struct {
	ArgoCD    string `json:"argocd"`
	Rollouts  string `json:"rollouts"`
	Scenarios []struct {
		Scenario   string    `json:"scenario"`
		Install    string    `json:"install"`
		AtGate     gateState `json:"atGate"`
		After      gateState `json:"afterResume"`
		Violations []string  `json:"violations,omitempty"`
		Kargo      string    `json:"kargo"`
	} `json:"scenarios"`
}

// TestHumanGateDoc renders docs/hooks.md "The human gate" from the live report, and holds the report to
// what the doc claims: under every install the Freight is verified only after the person resumed the
// Rollout and it was fully promoted (the plugin's verification was never Successful at the gate), and only
// --human-gate healthy completes the sync and the Promotion at the gate, saying why.
func TestHumanGateDoc(t *testing.T) {
	paths, err := filepath.Glob("../testdata/live/human-gate-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no report test/testdata/live/human-gate-<version>.yaml (make e2e-live UPDATE=1 writes it)")
	}
	var b strings.Builder
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rep humanGateReport
		if err := yaml.UnmarshalStrict(raw, &rep); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		decided := "the model of `test/kargo/stage`"
		if len(rep.Scenarios) > 0 && strings.HasPrefix(rep.Scenarios[0].Kargo, "kargo ") {
			decided = "Kargo " + strings.TrimPrefix(rep.Scenarios[0].Kargo, "kargo ") + "'s own controller (`test/kargo-v1.11`)"
		}
		for _, s := range rep.Scenarios {
			if s.Kargo != rep.Scenarios[0].Kargo {
				t.Errorf("%s: %s, %s decided by %q, the others by %q", p, s.Scenario, s.Install, s.Kargo, rep.Scenarios[0].Kargo)
			}
		}
		fmt.Fprintf(&b, "\nArgo CD %s and Argo Rollouts %s, live (`test/testdata/live/%s`), the Promotion, Stage and verification as %s wrote them: "+
			"each cell is *at the gate* → *after the person resumed the Rollout* (Argo CD's resume action).\n\n",
			rep.ArgoCD, rep.Rollouts, filepath.Base(p), decided)
		b.WriteString("| scenario | Rollout health script | Application health | sync operation (barrier) | Promotion (argocd-update) | Stage | verification (our plugin) | Freight verified |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		var messages []string
		gated := 0
		for _, s := range rep.Scenarios {
			g, a := s.AtGate, s.After
			phase := func(op string) string { ph, _, _ := strings.Cut(op, ":"); return ph }
			fmt.Fprintf(&b, "| %s | %s | %s → %s | %s (%s) → %s (%s) | %s → %s | %s → %s | %s → %s | %v → %v |\n", s.Scenario, s.Install,
				g.Health, a.Health, phase(g.Operation), g.Barrier, phase(a.Operation), a.Barrier, g.Promotion, a.Promotion,
				g.Stage, a.Stage, g.Verification, a.Verification, g.Verified, a.Verified)
			if g.Verified || g.Verification == "Successful" {
				t.Errorf("%s, %s: the Freight verified at the gate, before full promotion", s.Scenario, s.Install)
			}
			if !a.Verified || a.Verification != "Successful" || a.Promotion != "Succeeded" {
				t.Errorf("%s, %s: after the resume verification %s, verified %v, Promotion %s", s.Scenario, s.Install, a.Verification, a.Verified, a.Promotion)
			}
			open := g.Promotion == "Succeeded"
			if open != (s.Install == "ours --human-gate healthy") {
				t.Errorf("%s, %s: Promotion %s at the gate", s.Scenario, s.Install, g.Promotion)
			}
			if open {
				gated++
				if !strings.HasPrefix(g.Message, "Healthy: "+lua.HumanGateMessage) || !strings.Contains(g.VerificationMessage, lua.HumanGateMessage) || g.Verification != "Running" {
					t.Errorf("%s: at the open gate the message %q, the verification %s %q", s.Scenario, g.Message, g.Verification, g.VerificationMessage)
				}
				messages = append(messages, fmt.Sprintf("* `%s`, Argo CD: `%s`; the plugin's measurement: `%s`", s.Scenario,
					strings.TrimPrefix(g.Message, "Healthy: "), g.VerificationMessage))
			}
		}
		if gated == 0 {
			t.Errorf("%s: no scenario ran with --human-gate healthy", p)
		}
		b.WriteString("\nAt the gate with `--human-gate healthy`:\n\n" + strings.Join(messages, "\n") + "\n")
		var flagged []string
		for _, s := range rep.Scenarios {
			for _, v := range s.Violations {
				flagged = append(flagged, fmt.Sprintf("`%s`, %s: %s", s.Scenario, s.Install, v))
				if s.Install != "ours --human-gate healthy" || !strings.HasPrefix(v, "the Promotion Succeeded while the release of revision ") {
					t.Errorf("%s, %s: rule broken: %s", s.Scenario, s.Install, v)
				}
			}
		}
		fmt.Fprintf(&b, "\nThe live suite's rules against the analysis verdict (`test/rollouts/live/kargo.go`) flagged %d check(s), each the trade-off of the option "+
			"(its Promotion succeeds before the release is fully promoted): %s.\n", len(flagged), strings.Join(flagged, "; "))
	}
	docblock.Check(t, hooksDoc, "test/verdict TestHumanGateDoc", []byte(b.String()+"\n"))
}
