package redact_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/analysis-health/analysis-health/internal/plugin/redact"
)

var long400 = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz", 12)[:400]

// TestString: each form a secret takes on its way into a message is redacted, and only it.
func TestString(t *testing.T) {
	for _, tc := range []struct {
		name, secret, text, want string
	}{
		{"raw", "hunter2-password", "token hunter2-password here", "token ***** here"},
		{"trailing newline, trimmed", "s3cr3t-value\n", `namespace s3cr3t-value holds`, "namespace ***** holds"},
		{"trailing newline, %q", "s3cr3t-value\n", fmt.Sprintf("namespace %q holds white space", "s3cr3t-value\n"), `namespace "*****" holds white space`},
		{"quote, %q", `quo"te-secret`, fmt.Sprintf("name %q", `quo"te-secret`), `name "*****"`},
		{"backslash, %q", `back\slash-secret`, fmt.Sprintf("name %q", `back\slash-secret`), `name "*****"`},
		{"quote, %q of %q", `quo"te-secret`, fmt.Sprintf("%q", fmt.Sprintf("name %q", `quo"te-secret`)), `"name \"*****\""`},
		{"quote, JSON", `quo"te-secret`, mustJSON(`x quo"te-secret`), `"x *****"`},
		{"html, JSON", `a<b>&c-secret`, mustJSON(`a<b>&c-secret`), `"*****"`},
		{"unicode, %+q", "sécret-välue", fmt.Sprintf("%+q", "sécret-välue"), `"*****"`},
		{"zero width, %q", "zero\u200bwidth", fmt.Sprintf("%q", "zero\u200bwidth"), `"*****"`},
		{"URL path", "ns with/slash", "GET /namespaces/" + url.PathEscape("ns with/slash") + "/rollouts", "GET /namespaces/*****/rollouts"},
		{"URL query", "a=b&c", "?labelSelector=" + url.QueryEscape("a=b&c"), "?labelSelector=*****"},
		{"400 bytes cut at 260 before redaction", long400, "x " + long400[:260] + "…", "x *****…"},
		{"400 bytes, a middle run of 16", long400, "<" + long400[100:116] + ">", "<*****>"},
		{"400 bytes, a run of 15 is not a fragment", long400, "<" + long400[100:115] + ">", "<" + long400[100:115] + ">"},
		{"common word", "Running", "Background analysis run r Running", "Background analysis run r *****"},
		{"one character", "7", "revision 7 of 17", "revision ***** of 1*****"},
		{"overlapping occurrences are one mask", "abab", "xabababx", "x*****x"},
		{"white space only is no secret", " \n", "a \n b", "a \n b"},
		{"not there", "hunter2-password", "nothing to hide", "nothing to hide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := redact.New(tc.secret).String(tc.text); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFragmentInsideCharacter: a fragment whose edge falls inside a multi-byte character masks the whole
// character, so the text stays valid UTF-8.
func TestFragmentInsideCharacter(t *testing.T) {
	secret := strings.Repeat("é", 8) + "z"
	// "©" is C2 A9, "é" C3 A9: the secret's run of 16 bytes from its second byte starts with the A9 of ©
	text := "<©" + strings.Repeat("é", 7) + "z>"
	got := redact.New(secret).String(text)
	if !utf8.ValidString(got) || got != "<*****>" {
		t.Errorf("got %q", got)
	}
}

// TestClip: a clip of a text holding a secret never leaves a part of it: redaction comes first, and a
// Mask is never cut in two.
func TestClip(t *testing.T) {
	r := redact.New(long400+"\n", "s3cr3t-value\n")
	for _, tc := range []struct {
		name, text string
		n          int
		want       string
	}{
		{"a long secret longer than the clip", fmt.Sprintf("name %q is not valid", long400+"\n"), 300, `name "*****" is not valid`},
		{"the clip falls in the secret", strings.Repeat("x", 290) + long400, 300, strings.Repeat("x", 290) + "*****"},
		{"the clip falls in the mask", strings.Repeat("x", 297) + long400 + "tail", 300, strings.Repeat("x", 297) + "…"},
		{"short text", "s3cr3t-value", 300, "*****"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Clip(tc.text, tc.n); got != tc.want {
				t.Errorf("Clip\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestJSON: redacting a JSON document keeps it a JSON document, even when a secret spans its punctuation.
func TestJSON(t *testing.T) {
	for _, secret := range []string{`","`, `":"`, `quo"te-secret`, "Running"} {
		doc := `{"verdict":"Running","message":` + mustJSON("run x: "+secret) + `,"runs":[{"name":` + mustJSON(secret) + `}]}`
		got := redact.New(secret).JSON(doc)
		var v any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatalf("secret %q: not JSON: %s", secret, got)
		}
		for _, s := range stringsOf(v) {
			for _, f := range redact.Forms(secret) {
				if strings.Contains(s, f) {
					t.Errorf("secret %q: form %q in %q", secret, f, s)
				}
			}
		}
	}
	if doc := `{"a":"b"}`; redact.New("zzz").JSON(doc) != doc {
		t.Error("a document without a secret changed")
	}
}

// TestAddWhole: a document added whole is redacted whole, but its lines, which are field names, are not.
func TestAddWhole(t *testing.T) {
	doc := "apiVersion: v1\nclusters: [{cluster: {insecure-skip-tls-verify: true}}]\n"
	r := &redact.Redactor{}
	r.AddWhole(doc)
	if got := r.String("refused: clusters[].cluster.insecure-skip-tls-verify"); strings.Contains(got, redact.Mask) {
		t.Errorf("a field name was redacted: %s", got)
	}
	if got := r.String("x " + strconv.Quote(doc)); got != `x "*****"` {
		t.Errorf("the quoted document: %s", got)
	}
}

func TestNil(t *testing.T) {
	var r *redact.Redactor
	if r.String("x") != "x" || r.Clip("xyz", 2) != "x…" {
		t.Error("a nil Redactor changed a text")
	}
}

// stringsOf is every string of a decoded JSON document, keys included.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsOf(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(append(out, k), stringsOf(e)...)
		}
		return out
	}
	return nil
}

// TestInclude: a Redactor built once (a kubeconfig's) redacts within every measurement's that includes it.
func TestInclude(t *testing.T) {
	shared := redact.New("kubeconfig-token-0123456789")
	r := redact.New("arg-secret")
	r.Include(shared)
	got := r.String(`arg-secret and "kubeconfig-token-0123456789" and its cut kubeconfig-token-01234…`)
	if got != `***** and "*****" and its cut *****…` {
		t.Errorf("got %q", got)
	}
	if r.Key() == redact.New("arg-secret").Key() {
		t.Error("the Key ignores the included Redactor")
	}
}
