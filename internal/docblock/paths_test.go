package docblock

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is one inline code span of Markdown; fenced blocks are left out (they hold generated output
// and commands run elsewhere, which their owners check).
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// repoPath is a word that names a file or folder of this repository: it starts at one of the top-level
// folders (README's Layout), or at ./ in a `go test ./pkg/` command.
var repoPath = regexp.MustCompile(`^\./[A-Za-z0-9_.-][A-Za-z0-9_./-]*$|^(cmd|lua|generator|internal|test|testdata|docs|verify|conformance|e2e)/[A-Za-z0-9_./-]*$`)

// command is a span a reader runs as it stands. Other spans may name upstream paths (relative to the
// upstream module the doc cites), which this repository does not have.
var command = regexp.MustCompile(`^(cd |go (test|run|build|vet) |make )`)

// notYet are paths the docs name on purpose although they do not exist: the recipe for adding an Argo CD
// release (docs/argocd-versions.md) names the module that recipe creates.
var notYet = regexp.MustCompile(`^test/argocd-v3\.7(/|$)|^conformance/v37$`)

// TestDocPaths fails when a command in a doc's inline code names a path of the repository that is not
// there: the module split moved most files, and a command such as `go test ./conformance/` that a reader
// copies must still run. A `cd DIR && …` span resolves its relative paths in DIR, as the shell would.
func TestDocPaths(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "test", "README.md"))
	checked := 0
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				if !command.MatchString(m[1]) {
					continue
				}
				dir := "."
				words := strings.Fields(m[1])
				for j, w := range words {
					if w == "cd" && j+1 < len(words) {
						dir = words[j+1]
					}
					w = strings.TrimRight(w, ",;:)")
					if base, _, ok := strings.Cut(w, ":"); ok {
						w = base // file.go:12, a line reference
					}
					if !repoPath.MatchString(w) || notYet.MatchString(w) {
						continue
					}
					p := strings.TrimSuffix(w, "...")
					if strings.HasPrefix(w, "./") {
						p = filepath.Join(dir, p)
					}
					checked++
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
						t.Errorf("%s:%d: `%s` names %s, which does not exist", rel, i+1, m[1], p)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no repository path in any doc's inline code: is the repository root right?")
	}
	t.Logf("%d paths checked", checked)
}

// testPath is a path of the proofs as prose, code spans, fenced blocks and recorded headers name them:
// `test/` at the start of a word (so not an upstream module's test/ folder inside a longer path) and what
// follows it up to the first character no path here holds (a placeholder such as <version> ends it).
var testPath = regexp.MustCompile("(?:^|[\\s`(\"'*\\[])(test/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?)(\\*?)")

// goIdent is a Go identifier written after a package path (`test/probe.ResolutionCases`).
var goIdent = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)

// upstreamTestPaths are the test/ folders the docs cite from Argo Rollouts' module (docs/health-semantics.md,
// the upstream corpus), relative to its root; this repository has neither.
var upstreamTestPaths = regexp.MustCompile(`^test/(e2e|kustomize)(/|$)`)

// TestNamedTestPathsExist fails when a doc (README.md, docs/*.md, test/README.md, anywhere in them) or the
// header of a recorded file under test/testdata (its first lines: the comment naming what wrote it and the
// controller description the harness copies into every timeline and report) names a path under test/
// that the repository does not have. The recorder folder became packages (test/rollouts/harness,
// scenarios, pluginproof, live, …) while ~90 recorded headers and three docs still named it.
func TestNamedTestPathsExist(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "test", "README.md"))
	checked := 0
	check := func(rel string, line int, text string) {
		for _, m := range testPath.FindAllStringSubmatch(text, -1) {
			p := goIdent.ReplaceAllString(strings.TrimRight(m[1], ".,;:"), "")
			// vX.Y stands for any release (the recipes for adding one).
			if notYet.MatchString(p) || upstreamTestPaths.MatchString(p) || strings.Contains(m[1], "vX.Y") {
				continue
			}
			checked++
			if m[2] == "*" {
				// A glob (`test/argocd-*`): something must match it.
				if found, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)) + "*"); len(found) == 0 {
					t.Errorf("%s:%d names %s*, which matches nothing", rel, line, p)
				}
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Errorf("%s:%d names %s, which does not exist", rel, line, p)
			}
		}
	}
	for _, path := range docs {
		rel, _ := filepath.Rel(root, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			check(rel, i+1, line)
		}
	}
	recorded := 0
	err = filepath.WalkDir(filepath.Join(root, "test", "testdata"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".yaml" && ext != ".json" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		recorded++
		lines := strings.SplitN(string(raw), "\n", 13)
		for i, line := range lines[:min(len(lines), 12)] {
			check(rel, i+1, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 || recorded == 0 {
		t.Fatalf("%d paths in %d recorded files checked: is the repository root right?", checked, recorded)
	}
	t.Logf("%d test/ paths checked, %d recorded files read", checked, recorded)
}
