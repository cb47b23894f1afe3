package generator

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	glua "github.com/yuin/gopher-lua"
)

// The lazy form is for VMs that lex, parse and compile the whole script on every evaluation, where every
// byte costs: ordinary code most, but also each byte of a comment and of the long strings holding the lazily
// compiled chunks. minify drops comments and whitespace, separates tokens only where they would lex
// differently joined, and gives the script's locals the shortest names that change nothing, in the main
// chunk and in every chunk body alike. sameCode proves the result compiles to the same code as the source.

const (
	lua_optionsBegin = "-- analysis-health:options"
	lua_optionsEnd   = "-- analysis-health:end-options"
)

type tokKind uint8

const (
	tkName    tokKind = iota // an identifier or a keyword
	tkNumber                 // a numeral, as written
	tkString                 // a quoted or long string literal, as written
	tkChunk                  // a long string passed straight to loadstring: code, lexed into body
	tkOp                     // an operator or punctuation
	tkOptions                // the options block, kept as written (lua.SetOptions edits it in place)
)

type token struct {
	kind  tokKind
	text  string  // as written; for tkChunk the body between the brackets
	level int     // tkChunk: the level of its long bracket
	body  []token // tkChunk
	field bool    // tkName right after `.` or `:`: a key, never a variable
}

// keywords are gopher-lua's reserved words (Lua 5.1's and goto).
var keywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true, "false": true,
	"for": true, "function": true, "goto": true, "if": true, "in": true, "local": true, "nil": true,
	"not": true, "or": true, "repeat": true, "return": true, "then": true, "true": true, "until": true,
	"while": true,
}

// minify is src in the lazy form's layout, and the renaming of its locals it applied.
func minify(src string) (string, map[string]string, error) {
	toks, err := lex(src)
	if err != nil {
		return "", nil, err
	}
	ren, err := renames(src, toks)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	b.Grow(len(src))
	if err := write(&b, toks, ren); err != nil {
		return "", nil, err
	}
	return b.String() + "\n", ren, nil
}

// lex splits src into tokens, without whitespace and comments. A long string that is loadstring's
// argument is a chunk of code and is lexed too, recursively.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(src[i:], lua_optionsBegin):
			end := strings.Index(src[i:], lua_optionsEnd)
			if end < 0 {
				return nil, fmt.Errorf("options block not closed")
			}
			end += len(lua_optionsEnd)
			toks = append(toks, token{kind: tkOptions, text: src[i : i+end]})
			i += end
		case strings.HasPrefix(src[i:], "--"):
			j := i + 2
			if level, ok := longBracket(src[j:]); ok {
				closer := "]" + strings.Repeat("=", level) + "]"
				end := strings.Index(src[j:], closer)
				if end < 0 {
					return nil, fmt.Errorf("unclosed block comment at offset %d", i)
				}
				i = j + end + len(closer)
			} else {
				for j < len(src) && src[j] != '\n' {
					j++
				}
				i = j
			}
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unclosed string at offset %d", i)
			}
			toks = append(toks, token{kind: tkString, text: src[i : j+1]})
			i = j + 1
		case c == '[':
			level, ok := longBracket(src[i:])
			if !ok {
				toks = append(toks, token{kind: tkOp, text: "["})
				i++
				continue
			}
			open := "[" + strings.Repeat("=", level) + "["
			closer := "]" + strings.Repeat("=", level) + "]"
			end := strings.Index(src[i+len(open):], closer)
			if end < 0 {
				return nil, fmt.Errorf("unclosed long string at offset %d", i)
			}
			body := src[i+len(open) : i+len(open)+end]
			if n := len(toks); n >= 2 && toks[n-1].kind == tkOp && toks[n-1].text == "(" &&
				toks[n-2].kind == tkName && !toks[n-2].field && toks[n-2].text == "loadstring" {
				inner, err := lex(body)
				if err != nil {
					return nil, fmt.Errorf("chunk at offset %d: %w", i, err)
				}
				toks = append(toks, token{kind: tkChunk, text: body, level: level, body: inner})
			} else {
				toks = append(toks, token{kind: tkString, text: src[i : i+len(open)+end+len(closer)]})
			}
			i += len(open) + end + len(closer)
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			hex := strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X")
			j := i + 1
			for j < len(src) {
				if d := src[j]; isWord(d) || d == '.' ||
					(d == '+' || d == '-') && !hex && (src[j-1] == 'e' || src[j-1] == 'E') {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{kind: tkNumber, text: src[i:j]})
			i = j
		case isWord(c):
			j := i + 1
			for j < len(src) && isWord(src[j]) {
				j++
			}
			n := len(toks)
			field := n > 0 && toks[n-1].kind == tkOp && (toks[n-1].text == "." || toks[n-1].text == ":")
			toks = append(toks, token{kind: tkName, text: src[i:j], field: field})
			i = j
		default:
			op := src[i : i+1]
			for _, long := range []string{"...", "..", "==", "~=", "<=", ">=", "::"} {
				if strings.HasPrefix(src[i:], long) {
					op = long
					break
				}
			}
			toks = append(toks, token{kind: tkOp, text: op})
			i += len(op)
		}
	}
	return toks, nil
}

