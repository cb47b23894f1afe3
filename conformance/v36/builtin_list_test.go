package v36

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/resource_customizations"

	"github.com/analysis-health/analysis-health/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/golden"
)

// The list of built-in scripts the `scripts` verb knows for v3.6 is Argo CD v3.6.1's embedded tree;
// a release that adds or drops a script makes this fail until the list is regenerated (-update).
func TestBuiltinListV36(t *testing.T) {
	var paths []string
	err := fs.WalkDir(resource_customizations.Embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".lua" && !strings.Contains(p, "/testdata/") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("Argo CD v3.6.1 embeds no resource_customizations scripts")
	}
	golden.File(t, "../../argocdcm/builtin/v3.6.txt", []byte(builtin.List("v3.6.1", paths)))
}
