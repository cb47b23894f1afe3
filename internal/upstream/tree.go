package upstream

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// The tree of upstream files that are not Go packages (the argo-helm charts, the argocd-operator and Kargo
// CRDs, Kargo's nested Go modules, chart and UI source) is assembled by `make upstream` into AssembledDir
// from two sources, every file checked against SumsFile:
//
//   - ThirdPartyDir, committed: the files no module proxy serves, vendored unmodified with their licences
//     (each top folder's SOURCE.md names the upstream repository, commit and paths);
//   - the Fetched folders of Go modules, downloaded through the Go module proxy (and so checked against
//     Go's checksum database) and copied out of the module cache.
//
// Its layout is the one Vendored's callers name ("argo-helm/charts/argo-cd", "kargo/v1.11.2/ui").
const (
	// ThirdPartyDir is the committed part of the tree, from the repository root. Only its folders are
	// part of the tree: its top-level files (SumsFile, go.mod, README.md) describe it.
	ThirdPartyDir = "third_party"
	// SumsFile is the sha256 of every file of the tree, in `sha256sum` format (tree paths), from the
	// repository root.
	SumsFile = "third_party/SHA256SUMS"
	// AssembledDir is where `make upstream` assembles the tree, from the repository root (gitignored).
	AssembledDir = "bin/upstream"
)

// Fetch is one folder of the tree copied out of a Go module.
type Fetch struct {
	Module, Version string
	From            string // slash path in the module
	To              string // slash path in the tree
}

// Fetched are the folders of the tree that the Go module proxy serves: Kargo v1.11.2's chart and web UI
// source, byte for byte the files of its repository at that tag.
var Fetched = []Fetch{
	{Module: "github.com/akuity/kargo", Version: "v1.11.2", From: "charts/kargo", To: "kargo/v1.11.2/charts/kargo"},
	{Module: "github.com/akuity/kargo", Version: "v1.11.2", From: "ui", To: "kargo/v1.11.2/ui"},
}

// ReadSums parses a SHA256SUMS file: tree path → lowercase hex sha256.
func ReadSums(file string) (map[string]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		sum, p, ok := strings.Cut(line, "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || p == "" || path.Clean(p) != p || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("%s:%d: not a `sha256sum` line of a tree path: %q", file, n, line)
		}
		if _, dup := sums[p]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", file, n, p)
		}
		sums[p] = sum
	}
	return sums, sc.Err()
}

// WriteSums writes sums in `sha256sum` format, sorted by path.
func WriteSums(file string, sums map[string]string) error {
	paths := make([]string, 0, len(sums))
	for p := range sums {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", sums[p], p)
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// ListTree is every regular file below dir: tree path (slash-separated, relative to dir) → file. skipTop
// leaves out the files directly in dir (ThirdPartyDir's own). Anything that is neither a folder nor a
// regular file is an error: the tree is plain files.
func ListTree(dir string, skipTop bool) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skipTop && !strings.Contains(rel, "/") {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		files[rel] = p
		return nil
	})
	return files, err
}

// Sources are the files the tree is assembled from: tree path → file, the folders of ThirdPartyDir below
// root and the Fetched folders of the module-cache folders in modDirs ("module@version" → folder).
func Sources(root string, modDirs map[string]string) (map[string]string, error) {
	files, err := ListTree(filepath.Join(root, ThirdPartyDir), true)
	if err != nil {
		return nil, err
	}
	for _, f := range Fetched {
		dir, ok := modDirs[f.Module+"@"+f.Version]
		if !ok {
			return nil, fmt.Errorf("%s@%s is not downloaded", f.Module, f.Version)
		}
		got, err := ListTree(filepath.Join(dir, filepath.FromSlash(f.From)), false)
		if err != nil {
			return nil, err
		}
		for rel, p := range got {
			tp := f.To + "/" + rel
			if prev, dup := files[tp]; dup {
				return nil, fmt.Errorf("%s: both %s and %s", tp, prev, p)
			}
			files[tp] = p
		}
	}
	return files, nil
}

// DownloadFetched downloads the modules of Fetched through the Go module proxy (`go mod download -json`,
// which checks each against go.sum's source, Go's checksum database) and returns their module-cache
// folders, "module@version" → folder. It runs outside any module, so no go.mod or go.sum is touched.
func DownloadFetched() (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "upstream-download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dirs := map[string]string{}
	for _, f := range Fetched {
		mv := f.Module + "@" + f.Version
		if _, ok := dirs[mv]; ok {
			continue
		}
		cmd := exec.Command(goBinary(), "mod", "download", "-json", mv)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOWORK=off", "GO111MODULE=on", "GOFLAGS=-mod=mod")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var info struct{ Dir, Error string }
		if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Error != "" || info.Dir == "" {
			return nil, fmt.Errorf("go mod download %s: %v %s %s", mv, err, info.Error, strings.TrimSpace(stderr.String()))
		}
		dirs[mv] = info.Dir
	}
	return dirs, nil
}

// CheckTree compares files (tree path → file) with sums: every file of sums must be there with its
// sha256, and no other. The error lists every difference, one a line.
func CheckTree(files, sums map[string]string) error {
	var probs []string
	for p, file := range files {
		want, ok := sums[p]
		if !ok {
			probs = append(probs, fmt.Sprintf("%s: not in %s (%s)", p, SumsFile, file))
			continue
		}
		got, err := fileSHA256(file)
		if err != nil {
			probs = append(probs, err.Error())
		} else if got != want {
			probs = append(probs, fmt.Sprintf("%s: sha256 %s, %s says %s (%s)", p, got, SumsFile, want, file))
		}
	}
	for p := range sums {
		if _, ok := files[p]; !ok {
			probs = append(probs, fmt.Sprintf("%s: missing", p))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	sort.Strings(probs)
	return fmt.Errorf("%d of %d upstream files differ from %s:\n%s", len(probs), len(sums), SumsFile, strings.Join(probs, "\n"))
}

// SumTree is the sha256 of every file of files, for WriteSums.
func SumTree(files map[string]string) (map[string]string, error) {
	sums := map[string]string{}
	for p, file := range files {
		s, err := fileSHA256(file)
		if err != nil {
			return nil, err
		}
		sums[p] = s
	}
	return sums, nil
}

func fileSHA256(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CopyTree writes files (tree path → file) below dst, which must not exist yet: files 0644, folders 0755
// (the module cache's are read-only).
func CopyTree(dst string, files map[string]string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s exists", dst)
	}
	for p, file := range files {
		out := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func goBinary() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}