// compiledNames is what the compiled code of a script and of every chunk it compiles lazily says of names:
// those declared as locals (parameters included), those read or written as globals, and every string
// constant (field and method names, table keys and string literals all compile to one).
type compiledNames struct {
	locals, globals, constants map[string]bool
}

func (n *compiledNames) add(src string) error {
	proto, err := compileChunk(src)
	if err != nil {
		return err
	}
	var walk func(p *glua.FunctionProto)
	walk = func(p *glua.FunctionProto) {
		for _, l := range p.DbgLocals {
			n.locals[l.Name] = true
		}
		for _, inst := range p.Code {
			switch int(inst >> 26) {
			case glua.OP_GETGLOBAL, glua.OP_SETGLOBAL:
				if k, ok := p.Constants[int(inst&0x3ffff)].(glua.LString); ok {
					n.globals[string(k)] = true
				}
			}
		}
		for _, k := range p.Constants {
			if s, ok := k.(glua.LString); ok {
				n.constants[string(s)] = true
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return nil
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// renames maps each local of src (toks are its tokens) that can safely be renamed to its new, short name.
// The rule is conservative: a name is renamed only if the compiled code declares it as a local somewhere
// and never uses it as a global or a string constant, it is not a name of the options block (whose locals
// the main chunk uses and passes into chunks), and it is not arg, self or a name starting with `_`. Such a
// name only ever denotes locals, so renaming every use of it, everywhere (chunk bodies included), to a
// name no other token uses keeps every binding as it was. The most used names get the shortest names.
func renames(src string, toks []token) (map[string]string, error) {
	names := compiledNames{locals: map[string]bool{}, globals: map[string]bool{}, constants: map[string]bool{}}
	if err := names.add(src); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	uses := map[string]int{}     // each name's uses as a variable, over all chunks
	kept := map[string]bool{}    // names a renamed local must not take
	options := map[string]bool{} // every word of the options block
	var walk func(ts []token) error
	walk = func(ts []token) error {
		for _, t := range ts {
			switch t.kind {
			case tkName:
				kept[t.text] = true
				if !t.field && !keywords[t.text] {
					uses[t.text]++
				}
			case tkOptions:
				for _, w := range identifier.FindAllString(t.text, -1) {
					options[w] = true
				}
			case tkChunk:
				if err := names.add(t.text); err != nil {
					return fmt.Errorf("loadstring chunk: %w", err)
				}
				if err := walk(t.body); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(toks); err != nil {
		return nil, err
	}
	var eligible []string
	for name, n := range uses {
		if names.locals[name] && !names.globals[name] && !names.constants[name] && !options[name] &&
			name != "arg" && name != "self" && !strings.HasPrefix(name, "_") && n > 0 {
			eligible = append(eligible, name)
		}
	}
	for _, set := range []map[string]bool{names.locals, names.globals, names.constants, options, keywords} {
		for name := range set {
			kept[name] = true
		}
	}
	// arg and self are locals Lua declares implicitly (vararg functions, methods): a renamed use must never
	// fall into their scope.
	kept["arg"], kept["self"] = true, true
	// Every eligible name is rewritten, so its old spelling is free for another eligible name.
	for _, name := range eligible {
		delete(kept, name)
	}
	sort.Slice(eligible, func(i, j int) bool {
		if uses[eligible[i]] != uses[eligible[j]] {
			return uses[eligible[i]] > uses[eligible[j]]
		}
		return eligible[i] < eligible[j]
	})
	ren := make(map[string]string, len(eligible))
	next := 0
	for _, name := range eligible {
		for ; ; next++ {
			if short := shortName(next); !kept[short] {
				ren[name] = short
				next++
				break
			}
		}
	}
	return ren, nil
}

const (
	nameFirst = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	nameRest  = nameFirst + "0123456789_"
)

// shortName is the n-th identifier not starting with `_`, shortest first: a … Z, aa, ba, …
func shortName(n int) string {
	b := []byte{nameFirst[n%len(nameFirst)]}
	for n /= len(nameFirst); n > 0; n /= len(nameRest) {
		n--
		b = append(b, nameRest[n%len(nameRest)])
	}
	return string(b)
}

// write lays toks out, renamed by ren, on one line, without the trailing separators of table
// constructors; the options block keeps lines of its own, as lua.SetOptions needs.
func write(b *strings.Builder, toks []token, ren map[string]string) error {
	var prev token
	started := false
	for i, t := range toks {
		switch t.kind {
		case tkOp:
			if (t.text == "," || t.text == ";") && i+1 < len(toks) && toks[i+1].kind == tkOp && toks[i+1].text == "}" {
				// A table constructor's optional trailing separator.
				continue
			}
		case tkName:
			if r, ok := ren[t.text]; ok && !t.field {
				t.text = r
			}
		case tkChunk:
			var body strings.Builder
			if err := write(&body, t.body, ren); err != nil {
				return err
			}
			eq := strings.Repeat("=", t.level)
			closer := "]" + eq + "]"
			inner := body.String()
			if strings.HasSuffix(inner, "]") {
				// `…]]]` would close the string one bracket early.
				inner += " "
			}
			if strings.Contains(inner, closer) {
				return fmt.Errorf("chunk: minified body contains %q", closer)
			}
			// No newline after the opening bracket: the lexer would drop it anyway.
			t.text = "[" + eq + "[" + inner + closer
		case tkOptions:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.text)
			b.WriteByte('\n')
			started = false
			continue
		}
		if started && needsSpace(prev, t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
		prev, started = t, true
	}
	return nil
}

// longBracket reports whether s opens a long bracket ([[, [=[, ...) and its level.
func longBracket(s string) (int, bool) {
	if len(s) < 2 || s[0] != '[' {
		return 0, false
	}
	n := 1
	for n < len(s) && s[n] == '=' {
		n++
	}
	if n < len(s) && s[n] == '[' {
		return n - 1, true
	}
	return 0, false
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// needsSpace reports whether two tokens would lex differently joined: names, keywords and numbers side by
// side, a number and a dot, and the operators a second character extends (.. == ~= <= >= -- [[ [=); and
// `]]`, which in a chunk body would close the long string holding it.
func needsSpace(a, b token) bool {
	x, y := a.text[len(a.text)-1], b.text[0]
	switch {
	case isWord(x) && isWord(y):
		return true
	case a.kind == tkNumber && y == '.':
		return true
	case x == '.':
		return y == '.' || a.text == "." && isDigit(y)
	case x == '=' || x == '~' || x == '<' || x == '>':
		return y == '='
	case x == '-':
		return y == '-'
	case x == '[':
		return y == '[' || y == '='
	case x == ']':
		return y == ']'
	}
	return false
}

// sameCode reports how two scripts differ in what the VM runs: the instructions, constants, registers,
// locals (their positions, and their names up to ren, the renaming b's minifier applied) and nested
// functions of every prototype, source positions aside. A string constant that differs counts as equal
// when both are chunks that compile to the same code under the same renaming (a minified lazily compiled
// chunk).
func sameCode(a, b string, ren map[string]string) error {
	pa, err := compileChunk(a)
	if err != nil {
		return err
	}
	pb, err := compileChunk(b)
	if err != nil {
		return err
	}
	return sameProto(pa, pb, ren, "main chunk")
}

func sameProto(a, b *glua.FunctionProto, ren map[string]string, where string) error {
	renamed := func(name string) string {
		if r, ok := ren[name]; ok {
			return r
		}
		return name
	}
	if a.NumParameters != b.NumParameters || a.IsVarArg != b.IsVarArg || a.NumUpvalues != b.NumUpvalues ||
		a.NumUsedRegisters != b.NumUsedRegisters {
		return fmt.Errorf("%s: different signature or registers", where)
	}
	if len(a.Code) != len(b.Code) {
		return fmt.Errorf("%s: %d instructions, %d", where, len(a.Code), len(b.Code))
	}
	for i := range a.Code {
		if a.Code[i] != b.Code[i] {
			return fmt.Errorf("%s: instruction %d differs", where, i)
		}
	}
	if len(a.Constants) != len(b.Constants) {
		return fmt.Errorf("%s: %d constants, %d", where, len(a.Constants), len(b.Constants))
	}
	for i := range a.Constants {
		ca, cb := a.Constants[i], b.Constants[i]
		if ca.Type() == cb.Type() && ca.String() == cb.String() {
			continue
		}
		sa, okA := ca.(glua.LString)
		sb, okB := cb.(glua.LString)
		if !okA || !okB {
			return fmt.Errorf("%s: constant %d differs", where, i)
		}
		if err := sameCode(string(sa), string(sb), ren); err != nil {
			return fmt.Errorf("%s: constant %d: %w", where, i, err)
		}
	}
	if len(a.DbgLocals) != len(b.DbgLocals) {
		return fmt.Errorf("%s: %d locals, %d", where, len(a.DbgLocals), len(b.DbgLocals))
	}
	for i := range a.DbgLocals {
		la, lb := a.DbgLocals[i], b.DbgLocals[i]
		if renamed(la.Name) != lb.Name || la.StartPc != lb.StartPc || la.EndPc != lb.EndPc {
			return fmt.Errorf("%s: local %d (%s, %s) differs", where, i, la.Name, lb.Name)
		}
	}
	if len(a.DbgUpvalues) != len(b.DbgUpvalues) {
		return fmt.Errorf("%s: %d upvalues, %d", where, len(a.DbgUpvalues), len(b.DbgUpvalues))
	}
	for i := range a.DbgUpvalues {
		if renamed(a.DbgUpvalues[i]) != b.DbgUpvalues[i] {
			return fmt.Errorf("%s: upvalue %d (%s, %s) differs", where, i, a.DbgUpvalues[i], b.DbgUpvalues[i])
		}
	}
	if len(a.DbgCalls) != len(b.DbgCalls) {
		return fmt.Errorf("%s: %d calls, %d", where, len(a.DbgCalls), len(b.DbgCalls))
	}
	for i := range a.DbgCalls {
		ca, cb := a.DbgCalls[i], b.DbgCalls[i]
		if ca.Pc != cb.Pc || renamed(ca.Name) != cb.Name {
			return fmt.Errorf("%s: call %d (%s, %s) differs", where, i, ca.Name, cb.Name)
		}
	}
	if len(a.FunctionPrototypes) != len(b.FunctionPrototypes) {
		return fmt.Errorf("%s: %d functions, %d", where, len(a.FunctionPrototypes), len(b.FunctionPrototypes))
	}
	for i := range a.FunctionPrototypes {
		if err := sameProto(a.FunctionPrototypes[i], b.FunctionPrototypes[i], ren, fmt.Sprintf("%s/function %d", where, i)); err != nil {
			return err
		}
	}
	return nil
}
