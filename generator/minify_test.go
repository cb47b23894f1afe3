package generator

import (
	"fmt"
	"strings"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"github.com/analysis-health/analysis-health/lua"
)

// run evaluates a chunk in a bare gopher-lua state (base library: loadstring, type, tostring) and prints
// what it returns.
func run(t *testing.T, src string) string {
	t.Helper()
	L := glua.NewState()
	defer L.Close()
	fn, err := L.LoadString(src)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	L.Push(fn)
	if err := L.PCall(0, glua.MultRet, nil); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	var out []string
	for i := 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).String())
	}
	return strings.Join(out, ",")
}

func TestRenameLocals(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		kept            []string // names that must keep their spelling
	}{{
		name: "a local becomes a short name",
		src:  "local longName = 5\nreturn longName * 2",
		want: "local a=5 return a*2\n",
	}, {
		name: "the most used local gets the shortest name",
		src:  "local rare = 1\nlocal often = 2\nreturn often + often + often + rare",
		want: "local b=1 local a=2 return a+a+a+b\n",
	}, {
		name: "a name also used as a field is kept",
		src:  "local name = 1\nlocal t = {}\nt.name = name\nreturn t.name",
		want: "local name=1 local a={}a.name=name return a.name\n",
		kept: []string{"name"},
	}, {
		name: "a name also used as a table key or method is kept",
		src:  "local key, call = 1, 2\nlocal o = {key = key}\nfunction o:call() return self.key end\nreturn o:call() + call",
		kept: []string{"key", "call", "self"},
	}, {
		name: "a name also used as a string is kept",
		src:  "local word = \"word\"\nreturn word",
		want: "local word=\"word\"return word\n",
		kept: []string{"word"},
	}, {
		name: "a name read as a global elsewhere is kept",
		src:  "local function f()\n  local count = 1\n  return count\nend\nreturn f() + (count or 10)",
		want: "local function a()local count=1 return count end return a()+(count or 10)\n",
		kept: []string{"count"},
	}, {
		name: "a name a chunk reads as a global is kept in the enclosing script too",
		src:  "local total = 1\ntotal = total + 1\nreturn loadstring([[return total]])()",
		want: "local total=1 total=total+1 return loadstring([[return total]])()\n",
		kept: []string{"total"},
	}, {
		name: "shadowing across nested functions and chunks: one name, renamed everywhere",
		src: "local value = 1\nlocal function f(value) return value + 1 end\n" +
			"local g = loadstring([[\n  local value = ...\n  return function(value) return value * 3 end\n]])(value)\n" +
			"return f(value), g(value + 1)",
		want: "local a=1 local function b(a)return a+1 end local c=loadstring([[local a=...return function(a)return a*3 end]])(a)return b(a),c(a+1)\n",
	}, {
		name: "a chunk parameter passed from the enclosing chunk is renamed on both sides",
		src:  "local outer, rest = 5, 2\nreturn loadstring([==[\n  local outer, rest = ...\n  return loadstring([[local rest = ...\nreturn rest]])(outer - rest)\n]==])(outer, rest)",
		want: "local b,a=5,2 return loadstring([==[local b,a=...return loadstring([[local a=...return a]])(b-a)]==])(b,a)\n",
	}, {
		name: "a table constructor's trailing separator goes",
		src:  "local list = {1, 2, {3; 4;},}\nreturn #list, list[3][2]",
		want: "local a={1,2,{3;4}}return#a,a[3][2]\n",
	}, {
		name: "arg, self and _ keep their names",
		src:  "local function f(...) return arg end\nlocal o = {}\nfunction o.m(self) return self end\nlocal n = 0\nfor _, v in ipairs({1, 2}) do n = n + v end\nreturn n, o.m(3), f(1) ~= nil",
		kept: []string{"arg", "self", "_"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out, ren, err := minify(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && out != tc.want {
				t.Errorf("minified to\n%q, want\n%q", out, tc.want)
			}
			if err := sameCode(tc.src, out, ren); err != nil {
				t.Errorf("%q: the proof fails: %v", out, err)
			}
			if got, want := run(t, out), run(t, tc.src); got != want {
				t.Errorf("%q returns %s, the source %s", out, got, want)
			}
			outToks, err := lex(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.kept {
				if r, ok := ren[k]; ok {
					t.Errorf("%s renamed to %s", k, r)
				}
				if !hasName(outToks, k) {
					t.Errorf("%s is gone from %q", k, out)
				}
			}
		})
	}
}

func hasName(toks []token, name string) bool {
	for _, t := range toks {
		if t.kind == tkName && t.text == name || t.kind == tkChunk && hasName(t.body, name) {
			return true
		}
	}
	return false
}

// The options block stays byte for byte, and no name it declares is renamed, in the main chunk or in the
// chunks the options are passed into.
func TestRenameKeepsOptionsBlock(t *testing.T) {
	block := "-- analysis-health:options\nlocal inconclusiveStatus = \"Suspended\" -- or Degraded\nlocal verbose = false\n-- analysis-health:end-options"
	src := "-- header\n" + block + "\nlocal status = inconclusiveStatus\nlocal detail = verbose and 1 or 2\n" +
		"return loadstring([[\n  local inconclusiveStatus, verbose, detail = ...\n  return inconclusiveStatus, verbose, detail\n]])(status, verbose, detail)"
	out, ren, err := minify(src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n"+block+"\n") && !strings.HasPrefix(out, block+"\n") {
		t.Errorf("options block not kept as written:\n%s", out)
	}
	for _, name := range []string{"inconclusiveStatus", "verbose"} {
		if r, ok := ren[name]; ok {
			t.Errorf("option %s renamed to %s", name, r)
		}
	}
	if _, ok := ren["detail"]; !ok {
		t.Errorf("detail not renamed: %v", ren)
	}
	if !strings.Contains(out, "local inconclusiveStatus,verbose,") {
		t.Errorf("the chunk's option locals were renamed:\n%s", out)
	}
	if err := sameCode(src, out, ren); err != nil {
		t.Error(err)
	}
	set, err := lua.SetOptions(out, map[string]any{"inconclusiveStatus": "Degraded", "verbose": true})
	if err != nil {
		t.Fatal(err)
	}
	setSrc, _ := lua.SetOptions(src, map[string]any{"inconclusiveStatus": "Degraded", "verbose": true})
	if got, want := run(t, set), run(t, setSrc); got != want || want != "Degraded,true,1" {
		t.Errorf("with options set, the minified script returns %s, the source %s (want Degraded,true,1)", got, want)
	}
}

// The proof rejects what a wrong renaming would break.
func TestSameCodeRejectsWrongRename(t *testing.T) {
	for name, tc := range map[string]struct {
		src, out string
		ren      map[string]string
	}{
		"uses swapped":              {"local alpha, beta = 1, 2\nreturn alpha - beta", "local a,b=1,2 return b-a", map[string]string{"alpha": "a", "beta": "b"}},
		"name not the map's":        {"local alpha, beta = 1, 2\nreturn alpha - beta", "local c,b=1,2 return c-b", map[string]string{"alpha": "a", "beta": "b"}},
		"renamed into a global":     {"local x = 1\nreturn x + y", "local y=1 return y+y", map[string]string{"x": "y"}},
		"renamed into a local":      {"local x, y = 1, 2\nreturn x", "local y,y=1,2 return y", map[string]string{"x": "y"}},
		"a field renamed":           {"local t = {}\nreturn t.long", "local a={}return a.b", map[string]string{"t": "a", "long": "b"}},
		"a captured local misnamed": {"local x = 1\nreturn function() return x end", "local a=1 return function()return a end", map[string]string{"x": "b"}},
		"a chunk's local misnamed":  {"return loadstring([[local v = 1\nreturn v]])()", "return loadstring([[local w=1 return w]])()", map[string]string{"v": "a"}},
		"a chunk's use swapped": {"return loadstring([[local p, q = ...\nreturn p - q]])(1, 2)",
			"return loadstring([[local a,b=...return b-a]])(1,2)", map[string]string{"p": "a", "q": "b"}},
	} {
		if err := sameCode(tc.src, tc.out, tc.ren); err == nil {
			t.Errorf("%s: %q accepted as %q renamed by %v", name, tc.out, tc.src, tc.ren)
		}
	}
	// And accepts the right one.
	if err := sameCode("local alpha, beta = 1, 2\nreturn alpha - beta", "local a,b=1,2 return a-b", map[string]string{"alpha": "a", "beta": "b"}); err != nil {
		t.Error(err)
	}
}

// More locals than one-letter names: the two-letter ones skip keywords (do, if, in, or) and names in use.
func TestRenameManyLocals(t *testing.T) {
	var b strings.Builder
	b.WriteString("local sum = 0\nlocal o = {}\nfunction o.ba() return 0 end\n")
	for i := range 300 {
		if i%100 == 0 {
			// Lua allows 200 locals per function.
			b.WriteString("do\n")
		}
		fmt.Fprintf(&b, "local variable%d = %d\nsum = sum + variable%d + (ab or 0) + o.ba()\n", i, i, i)
		if i%100 == 99 {
			b.WriteString("end\n")
		}
	}
	b.WriteString("return sum")
	src := b.String()
	out, ren, err := minify(src)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for from, to := range ren {
		if keywords[to] || to == "ab" || to == "ba" || to == "arg" || to == "self" {
			t.Errorf("%s renamed to %s, which is taken", from, to)
		}
		if prev, dup := seen[to]; dup {
			t.Errorf("%s and %s both renamed to %s", prev, from, to)
		}
		seen[to] = from
	}
	if len(ren) != 302 {
		t.Errorf("%d names renamed, want 302 (sum, o, variable0..299)", len(ren))
	}
	if err := sameCode(src, out, ren); err != nil {
		t.Error(err)
	}
	if got, want := run(t, out), run(t, src); got != want {
		t.Errorf("returns %s, the source %s", got, want)
	}
}

func TestShortName(t *testing.T) {
	seen := map[string]bool{}
	for n := range 20000 {
		s := shortName(n)
		want := 1
		switch {
		case n >= 52*64:
			want = 3
		case n >= 52:
			want = 2
		}
		if len(s) != want || !identifier.MatchString(s) || identifier.FindString(s) != s || s[0] == '_' || seen[s] {
			t.Fatalf("shortName(%d) = %q", n, s)
		}
		seen[s] = true
	}
}
