package recorder

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the recorded timelines in ../testdata/timelines")

const timelineDir = "../testdata/timelines"

const header = "# Recorded by e2e/recorder from Argo Rollouts' own rollout controller; do not edit.\n" +
	"# Regenerate with `make e2e UPDATE=1` (cd e2e/recorder && go test -run TestRecord -update).\n"

// TestRecord drives the real controller through every scenario. With -update it writes the timelines;
// without, it proves that the committed timelines are exactly what the controller produces today, so a
// fixture can neither be edited by hand nor drift from the controller version pinned in go.mod.
func TestRecord(t *testing.T) {
	want := map[string]bool{}
	for _, sc := range Scenarios {
		want[sc.Name+".yaml"] = true
		t.Run(sc.Name, func(t *testing.T) {
			tl, err := Record(sc)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := yaml.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			raw = append([]byte(header), raw...)
			path := filepath.Join(timelineDir, sc.Name+".yaml")
			if *update {
				if err := os.MkdirAll(timelineDir, 0o755); err != nil {
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
				t.Errorf("%s differs from what the controller records now; regenerate with -update and review the diff", path)
			}
		})
	}
	entries, err := os.ReadDir(timelineDir)
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
