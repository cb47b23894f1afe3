package reliabilitydoc

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
)

// docs/reliability.md is what the committed run renders to; `make reliability` refreshes both
// (go test ./internal/bench/reliabilitydoc/ -update rewrites the page from the committed run).
func TestReliabilityDoc(t *testing.T) {
	doc, err := Document("../../../test/testdata/reliability", "testdata/fuzz.txt")
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, "../../../docs/reliability.md", []byte(doc))
}
