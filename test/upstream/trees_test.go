package upstream

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// tree is one Argo CD release the upstream format is proven against.
type tree struct {
	module, version string
	// toolchain builds the copied tree: v3.6.2 needs Go >= 1.27, fetched through the module proxy.
	toolchain string
	// kindInName: the release's TestLuaHealthScript names a case <group>/<Kind>/<inputPath> (v3.6.1, v3.6.2)
	// rather than <inputPath> alone (v2.14.21, where go test tells equal names apart with #01, #02...).
	kindInName bool
}

// base is the tree the pull request is written against (Argo CD's newest release here); backport is
// the release branch that still gets back-ports.
var (
	base     = tree{"github.com/argoproj/argo-cd/v3", "v3.6.2", "go1.27.3", true}
	backport = tree{"github.com/argoproj/argo-cd/v2", "v2.14.21", "local", false}
	trees    = []tree{base, backport}
)

const repoRoot = "../.."

// TestBaseIsTheConformancePin: the pull request is proven on the Argo CD release test/argocd-v3.6 pins (its
// conformance suite, notifications and benchmarks), so a bump of that module's go.mod bumps base too.
func TestBaseIsTheConformancePin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "test", "argocd-v3.6", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(base.module) + `\s+(v\S+)`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("test/argocd-v3.6/go.mod requires no %s", base.module)
	}
	if string(m[1]) != base.version {
		t.Errorf("test/argocd-v3.6 pins %s@%s, the upstream format is proven on %s: bump base", base.module, m[1], base.version)
	}
}

// moduleDir is where the go command keeps a module's source, downloading it through the module proxy
// when the cache does not have it yet.
func moduleDir(t *testing.T, module, version, toolchain string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	// A module whose go line is newer than the local Go is only downloaded by a toolchain that new.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+toolchain, "GOWORK=off")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s %s", module, version, err, info.Error, stderr(err))
	}
	return info.Dir
}

func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func (tr tree) dir(t *testing.T) string { return moduleDir(t, tr.module, tr.version, tr.toolchain) }

func (tr tree) kindDir(t *testing.T, kind string) string {
	return filepath.Join(tr.dir(t), "resource_customizations", "argoproj.io", kind)
}
