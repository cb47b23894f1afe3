package verdict_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

const kargoDoc = "../../../docs/kargo.md"

// TestDocValueExample keeps the example in docs/kargo.md equal to what the plugin returns for the last
// recorded frames of canary-step-successful and canary-step-failed: the value's text, as Kargo's UI shows
// it, and the metadata, with the structured verdict; -update rewrites it.
func TestDocValueExample(t *testing.T) {
	var b strings.Builder
	for _, f := range []struct{ fixture, scenario string }{{"step-successful", "canary-step-successful"}, {"step-failed", "canary-step-failed"}} {
		v, err := verdict.Judge(fixture(t, f.fixture), verdict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var words string
		if err := json.Unmarshal([]byte(v.Value), &words); err != nil {
			t.Fatal(err)
		}
		b.WriteString("`" + f.scenario + "` (" + v.Phase + "), the **Value** column:\n\n```text\n" + words + "\n```\n\n")
		if f.fixture != "step-failed" {
			continue
		}
		md := v.Metadata()
		b.WriteString("and its measurement's `metadata`, the structured verdict under `" + verdict.MetadataVerdict + "` (pretty-printed here):\n\n```text\n")
		for _, k := range slices.Sorted(maps.Keys(md)) {
			if k != verdict.MetadataVerdict {
				b.WriteString(k + ": " + md[k] + "\n")
			}
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, []byte(md[verdict.MetadataVerdict]), "", "  "); err != nil {
			t.Fatal(err)
		}
		b.WriteString(verdict.MetadataVerdict + ": " + pretty.String() + "\n```\n")
	}
	docblock.Check(t, kargoDoc, "internal/plugin/verdict TestDocValueExample", []byte(b.String()))
}
