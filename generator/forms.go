package generator

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Form is the layout of a health script for one generation of Argo CD's Lua VM. Every form is computed
// from the one source in package lua, and returns the same result on every object (generator tests run
// every form over every fixture and the fuzz corpus).
type Form string

const (
	// FormLazy is the source's own layout, minified: the common paths are plain code and the rare ones sit
	// in long strings that `loadstring` compiles only when an object reaches them. It is the cheap form
	// where the VM parses the script on every evaluation (Argo CD v2.x and v3.0–v3.5: util/lua runLua →
	// DoString), because the lexer reads a long string for a fraction of what parsing its code costs, and
	// reads every byte of comment and whitespace, and of every name, so those go and locals get short names
	// (minify; the options block stays as written).
	FormLazy Form = "lazy"
	// FormFlat is one chunk: every `loadstring([[…]])` of the source becomes a function expression of the
	// same body. It is the cheap form where compiled scripts are cached (Argo CD v3.6+:
	// compiledScriptCache), which compiles the main chunk once but not what `loadstring` compiles at run
	// time.
	FormFlat Form = "flat"
)

// FormSource is the script exactly as package lua holds it (options applied): what the generator emits
// when no Argo CD version is given, and what the lua format always holds.
const FormSource Form = "source"

// Forms lists the forms computed for a VM.
func Forms() []Form { return []Form{FormLazy, FormFlat} }

var argocdVersion = regexp.MustCompile(`^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$`)

// FormFor is the cheapest form for an Argo CD version ("v2.14", "3.6.1", "v3"); empty gives FormSource.
// A bare major version means its first supported release line here: v2 is v2.14, v3 is v3.2.
func FormFor(version string) (Form, error) {
	if version == "" {
		return FormSource, nil
	}
	m := argocdVersion.FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return "", fmt.Errorf("Argo CD version %q is not of the form v<major>.<minor>[.<patch>]", version)
	}
	major, _ := strconv.Atoi(m[1])
	minor := -1
	if m[2] != "" {
		minor, _ = strconv.Atoi(m[2])
	}
	switch {
	case major < 2:
		return "", fmt.Errorf("Argo CD version %q: these scripts need Argo CD v2 or later", version)
	case major == 2, major == 3 && minor < 6:
		return FormLazy, nil
	}
	return FormFlat, nil
}

// lazyChunk matches the opening of a lazily compiled chunk, `loadstring([[` or `loadstring([==[`.
var lazyChunk = regexp.MustCompile(`loadstring\(\[(=*)\[`)

// chunkParams matches a chunk's first statement when it takes its arguments as named locals.
var chunkParams = regexp.MustCompile(`^\s*local\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*=\s*\.\.\.[ \t]*\n`)

// Render lays out src in form f.
func Render(src string, f Form) (string, error) {
	switch f {
	case FormSource:
		return src, nil
	case FormLazy:
		out, ren, err := minify(src)
		if err != nil {
			return "", err
		}
		// The minifier only removes what the lexer skips and renames locals; prove it on the compiled code.
		if err := sameCode(src, out, ren); err != nil {
			return "", fmt.Errorf("minified form differs from the source: %w", err)
		}
		return out, nil
	case FormFlat:
		return flatten(src)
	}
	return "", fmt.Errorf("unknown script form %q", f)
}

// flatten turns each `loadstring([[BODY]])` into `(function(...) BODY end)`, or, when BODY starts with
// `local a, b = ...`, into `(function(a, b) REST end)`, which spares the vararg function's `arg` table.
// The two are the same function only if BODY means the same inside the enclosing chunk as on its own: a
// name BODY reads as a global must not be a local of the enclosing script (nor `arg`, the implicit local
// of Lua 5.1 vararg functions), or it would capture it. flatten checks that, and that the result compiles.
func flatten(src string) (string, error) {
	outerLocals, err := localNames(src)
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	var b strings.Builder
	rest := src
	for {
		loc := lazyChunk.FindStringSubmatchIndex(rest)
		if loc == nil {
			b.WriteString(rest)
			break
		}
		closing := "]" + rest[loc[2]:loc[3]] + "])"
		end := strings.Index(rest[loc[1]:], closing)
		if end < 0 {
			return "", fmt.Errorf("loadstring chunk at offset %d is not closed by %q", len(src)-len(rest)+loc[0], closing)
		}
		body := rest[loc[1] : loc[1]+end]
		if lazyChunk.MatchString(body) {
			// A chunk that compiles chunks of its own: inline those first, checked against its locals.
			if body, err = flatten(body); err != nil {
				return "", fmt.Errorf("loadstring chunk at offset %d: %w", len(src)-len(rest)+loc[0], err)
			}
		}
		globals, err := globalNames(body)
		if err != nil {
			return "", fmt.Errorf("loadstring chunk at offset %d: %w", len(src)-len(rest)+loc[0], err)
		}
		for _, g := range globals {
			if outerLocals[g] || g == "arg" {
				return "", fmt.Errorf("loadstring chunk at offset %d reads the global %q, which inlined would be a local of the enclosing script", len(src)-len(rest)+loc[0], g)
			}
		}
		b.WriteString(rest[:loc[0]])
		if m := chunkParams.FindStringSubmatch(body); m != nil {
			b.WriteString("(function(" + m[1] + ")\n" + body[len(m[0]):] + "end)")
		} else {
			b.WriteString("(function(...)\n" + body + "\nend)")
		}
		rest = rest[loc[1]+end+len(closing):]
	}
	out := b.String()
	if _, err := compileChunk(out); err != nil {
		return "", fmt.Errorf("flat form does not compile: %w", err)
	}
	return out, nil
}

func compileChunk(src string) (*glua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(src), "<string>")
	if err != nil {
		return nil, err
	}
	return glua.Compile(chunk, "<string>")
}

// localNames is every local a chunk declares, in any function, parameters included.
func localNames(src string) (map[string]bool, error) {
	proto, err := compileChunk(src)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	var walk func(p *glua.FunctionProto)
	walk = func(p *glua.FunctionProto) {
		for _, l := range p.DbgLocals {
			names[l.Name] = true
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	return names, nil
}

// globalNames is every global a chunk reads or writes, sorted.
func globalNames(src string) ([]string, error) {
	proto, err := compileChunk(src)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var walk func(p *glua.FunctionProto)
	walk = func(p *glua.FunctionProto) {
		for _, inst := range p.Code {
			switch int(inst >> 26) {
			case glua.OP_GETGLOBAL, glua.OP_SETGLOBAL:
				if k, ok := p.Constants[int(inst&0x3ffff)].(glua.LString); ok {
					seen[string(k)] = true
				}
			}
		}
		for _, c := range p.FunctionPrototypes {
			walk(c)
		}
	}
	walk(proto)
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Strings(out)
	return out, nil
}
