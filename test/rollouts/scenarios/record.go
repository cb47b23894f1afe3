package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// The record tests of both Rollouts modules (test/rollouts-v1.8 on Rollouts v1.8.5, test/rollouts-v1.10
// on v1.10.2) are these functions, so the two record the same scenarios in the same way.

const header = "# Recorded by test/rollouts/scenarios RunRecord from Argo Rollouts' own controllers on a real API server; do not edit.\n" +
	"# Regenerate with `make e2e UPDATE=1`.\n"

// RunRecord drives the real controllers through every scenario. With update it writes the timelines;
// without, it proves that the committed timelines are exactly what the controllers record today, so a
// fixture can neither be edited by hand nor drift from the controller version pinned in go.mod.
func RunRecord(t *testing.T, env *harness.Env, update bool) {
	dir := harness.TimelineDir()
	want := map[string]bool{}
	for _, sc := range Scenarios {
		want[sc.Name+".yaml"] = true
		t.Run(sc.Name, func(t *testing.T) {
			tl, err := harness.Record(env, sc)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := yaml.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			raw = append([]byte(header), raw...)
			path := filepath.Join(dir, sc.Name+".yaml")
			if update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (record with -update)", err)
			}
			if !bytes.Equal(got, raw) {
				t.Errorf("%s differs from what the controllers record now; regenerate with -update and review the diff", path)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") && !want[e.Name()] {
			stale = append(stale, e.Name())
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("timelines without a scenario (delete them): %v", stale)
	}
}
