package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThirdPartySums: every file of the upstream tree is what third_party/SHA256SUMS says, and the sums
// list no other: the files vendored in third_party/ as committed, and the folders of Go modules as the
// Go module proxy serves them today (downloaded, checked against Go's checksum database). When
// `make upstream` has assembled the tree, it is checked too.
func TestThirdPartySums(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	sums, err := ReadSums(filepath.Join(root, filepath.FromSlash(SumsFile)))
	if err != nil {
		t.Fatal(err)
	}
	mods, err := DownloadFetched()
	if err != nil {
		t.Fatal(err)
	}
	src, err := Sources(root, mods)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTree(src, sums); err != nil {
		t.Error(err)
	}
	// each kind is there: a vendored file and a fetched one
	for _, p := range []string{"argo-helm/charts/argo-cd/Chart.yaml", "kargo/v1.11.2/api/go.mod", "kargo/v1.11.2/ui/package.json", "kargo/v1.11.2/charts/kargo/Chart.yaml"} {
		if _, ok := sums[p]; !ok {
			t.Errorf("%s does not list %s", SumsFile, p)
		}
	}
	assembled := filepath.Join(root, filepath.FromSlash(AssembledDir))
	if files, err := ListTree(assembled, false); err == nil {
		if err := CheckTree(files, sums); err != nil {
			t.Errorf("the assembled tree %s (make upstream replaces it): %v", assembled, err)
		}
	} else {
		t.Logf("no assembled tree (%v): the sources alone were checked", err)
	}
}

// TestCheckTree: a changed byte, a missing file and a file the sums do not list each fail the check,
// naming the file.
func TestCheckTree(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/Chart.yaml", "name: a\n")
	write("a/templates/x.yaml", "kind: X\n")
	write("TOP", "not part of the tree with skipTop\n")
	files, err := ListTree(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("ListTree(skipTop) = %v, want the two files below a/", files)
	}
	sums, err := SumTree(files)
	if err != nil {
		t.Fatal(err)
	}
	sumsFile := filepath.Join(t.TempDir(), "SHA256SUMS")
	if err := WriteSums(sumsFile, sums); err != nil {
		t.Fatal(err)
	}
	if sums, err = ReadSums(sumsFile); err != nil {
		t.Fatal(err)
	}
	if err := CheckTree(files, sums); err != nil {
		t.Fatalf("an unchanged tree: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		change     func()
	}{
		{"a changed byte", "a/Chart.yaml: sha256", func() { write("a/Chart.yaml", "name: b\n") }},
		{"a missing file", "a/templates/x.yaml: missing", func() { os.Remove(filepath.Join(dir, "a", "templates", "x.yaml")) }},
		{"an unlisted file", "a/extra.yaml: not in", func() { write("a/extra.yaml", "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			files, err := ListTree(dir, true)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckTree(files, sums)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckTree = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestReadSumsRejects(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, line := range []string{
		sum + " one-space",
		"abc  short-sum",
		sum + "  ../outside",
		sum + "  a//b",
		sum + "  a\n" + sum + "  a",
	} {
		f := filepath.Join(t.TempDir(), "SHA256SUMS")
		if err := os.WriteFile(f, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSums(f); err == nil {
			t.Errorf("ReadSums accepted %q", line)
		}
	}
}

// TestMissingMessage: the skip line names the missing path and the command that fetches it, with or
// without $ANALYSIS_HEALTH_VENDOR.
func TestMissingMessage(t *testing.T) {
	p := filepath.Join("x", "kargo", "v1.11.2", "ui")
	t.Setenv(EnvVendor, "")
	if m := MissingMessage(p); !strings.Contains(m, p) || !strings.Contains(m, "`make upstream`") {
		t.Errorf("MissingMessage = %q", m)
	}
	t.Setenv(EnvVendor, "/elsewhere")
	if m := MissingMessage(p); !strings.Contains(m, p) || !strings.Contains(m, EnvVendor+"=/elsewhere") || !strings.Contains(m, "`make upstream`") {
		t.Errorf("MissingMessage with %s = %q", EnvVendor, m)
	}
}
