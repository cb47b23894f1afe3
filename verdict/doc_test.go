package verdict_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/verdict"
)

const (
	kargoDoc   = "../docs/kargo.md"
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
	raw, err := os.ReadFile(kargoDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, beginValue), strings.Index(doc, endValue)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated value block", kargoDoc)
	}
	want := doc[:i+len(beginValue)] + block + doc[j:]
	if want == doc {
		return
	}
	if golden.Updating() {
		if err := os.WriteFile(kargoDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the value example in %s differs from the plugin's output (go test ./verdict/ -update)", kargoDoc)
}
