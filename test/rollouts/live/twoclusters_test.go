package live

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// TestTwoClustersDoc renders docs/kargo.md's two-cluster table from the report TestLiveTwoClusters
// writes (test/testdata/live/two-clusters-v1.10.2.yaml), and holds the report to what the issue asks of
// it: ours breaks no rule and reads no Rollout or run in the control plane.
func TestTwoClustersDoc(t *testing.T) {
	path := filepath.Join(cluster.TestdataDir(), "live", "two-clusters-v1.10.2.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep TwoClusterReport
	if err := yaml.UnmarshalStrict(raw, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if rep.TokenRotation == nil || len(rep.Scenarios) != 2*len(TwoClusterScenarios) {
		t.Fatalf("%s: %d scenarios (want %d), tokenRotation %v", path, len(rep.Scenarios), 2*len(TwoClusterScenarios), rep.TokenRotation)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Argo CD %s, Rollouts %s, %s, from `%s`:\n\n", rep.ArgoCD, rep.Rollouts, rep.Kargo, "test/testdata/live/two-clusters-"+rep.Rollouts+".yaml")
	for _, c := range rep.Clusters {
		fmt.Fprintf(&b, "- **%s**: %s.\n", c.Name, strings.Join(c.Holds, "; "))
	}
	b.WriteString("\n| scenario | install | Promotion | Stage | verification | Freight verified | plugin's requests, workload cluster | plugin's requests, control plane | rules broken | as in one cluster |\n|---|---|---|---|---|---|---|---|---|---|\n")
	reads := func(m map[string]int) string {
		if len(m) == 0 {
			return "none"
		}
		var parts []string
		for res, n := range m {
			parts = append(parts, fmt.Sprintf("%s %d", res, n))
		}
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	}
	for _, s := range rep.Scenarios {
		verification := s.Verification
		if s.Rollback != "" {
			verification = fmt.Sprintf("%s; rollback's Promotion %s, verification %s", s.Verification, s.Rollback, s.RollbackVerification)
		}
		pr := "—"
		pc := "—"
		if s.Install == "ours" {
			pr, pc = reads(s.PluginReads["workload"]), reads(s.PluginReads["controlPlane"])
			if len(s.Violations) > 0 {
				t.Errorf("%s: ours broke %v", s.Scenario, s.Violations)
			}
			for res := range s.PluginReads["controlPlane"] {
				if res != "secrets" {
					t.Errorf("%s: the plugin read %s in the control plane", s.Scenario, res)
				}
			}
		}
		if !s.AsInOneCluster {
			t.Errorf("%s, %s: not as in one cluster", s.Scenario, s.Install)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %v | %s | %s | %d | %v |\n", s.Scenario, s.Install, s.Promotion, s.Stage, verification, s.Verified, pr, pc, len(s.Violations), s.AsInOneCluster)
	}
	for _, s := range rep.Scenarios {
		for _, v := range s.Violations {
			if s.Install == "built-in" {
				fmt.Fprintf(&b, "\nBuilt-in, %s: %s.\n", s.Scenario, v)
			}
		}
	}
	r := rep.TokenRotation
	fmt.Fprintf(&b, "\n**Token rotation** (`tokenRotation`, on %s with ours): the reader's ServiceAccount deleted while %s; the measurements from then on %s, the one with the revoked token:\n\n> %s\n\n"+
		"then the Secret renewed with the same `analysis-health kubeconfig` command; the same plugin process: %v; the Freight's verification %s, verified %v; rules broken %d.\n",
		r.Scenario, r.RevokedWhile, strings.Join(r.Measurements, " → "), r.Rejected, r.SameProcess, r.Verification, r.Verified, len(r.Violations))
	docblock.Check(t, filepath.Join(cluster.RepoRoot(), "docs", "kargo.md"), "test/rollouts/live TestTwoClustersDoc", []byte("\n"+b.String()+"\n"))
}
