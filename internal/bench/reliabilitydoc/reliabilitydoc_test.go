package reliabilitydoc

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

// docs/reliability.md is what the committed run renders to; `make reliability` refreshes both
// (`make docs` rewrites the page from the committed run).
func TestReliabilityDoc(t *testing.T) {
	doc, err := Document("../../../test/testdata/reliability", "testdata/fuzz.txt", HostileFile)
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, "../../../docs/reliability.md", "internal/bench/reliabilitydoc TestReliabilityDoc", []byte(doc))
}
