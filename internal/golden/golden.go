// Package golden compares test output with files under testdata/ and rewrites them under -update, for
// every package with golden files (`make golden`).
package golden

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

// Updating reports whether the test run rewrites golden files.
func Updating() bool { return *update }

// File compares got with the file at path, or writes it there under -update.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test -update)", err)
	}
	if w, g := normalize(want), normalize(got); w != g {
		t.Errorf("%s differs from the output (regenerate with: go test -update)\n%s", path, firstDiff(w, g))
	}
}

// Dir compares a set of files, keyed by slash-separated path relative to dir, with the folder, including
// files missing on either side; under -update it replaces the folder.
func Dir(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			File(t, filepath.Join(dir, filepath.FromSlash(p)), files[p])
		}
		return
	}
	var onDisk []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		onDisk = append(onDisk, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatalf("%v (regenerate with: go test -update)", err)
	}
	for _, p := range paths {
		File(t, filepath.Join(dir, filepath.FromSlash(p)), files[p])
	}
	sort.Strings(onDisk)
	if strings.Join(onDisk, "\n") != strings.Join(paths, "\n") {
		t.Errorf("%s holds files\n  %s\nbut the output has\n  %s\n(regenerate with: go test -update)",
			dir, strings.Join(onDisk, "\n  "), strings.Join(paths, "\n  "))
	}
}

// normalize undoes a Git checkout's CRLF conversion on Windows.
func normalize(b []byte) string { return string(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))) }

// firstDiff shows the first differing line with its number, WANT then GOT.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return "line " + strconv.Itoa(i+1) + ":\nWANT: " + wl + "\nGOT:  " + gl
		}
	}
	return ""
}

// Block compares the text between the lines begin and end of the document at path with block, or
// rewrites it there under -update: a generated section of a hand-written doc.
func Block(t testing.TB, path, begin, end, block string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no block %q", path, strings.TrimSpace(begin))
	}
	want := doc[:i+len(begin)] + block + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s differs from what the tests compute (regenerate with: go test -update)\n%s", path, firstDiff(normalize(raw), normalize([]byte(want))))
}
