package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

// TestInspectDoc renders docs/hooks.md's inspect sample from the command itself, so the doc shows what
// inspect prints (make docs, or this test with -update, rewrites the block).
func TestInspectDoc(t *testing.T) {
	const chart = "testdata/charts/canary-checkout.yaml"
	code, out, errOut := run(t, "", "inspect", "-f", filepath.Join("..", "..", chart))
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	// Paths as a reader in a checkout sees them.
	out = strings.ReplaceAll(out, filepath.Join("..", "..")+string(filepath.Separator), "")
	docblock.Check(t, filepath.Join("..", "..", "docs", "hooks.md"), "internal/cli TestInspectDoc", []byte("```\n"+out+"```\n"))
}
