//go:build unix

package generator

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Issue 44 #10: generate honours the umask. The umask is the process's, so these tests are not
// parallel (no parallel test runs beside a sequential one) and put it back.
func TestWriteHonoursUmask(t *testing.T) {
	for _, tc := range []struct {
		umask           int
		file, directory fs.FileMode
	}{
		{0o077, 0o600, 0o700},
		{0o022, 0o644, 0o755},
		{0o002, 0o664, 0o775},
	} {
		old := syscall.Umask(tc.umask)
		root := t.TempDir()
		file := filepath.Join(root, "argocd-cm.yaml")
		err := WriteFile(file, []byte("a: b\n"))
		dir := filepath.Join(root, "out")
		if err == nil {
			err = WriteDir(dir, []File{{Path: "sub/kustomization.yaml", Data: []byte("a: b\n")}})
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]fs.FileMode{
			file: tc.file, dir: tc.directory, filepath.Join(dir, "sub"): tc.directory,
			filepath.Join(dir, "sub", "kustomization.yaml"): tc.file,
		} {
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("umask %03o: %s is %03o, want %03o", tc.umask, p, got, want)
			}
		}
	}
}
