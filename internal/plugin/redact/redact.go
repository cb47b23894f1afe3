// Package redact is the one place where the metric plugin removes Secret-sourced values from what it
// writes: measurement messages, values and metadata, and its log. A value reaches a text in more forms
// than the Secret holds: trimmed (a key file's trailing newline), quoted by %q or strconv.Quote, escaped by
// JSON or a URL, or cut by a clip. A Redactor knows every form, so one call, made before anything quotes,
// escapes or cuts a text, removes them all.
//
// The guarantee (docs/security.md, "What redaction guarantees"): a text passed through String contains no form of any
// secret, and no run of MinFragment or more consecutive bytes of one, whatever its length: every such
// occurrence, and each overlapping run of them, becomes a single Mask. Secrets of any length are redacted,
// as the Rollouts controller redacts every non-empty Secret argument in a measurement's message
// (argo-rollouts analysis/analysis.go, runMeasurements): a value that is also a common word is blanked
// wherever the word appears. What is left of a secret is at most MinFragment-1 bytes that something cut
// before the text reached the Redactor; the plugin's own clips (Clip) cut only redacted text.
package redact

import (
	"crypto/sha256"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mask replaces a secret, as the Rollouts controller's redaction does.
const Mask = "*****"

// MinFragment is the shortest run of a secret's bytes redacted on its own. Sixteen bytes of a token or a
// key are not found by chance in a message, and a prefix that long is already a quarter of a typical
// token: a clip before redaction (another library's, or a cut we do not control) leaves at most 15 bytes.
// Shorter runs are not redacted on their own, so a Secret value that shares a word with a message (a
// Rollout's name inside a run's name) does not blank every occurrence of each short piece of it.
const MinFragment = 16

// Redactor removes a set of secrets from texts. The zero value and nil redact nothing.
type Redactor struct {
	forms     map[string]bool
	fragments []uint64 // FNV-64a of every MinFragment-byte run of a form, sorted: 8 bytes each, as a key's are thousands
	included  []*Redactor
}

// Include makes r redact what o redacts, without copying it: o, built once for secrets many texts share
// (a kubeconfig Secret's, for every measurement that reads through it), must not change afterwards.
func (r *Redactor) Include(o *Redactor) {
	if o != nil && o != r {
		r.included = append(r.included, o)
	}
}

// New is a Redactor of secrets: each value, every form it takes, and every run of MinFragment bytes of
// each form.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add adds secrets, as New does; empty and white-space-only values are ignored.
func (r *Redactor) Add(secrets ...string) {
	var added []string
	n := 0
	for _, s := range secrets {
		for _, f := range r.add(s) {
			added = append(added, f)
			n += max(len(f)-MinFragment+1, 0)
		}
	}
	r.fragments = slices.Grow(r.fragments, n)
	for _, f := range added {
		r.addFragments(f)
	}
	slices.Sort(r.fragments)
	r.fragments = slices.Clip(slices.Compact(r.fragments))
}

// AddWhole adds documents that are redacted whole, in every form, but not by fragments: a kubeconfig,
// whose lines are also the field names the plugin's refusals name ("certificate-authority-data"). The
// secrets inside such a document are added with Add.
func (r *Redactor) AddWhole(docs ...string) {
	for _, d := range docs {
		r.add(d)
	}
}

func (r *Redactor) add(s string) []string {
	if r.forms == nil {
		r.forms = map[string]bool{}
	}
	var added []string
	for _, f := range Forms(s) {
		if !r.forms[f] {
			r.forms[f] = true
			added = append(added, f)
		}
	}
	return added
}

func (r *Redactor) addFragments(f string) {
	if len(f) < MinFragment {
		return
	}
	for i := 0; i+MinFragment <= len(f); i++ {
		r.fragments = append(r.fragments, hash(f[i:i+MinFragment]))
	}
}

// Forms are the texts a value becomes on its way into a message: itself and trimmed of white space, each
// quoted (strconv.Quote, as %q does, and QuoteToASCII, as %+q does) and JSON-escaped (with and without
// HTML escaping), without the outer quotes, and those quoted or escaped once more (a %q of a message that
// already quoted it, JSON of a %q), and URL-escaped (a Secret-named namespace in a request URL).
func Forms(s string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) bool {
		if f == "" || seen[f] {
			return false
		}
		seen[f] = true
		out = append(out, f)
		return true
	}
	for _, base := range []string{s, strings.TrimSpace(s)} {
		if strings.TrimSpace(base) == "" {
			continue
		}
		add(base)
		add(url.PathEscape(base))
		add(url.QueryEscape(base))
		for _, once := range escapes(base) {
			add(once)
			for _, twice := range escapes(once) {
				add(twice)
			}
		}
	}
	return out
}

