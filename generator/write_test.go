package generator

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listDir names everything in dir, so a test can prove a failed write left no temporary file behind.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func failRename(t *testing.T) {
	t.Helper()
	rename = func(string, string) error { return errors.New("injected rename failure") }
	t.Cleanup(func() { rename = os.Rename })
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out.yaml")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(file, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(file)
	info, _ := os.Stat(file)
	if string(got) != "new" || info.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v, want \"new\" 0644", got, info.Mode().Perm())
	}
	if l := listDir(t, dir); l != "out.yaml" {
		t.Errorf("folder holds %s, want only out.yaml", l)
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{"missing folder", filepath.Join(dir, "missing", "out.yaml"), "folder " + filepath.Join(dir, "missing") + " does not exist"},
		{"folder is a file", filepath.Join(notDir, "out.yaml"), "is not a folder"},
		{"target is a folder", filepath.Join(dir, "sub"), "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := listDir(t, dir)
			err := WriteFile(tc.path, []byte("x"))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if after := listDir(t, dir); after != before {
				t.Errorf("folder changed from %s to %s", before, after)
			}
		})
	}
	t.Run("rename fails", func(t *testing.T) {
		file := filepath.Join(dir, "keep.yaml")
		if err := os.WriteFile(file, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := listDir(t, dir)
		failRename(t)
		if err := WriteFile(file, []byte("new")); err == nil {
			t.Fatal("no error")
		}
		got, _ := os.ReadFile(file)
		if after := listDir(t, dir); after != before || string(got) != "old" {
			t.Errorf("folder %s (was %s), file %q: a failed write must leave everything as it was", after, before, got)
		}
	})
}

func TestWriteDir(t *testing.T) {
	files := []File{{Path: "a.yaml", Data: []byte("a")}, {Path: "x/y/b.lua", Data: []byte("b")}}
	t.Run("new folder", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		if err := WriteDir(out, files); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "x", "y", "b.lua"))
		info, _ := os.Stat(out)
		if err != nil || string(b) != "b" || info.Mode().Perm() != 0o755 {
			t.Errorf("b.lua %q %v, folder mode %v", b, err, info.Mode().Perm())
		}
		if l := listDir(t, filepath.Dir(out)); l != "out" {
			t.Errorf("parent holds %s, want only out", l)
		}
	})
	t.Run("empty existing folder", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteDir(out, files); err != nil {
			t.Fatal(err)
		}
		if l := listDir(t, out); l != "a.yaml,x" {
			t.Errorf("folder holds %s", l)
		}
	})

	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "mine.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		files   []File
		wantErr string
	}{
		{"folder with content", full, files, "exists and is not empty"},
		{"missing parent", filepath.Join(parent, "missing", "out"), files, "does not exist"},
		{"parent is a file", filepath.Join(parent, "file", "out"), files, "is not a folder"},
		{"target is a file", filepath.Join(parent, "file"), files, "is not a directory"},
		{"path escapes", filepath.Join(parent, "out"), []File{{Path: "../evil", Data: nil}}, "outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := listDir(t, parent)
			err := WriteDir(tc.dir, tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if after := listDir(t, parent); after != before {
				t.Errorf("parent changed from %s to %s", before, after)
			}
			if l := listDir(t, full); l != "mine.txt" {
				t.Errorf("existing folder now holds %s", l)
			}
		})
	}
	t.Run("rename fails", func(t *testing.T) {
		before := listDir(t, parent)
		failRename(t)
		if err := WriteDir(filepath.Join(parent, "out"), files); err == nil {
			t.Fatal("no error")
		}
		if after := listDir(t, parent); after != before {
			t.Errorf("parent changed from %s to %s: the temporary folder was left behind", before, after)
		}
	})
}
