package kargoui

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/analysis-health/analysis-health/internal/upstream"
)

// TestDocScreenshots: every screenshot of Kargo's UI that docs/kargo.md shows is committed and not blank
// (the screenshots themselves differ from run to run: dates, names; make e2e-live UPDATE=1 and make
// kargo-ui-smoke E2E_KARGO_UI_SHOTS=… rewrite them).
func TestDocScreenshots(t *testing.T) {
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, "docs", "kargo.md")
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile(`\]\((images/kargo-ui/[^)]+\.png)\)`).FindAllSubmatch(raw, -1)
	if len(shown) < 3 {
		t.Fatalf("%s shows %d screenshots of Kargo's UI, want the pair and the failed one", doc, len(shown))
	}
	for _, m := range shown {
		path := filepath.Join(root, "docs", string(m[1]))
		png, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s shows %s: %v", doc, m[1], err)
			continue
		}
		if err := NotBlank(png); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
