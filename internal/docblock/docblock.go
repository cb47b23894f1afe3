// Package docblock is the one way a test owns part of a hand-written doc (docs/architecture.md,
// "Generated docs"). A block is
//
//	<!-- BEGIN generated: <owner> (make docs) -->
//	…
//	<!-- END generated: <owner> -->
//
// where <owner> is "<package folder from the repository root> <TestName>", e.g. "test/upstream
// TestUpstreamDoc": naming the test, not a make target or a file, lets a reader find the code and lets
// TestDocBlocks check that the owner still exists. Every owner runs under `make docs` with -update.
package docblock

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/upstream"
)

// Begin and End are the marker lines of owner's block, without their newline.
func Begin(owner string) string { return "<!-- BEGIN generated: " + owner + " (make docs) -->" }
func End(owner string) string   { return "<!-- END generated: " + owner + " -->" }

var (
	// A folder is a slash path of the tree (no "." or ".." parts, so it cannot point outside it), and
	// the test a top-level Test function: what `go test -run` can select in that folder.
	ownerRe = regexp.MustCompile(`^([A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*) (Test[A-Za-z0-9_]*)$`)
	beginRe = regexp.MustCompile(`^<!-- BEGIN generated: (.*) \(make docs\) -->$`)
	endRe   = regexp.MustCompile(`^<!-- END generated: (.*) -->$`)
)

// ParseOwner splits an owner into its package folder and test name.
func ParseOwner(owner string) (dir, test string, err error) {
	m := ownerRe.FindStringSubmatch(owner)
	if m == nil || strings.Contains("/"+m[1]+"/", "/./") || strings.Contains("/"+m[1]+"/", "/../") {
		return "", "", fmt.Errorf("owner %q is not \"<package folder> <TestName>\"", owner)
	}
	return m[1], m[2], nil
}

// Block is one generated block of a doc, as Scan finds it.
type Block struct {
	Owner string
	// Line is the 1-based line of the BEGIN marker.
	Line int
	// Body is everything between the marker lines.
	Body []byte
	// start is Body's offset in the doc.
	start int
}

// Scan returns the blocks of doc in order. Any marker line that does not pair up (END without BEGIN, a
// BEGIN inside another block, an END naming another owner, a BEGIN never closed) or an owner of the
// wrong form is an error: a doc that Scan accepts is one Replace can rewrite block by block.
func Scan(doc []byte) ([]Block, error) {
	var blocks []Block
	var open *Block
	for n, off := 1, 0; off < len(doc); n++ {
		lineEnd := bytes.IndexByte(doc[off:], '\n')
		next := len(doc)
		if lineEnd >= 0 {
			next = off + lineEnd + 1
		}
		line := strings.TrimSuffix(strings.TrimSuffix(string(doc[off:next]), "\n"), "\r")
		if m := beginRe.FindStringSubmatch(line); m != nil {
			if _, _, err := ParseOwner(m[1]); err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			if open != nil {
				return nil, fmt.Errorf("line %d: BEGIN of %s inside the block of %s (line %d), which has no END before it", n, m[1], open.Owner, open.Line)
			}
			open = &Block{Owner: m[1], Line: n, start: next}
		} else if m := endRe.FindStringSubmatch(line); m != nil {
			if _, _, err := ParseOwner(m[1]); err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			switch {
			case open == nil:
				return nil, fmt.Errorf("line %d: END of %s without its BEGIN before it", n, m[1])
			case m[1] != open.Owner:
				return nil, fmt.Errorf("line %d: END of %s inside the block of %s (line %d)", n, m[1], open.Owner, open.Line)
			}
			open.Body = doc[open.start:off]
			blocks = append(blocks, *open)
			open = nil
		}
		off = next
	}
	if open != nil {
		return nil, fmt.Errorf("line %d: BEGIN of %s has no END", open.Line, open.Owner)
	}
	return blocks, nil
}

// Replace returns doc with the body of owner's block set to body; the marker lines and everything
// outside the block stay as they are. The doc must hold exactly one block of owner, and its markers
// must pair up (Scan), so that a rewrite never eats text between two blocks.
func Replace(doc []byte, owner string, body []byte) ([]byte, error) {
	if _, _, err := ParseOwner(owner); err != nil {
		return nil, err
	}
	blocks, err := Scan(doc)
	if err != nil {
		return nil, fmt.Errorf("block of %s: %v", owner, err)
	}
	start, end, found := 0, 0, 0
	for _, b := range blocks {
		if b.Owner == owner {
			found++
			start, end = b.start, b.start+len(b.Body)
		}
	}
	switch found {
	case 0:
		return nil, fmt.Errorf("no block of %s: the doc needs the lines %q and %q", owner, Begin(owner), End(owner))
	case 1:
	default:
		return nil, fmt.Errorf("%d blocks of %s: an owner writes one block a doc", found, owner)
	}
	// The END marker must stay a line of its own.
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(body[:len(body):len(body)], '\n')
	}
	out := make([]byte, 0, len(doc)-(end-start)+len(body))
	out = append(out, doc[:start]...)
	out = append(out, body...)
	return append(out, doc[end:]...), nil
}

// Check fails the test when owner's block of the doc at path is not body; under -update (the flag of
// internal/golden, so one flag rewrites golden files and docs alike) it rewrites the block instead.
// Missing or broken markers fail even under -update: where a block goes is the doc's author's choice.
func Check(t testing.TB, path, owner string, body []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A Windows checkout may have turned the doc's newlines into CRLF; the block is compared as committed.
	doc := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	want, err := Replace(doc, owner, body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bytes.Equal(want, doc) {
		return
	}
	if golden.Updating() {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the block of %s is not what the test renders; run make docs (or this test with -update) and review the diff\n%s",
		path, owner, firstDiff(doc, want))
}

// firstDiff shows the first line that differs, the doc's then the rendered one, so that a failure in CI
// says what drifted without a checkout.
func firstDiff(have, want []byte) string {
	h, w := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl || i >= len(h) || i >= len(w) {
			return fmt.Sprintf("line %d:\nDOC:      %s\nRENDERED: %s", i+1, hl, wl)
		}
	}
	return ""
}

// Owner is the owner string of the running test: the working directory (go test runs a test in its
// package's folder, whichever module it is in) relative to the repository root, and the top-level
// test's name. It is for helpers shared by several owners; an owner's own test names itself.
func Owner(t testing.TB) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(t.Name(), "/")
	owner := filepath.ToSlash(rel) + " " + name
	if _, _, err := ParseOwner(owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// Root is the repository root (upstream.RepoRoot: the folder of the main module's go.mod, found from the
// working directory up), since owners run in the proof modules below it.
func Root() (string, error) { return upstream.RepoRoot() }