// escapes are the quotings of s, without their outer quotes.
func escapes(s string) []string {
	unquote := func(q string) string { return q[1 : len(q)-1] }
	return []string{
		unquote(strconv.Quote(s)),
		unquote(strconv.QuoteToASCII(s)),
		unquote(jsonString(s, false)),
		unquote(jsonString(s, true)),
	}
}

func jsonString(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// hash is FNV-64a (hash/fnv), inline: it runs once per byte of every text redacted.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// String is s with every form of every secret, and every run of MinFragment bytes of one, replaced by
// Mask; overlapping and adjacent occurrences become one Mask.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	var covered []bool
	mark := func(from, to int) {
		if covered == nil {
			covered = make([]bool, len(s))
		}
		for i := from; i < to; i++ {
			covered[i] = true
		}
	}
	r.mark(s, mark)
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && covered[j] {
			j++
		}
		// a fragment's edge may fall inside a character: the whole character goes, so the text stays UTF-8
		if _, end := charAt(s, j-1); end > j {
			j = end
		}
		if start, _ := charAt(s, i); start < i {
			out := b.String()
			b.Reset()
			b.WriteString(out[:len(out)-(i-start)])
		}
		b.WriteString(Mask)
		i = j
	}
	return b.String()
}

// charAt is the span of the valid character that holds byte i of s; a byte of no valid character is
// its own span.
func charAt(s string, i int) (start, end int) {
	for k := i; k >= 0 && i-k < utf8.UTFMax; k-- {
		if utf8.RuneStart(s[k]) {
			if r, size := utf8.DecodeRuneInString(s[k:]); r != utf8.RuneError && k+size > i {
				return k, k + size
			}
			break
		}
	}
	return i, i + 1
}

// Key identifies what the Redactor redacts, for a cache of redacted results (two Redactors of the same
// secrets have the same Key) without holding the secrets themselves.
func (r *Redactor) Key() string {
	if r == nil || len(r.forms) == 0 && len(r.included) == 0 {
		return ""
	}
	h := sha256.New()
	forms := make([]string, 0, len(r.forms))
	for f := range r.forms {
		forms = append(forms, f)
	}
	slices.Sort(forms)
	for _, f := range forms {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	for _, f := range r.fragments {
		h.Write(strconv.AppendUint(nil, f, 16))
		h.Write([]byte{0})
	}
	for _, o := range r.included {
		h.Write([]byte(o.Key()))
	}
	return string(h.Sum(nil))
}

// mark marks every occurrence in s of a form of r's secrets, or of an included Redactor's.
func (r *Redactor) mark(s string, mark func(from, to int)) {
	for f := range r.forms {
		for at := 0; ; {
			i := strings.Index(s[at:], f)
			if i < 0 {
				break
			}
			mark(at+i, at+i+len(f))
			at += i + 1
		}
	}
	if len(r.fragments) > 0 {
		for i := 0; i+MinFragment <= len(s); i++ {
			if _, ok := slices.BinarySearch(r.fragments, hash(s[i:i+MinFragment])); ok {
				mark(i, i+MinFragment)
			}
		}
	}
	for _, o := range r.included {
		o.mark(s, mark)
	}
}

// Redacts says whether String would change s: s holds a secret.
func (r *Redactor) Redacts(s string) bool { return r.String(s) != s }

// Clip redacts s, then shortens it to n runes, marking the cut with "…": it cuts only redacted text, so
// it never leaves a part of a secret that redaction would have taken whole. A Mask is never cut.
func (r *Redactor) Clip(s string, n int) string {
	s = r.String(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	runes := []rune(s)
	out := string(runes[:n-1])
	// a cut inside a Mask would leave "**", which reads as a shorter secret's mask
	for k := len(Mask) - 1; k > 0; k-- {
		if strings.HasSuffix(out, Mask[:k]) && strings.HasPrefix(string(runes[n-1:]), Mask[k:]) {
			out = strings.TrimSuffix(out, Mask[:k])
			break
		}
	}
	return out + "…"
}

// Map redacts every value of m in place.
func (r *Redactor) Map(m map[string]string) {
	for k, v := range m {
		m[k] = r.String(v)
	}
}

// JSON redacts a JSON document's strings, keys included. A document without a secret is returned as it
// is; one with a secret is decoded, redacted string by string, and encoded again (key order may change),
// so that redaction never breaks the document, as a Mask put across its punctuation would.
func (r *Redactor) JSON(doc string) string {
	if !r.Redacts(doc) {
		return doc
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return jsonString(r.String(doc), false)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.walk(v)); err != nil {
		return jsonString(r.String(doc), false)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (r *Redactor) walk(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = r.walk(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[r.String(k)] = r.walk(e)
		}
		return m
	}
	return v
}
