package docblock

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const owner = "test/upstream TestUpstreamDoc"

func block(owner, body string) string { return Begin(owner) + "\n" + body + End(owner) + "\n" }

func TestReplace(t *testing.T) {
	other := "internal/bench/benchdoc TestPerformanceDoc"
	for _, tc := range []struct {
		name, doc, body string
		want            string // the doc after Replace, when wantErr is empty
		wantErr         string
	}{
		{name: "rewrites the body only", doc: "# T\n\n" + block(owner, "old\n") + "after\n", body: "new\nlines\n",
			want: "# T\n\n" + block(owner, "new\nlines\n") + "after\n"},
		{name: "same body, same doc", doc: block(owner, "x\n"), body: "x\n", want: block(owner, "x\n")},
		{name: "END stays a line of its own", doc: block(owner, "old\n"), body: "no newline", want: block(owner, "no newline\n")},
		{name: "empty body", doc: block(owner, "old\n"), body: "", want: block(owner, "")},
		{name: "blank lines kept", doc: block(owner, ""), body: "\nx\n\n", want: block(owner, "\nx\n\n")},
		{name: "other owners' blocks untouched", doc: block(other, "a\n") + "mid\n" + block(owner, "b\n") + block(other+"2", "c\n"), body: "B\n",
			want: block(other, "a\n") + "mid\n" + block(owner, "B\n") + block(other+"2", "c\n")},
		{name: "END last line without newline", doc: Begin(owner) + "\nold\n" + End(owner), body: "new\n", want: Begin(owner) + "\nnew\n" + End(owner)},
		{name: "a marker quoted inside a line is prose", doc: "see `" + Begin(owner) + "`\n" + block(owner, "old\n"), body: "new\n",
			want: "see `" + Begin(owner) + "`\n" + block(owner, "new\n")},

		{name: "missing", doc: "# T\n", body: "x", wantErr: "no block of " + owner},
		{name: "only another owner's", doc: block(other, "x\n"), body: "x", wantErr: "no block of " + owner},
		{name: "duplicated", doc: block(owner, "a\n") + block(owner, "b\n"), body: "x", wantErr: "2 blocks of " + owner},
		{name: "END before BEGIN", doc: End(owner) + "\n" + Begin(owner) + "\n", body: "x", wantErr: "line 1: END of " + owner + " without its BEGIN"},
		{name: "no END", doc: Begin(owner) + "\nx\n", body: "x", wantErr: "line 1: BEGIN of " + owner + " has no END"},
		{name: "nested", doc: Begin(owner) + "\n" + block(other, "x\n") + End(owner) + "\n", body: "x", wantErr: "line 2: BEGIN of " + other + " inside the block of " + owner},
		{name: "END of another owner", doc: Begin(owner) + "\n" + End(other) + "\n", body: "x", wantErr: "line 2: END of " + other + " inside the block of " + owner},
		{name: "owner without a test", doc: block("docs", "x\n"), body: "x", wantErr: `owner "docs" is not`},
		{name: "malformed owner in the doc", doc: block("../x TestA", "x\n") + block(owner, ""), body: "x", wantErr: `owner "../x TestA" is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Replace([]byte(tc.doc), owner, []byte(tc.body))
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr != "":
				if !strings.Contains(err.Error(), owner) && !strings.Contains(tc.wantErr, `owner "`) {
					t.Errorf("error %q does not name the owner", err)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tc.want:
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestReplaceKeepsTheCallersBody(t *testing.T) {
	body := make([]byte, 1, 8)
	body[0] = 'x'
	if _, err := Replace([]byte(block(owner, "")), owner, body); err != nil {
		t.Fatal(err)
	}
	if got := string(body[:cap(body)][:2]); got != "x\x00" {
		t.Errorf("Replace wrote into the caller's array: %q", got)
	}
}

func TestParseOwner(t *testing.T) {
	for _, tc := range []struct {
		owner, dir, test string
	}{
		{"test/upstream TestUpstreamDoc", "test/upstream", "TestUpstreamDoc"},
		{"test/argocd-v2.14/e2e TestKargo", "test/argocd-v2.14/e2e", "TestKargo"},
		{"generator TestKargoDoc", "generator", "TestKargoDoc"},
		{"test/upstream", "", ""},
		{"test/upstream Doc", "", ""},
		{"/abs TestX", "", ""},
		{"a/../b TestX", "", ""},
		{"a/./b TestX", "", ""},
		{". TestX", "", ""},
		{"a//b TestX", "", ""},
		{"a TestX/sub", "", ""},
		{"a  TestX", "", ""},
	} {
		dir, test, err := ParseOwner(tc.owner)
		if (err == nil) != (tc.dir != "") || dir != tc.dir || test != tc.test {
			t.Errorf("ParseOwner(%q) = %q, %q, %v; want %q, %q", tc.owner, dir, test, err, tc.dir, tc.test)
		}
	}
}

func TestScan(t *testing.T) {
	doc := "# T\n\n" + block("a TestA", "one\n") + "\r\n" + strings.ReplaceAll(block("b TestB", "two\n"), "\n", "\r\n")
	blocks, err := Scan([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v", []string{blocks[0].Owner, fmt.Sprint(blocks[0].Line), string(blocks[0].Body), blocks[1].Owner, fmt.Sprint(blocks[1].Line), string(blocks[1].Body)})
	if want := fmt.Sprintf("%+v", []string{"a TestA", "3", "one\n", "b TestB", "7", "two\r\n"}); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// fakeT records what Check reports; Fatal ends the goroutine as testing.T's does.
type fakeT struct {
	testing.TB
	errors, fatals []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func runCheck(path, owner, body string) *fakeT {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(f, path, owner, []byte(body))
	}()
	<-done
	return f
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	committed := "# T\n\nprose\n" + block(owner, "x\n") + "more prose\n"
	for _, tc := range []struct {
		name, doc, body string
		update          bool
		wantDoc         string
		wantError       string
		wantFatal       string
	}{
		{name: "in step", doc: committed, body: "x\n", wantDoc: committed},
		{name: "in step, CRLF checkout", doc: strings.ReplaceAll(committed, "\n", "\r\n"), body: "x\n", wantDoc: strings.ReplaceAll(committed, "\n", "\r\n")},
		{name: "drift", doc: committed, body: "y\n", wantDoc: committed, wantError: "block of " + owner + " is not what the test renders; run make docs"},
		{name: "drift, -update", doc: committed, body: "y\n", update: true, wantDoc: strings.Replace(committed, "\nx\n", "\ny\n", 1)},
		{name: "no markers", doc: "# T\n", body: "y\n", wantDoc: "# T\n", wantFatal: "no block of " + owner},
		{name: "no markers, -update", doc: "# T\n", body: "y\n", update: true, wantDoc: "# T\n", wantFatal: "no block of " + owner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.update {
				if err := flag.Set("update", "true"); err != nil {
					t.Fatal(err)
				}
				defer flag.Set("update", "false")
			}
			f := runCheck(path, owner, tc.body)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.wantDoc {
				t.Errorf("doc is now\n%s\nwant\n%s", raw, tc.wantDoc)
			}
			for _, c := range []struct {
				got  []string
				want string
			}{{f.errors, tc.wantError}, {f.fatals, tc.wantFatal}} {
				if (c.want == "") != (len(c.got) == 0) || c.want != "" && !strings.Contains(strings.Join(c.got, "\n"), c.want) {
					t.Errorf("reported %q, want %q", c.got, c.want)
				}
			}
		})
	}
}
