package verdict_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

const kargoDoc = "../../../docs/kargo.md"

// TestDocValueExample keeps the rendered value in docs/kargo.md equal to what the plugin returns for the
// last recorded frame of canary-step-failed; -update rewrites it.
func TestDocValueExample(t *testing.T) {
	objs := fixture(t, "step-failed")
	v, err := verdict.Judge(objs, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(v.Value), "", "  "); err != nil {
		t.Fatal(err)
	}
	block := "```json\n" + pretty.String() + "\n```\n"
	docblock.Check(t, kargoDoc, "internal/plugin/verdict TestDocValueExample", []byte(block))
}
