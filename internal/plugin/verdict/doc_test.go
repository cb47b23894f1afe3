package verdict_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

const (
	kargoDoc   = "../../../docs/kargo.md"
	beginValue = "<!-- generated: value example (go test ./verdict/ -update) -->\n"
	endValue   = "<!-- end of generated value example -->\n"
)

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
	replaceBlock(t, beginValue, endValue, block)
}

func replaceBlock(t *testing.T, begin, end, block string) {
	t.Helper()
	golden.Block(t, kargoDoc, begin, end, block)
}
