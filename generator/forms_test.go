package generator

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

func TestFormFor(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    Form
	}{
		{"", FormSource}, {"v2", FormLazy}, {"v2.14", FormLazy}, {"v2.14.21", FormLazy}, {"2.14", FormLazy},
		{"v3", FormLazy}, {"v3.2", FormLazy}, {"v3.5.7", FormLazy},
		{"v3.6", FormFlat}, {"v3.6.1", FormFlat}, {"3.7", FormFlat}, {"v4.0", FormFlat},
	} {
		got, err := FormFor(tc.version)
		if err != nil || got != tc.want {
			t.Errorf("FormFor(%q) = %q, %v; want %q", tc.version, got, err, tc.want)
		}
	}
	for _, bad := range []string{"v1.8", "latest", "v3.x", "3.6.1.2"} {
		if f, err := FormFor(bad); err == nil {
			t.Errorf("FormFor(%q) = %q, want an error", bad, f)
		}
	}
	if _, err := Script(lua.Kinds()[0], Options{ArgoCDVersion: "latest"}); err == nil || !strings.Contains(err.Error(), "latest") {
		t.Errorf("Script with a bad version: %v", err)
	}
}

// Every form of every script, with every option value, returns what the source returns on every fixture
// of every kind (the fuzz target, lua.FuzzScripts, does the same on mutated objects).
func TestFormsEqualSourceOnFixtures(t *testing.T) {
	fixtures, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Inconclusive: InconclusiveSuspended}, {Inconclusive: InconclusiveDegraded}, {HumanGate: HumanGateHealthy}} {
		inconclusive := o.Inconclusive + o.HumanGate
		for _, k := range lua.Kinds() {
			r, err := o.resolve()
			if err != nil {
				t.Fatal(err)
			}
			src, err := sourceScript(k, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, version := range []string{"v2.14", "v3.6"} {
				o.ArgoCDVersion = version
				form, err := Script(k, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, fx := range fixtures {
					obj, err := fx.Object()
					if err != nil {
						t.Fatal(err)
					}
					want, werr := engine.Engine{Profile: engine.V214}.Health(obj, src)
					got, gerr := engine.Engine{Profile: engine.V214}.Health(obj, form)
					if got != want || (werr == nil) != (gerr == nil) {
						t.Errorf("%s script, %s form (%s), %s: got %+v, %v; the source gives %+v, %v", k.Kind, version, inconclusive, fx.Path, got, gerr, want, werr)
					}
				}
			}
		}
	}
}

// The flat form holds no loadstring (all of it is compiled, and cached, once); the lazy form keeps them.
func TestFormsShape(t *testing.T) {
	for _, k := range lua.Kinds() {
		src, _ := lua.Health(k.Group, k.Kind)
		flat, err := Script(k, Options{ArgoCDVersion: "v3.6.1"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(flat, "loadstring") {
			t.Errorf("%s: flat form still compiles chunks at run time", k.Kind)
		}
		lazy, err := Script(k, Options{ArgoCDVersion: "v2.14"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(lazy, "loadstring(") != strings.Count(src, "loadstring(") {
			t.Errorf("%s: lazy form has %d loadstring chunks, the source %d", k.Kind, strings.Count(lazy, "loadstring("), strings.Count(src, "loadstring("))
		}
		if len(lazy) >= len(src) || strings.Contains(lazy, "\n  ") {
			t.Errorf("%s: lazy form not minified (%d bytes, source %d)", k.Kind, len(lazy), len(src))
		}
		if !lua.HasOptions(lazy) || !lua.HasOptions(flat) {
			t.Errorf("%s: a form lost the options block", k.Kind)
		}
	}
}

func TestMinify(t *testing.T) {
	for _, src := range []string{
		"local a = 1 - -1 -- comment\nreturn a",
		"local s = \"--not a comment\" .. 'x\\'y' .. [[\n-- kept ]] .. [==[ ]] ]==]\nreturn s",
		"local t = { 1 .. 2, 3 }\nlocal u = t [ 1 ] == t[2]\nreturn u ~= nil, #t, ... ",
		"--[[ block\ncomment ]] local x = 0x1F + 1e-3 + 1.5\n--[==[ another ]==]\nreturn x",
		"local f = loadstring([[\n  local a, b = ...\n  -- inner comment\n  return a  ..  b\n]])\nreturn f('x', 'y')",
		"local a = {}\na [ [[k]] ] = 1\nreturn a[ [[k]] ]",
		"local t, i = {{5}}, 1\nreturn loadstring([[\n  local t, i = ...\n  return t[t[1][1] - 4][i ]\n]])(t, i)",
		"local n = 2\nlocal s = {v = 'x'}\nreturn 1 .. n, n .. 1, s.v..n, .5 + 1e+1 + 2E-1 + n - -n, 3 .. ''",
	} {
		out, ren, err := minify(src)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if err := sameCode(src, out, ren); err != nil {
			t.Errorf("%q minified to %q: %v", src, out, err)
		}
		if got, want := run(t, out), run(t, src); got != want {
			t.Errorf("%q minified to %q returns %s, the source %s", src, out, got, want)
		}
		if len(out) > len(src) {
			t.Errorf("%q grew to %q", src, out)
		}
	}
	if err := sameCode("return 1 + 2", "return 1 - 2", nil); err == nil {
		t.Error("sameCode missed a changed operator")
	}
	if err := sameCode(`return loadstring([[return 1]])`, `return loadstring([[return 2]])`, nil); err == nil {
		t.Error("sameCode missed a changed chunk")
	}
}

func TestFlattenRefusesWhatWouldChangeMeaning(t *testing.T) {
	for name, src := range map[string]string{
		"captures an outer local": "local str = 1\nreturn loadstring([[\nreturn str\n]])()",
		"reads arg":               "return loadstring([[\nreturn arg\n]])()",
		"nested capture":          "return loadstring([=[\nlocal x = 1\nreturn loadstring([[return x]])()\n]=])()",
		"unclosed":                "return loadstring([[\nreturn 1\n",
	} {
		if out, err := flatten(src); err == nil {
			t.Errorf("%s: flattened to %q, want an error", name, out)
		}
	}
	if out, err := flatten("return loadstring([=[\nreturn loadstring([[\nreturn 1\n]])()\n]=])()"); err != nil || strings.Contains(out, "loadstring") {
		t.Errorf("nested chunks: %q, %v", out, err)
	}
	out, err := flatten("local x = 2\nreturn loadstring([[\nlocal a, b = ...\nreturn a * b\n]])(x, 3)")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "(function(a, b)\n") {
		t.Errorf("named chunk arguments did not become parameters:\n%s", out)
	}
}

// One golden file per form: testdata/forms/<form>/argocd-cm.yaml, the argocd-cm holding every script in
// that form, default options. Each of its health keys is the script Script renders for that Argo CD version
// (checked here, so the scripts are not stored a second time).
func TestFormsGolden(t *testing.T) {
	for _, f := range Forms() {
		version := map[Form]string{FormLazy: "v2.14", FormFlat: "v3.6"}[f]
		files, err := Generate(ConfigMap, Options{ArgoCDVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(files[0].Data), "--argocd-version "+version) {
			t.Errorf("%s argocd-cm: the header's command does not name the Argo CD version", version)
		}
		var cm struct{ Data map[string]string }
		if err := sigsyaml.Unmarshal(files[0].Data, &cm); err != nil {
			t.Fatal(err)
		}
		for _, k := range lua.Kinds() {
			s, err := Script(k, Options{ArgoCDVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := cm.Data[HealthKey(k)]; !ok || got != s {
				t.Errorf("%s argocd-cm: %s is not the %s form of the script (present: %v)", version, HealthKey(k), f, ok)
			}
			if f == FormFlat && !strings.HasPrefix(s, "-- analysis-health "+k.Key()+" health, one chunk for Argo CD "+version) ||
				f == FormLazy && !strings.HasPrefix(s, "-- analysis-health lua/"+k.Key()+"/health.lua minified for Argo CD "+version+"\n") {
				t.Errorf("%s form of %s: no header line naming the source and the version:\n%.200s", f, k.Key(), s)
			}
		}
		assertGoldenFile(t, filepath.Join("testdata", "forms", string(f), "argocd-cm.yaml"), files[0].Data)
	}
}

// What the VM pays per evaluation for the lazy form (Argo CD v2.x–v3.5 parse and compile the whole script
// on every call): lexing and parsing the main chunk, long strings included, and compiling it. "chunks" is
// what an object reaching every lazily compiled chunk pays on top (each compiled by loadstring).
func BenchmarkLazyParse(b *testing.B) {
	for _, k := range lua.Kinds() {
		lazy, err := Script(k, Options{ArgoCDVersion: "v2.14"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(k.Kind+"/main", func(b *testing.B) {
			b.SetBytes(int64(len(lazy)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				if _, err := compileChunk(lazy); err != nil {
					b.Fatal(err)
				}
			}
		})
		bodies := chunkBodies(b, lazy)
		b.Run(k.Kind+"/chunks", func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for b.Loop() {
				for _, body := range bodies {
					if _, err := compileChunk(body); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// cpuPerOp reports the process's CPU time per op as cpu-ns/op (as conformance's cost benchmarks do): on
// a machine shared with other work, wall time mostly measures the waiting. Call it as `defer cpuPerOp(b)()`
// right before the loop.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}

// chunkBodies is every lazily compiled chunk of src, nested ones included, as loadstring receives it.
func chunkBodies(tb testing.TB, src string) []string {
	tb.Helper()
	var out []string
	for rest := src; ; {
		loc := lazyChunk.FindStringSubmatchIndex(rest)
		if loc == nil {
			return out
		}
		closing := "]" + rest[loc[2]:loc[3]] + "]"
		end := strings.Index(rest[loc[1]:], closing)
		if end < 0 {
			tb.Fatalf("unclosed chunk in %q", rest[loc[0]:])
		}
		body := strings.TrimPrefix(rest[loc[1]:loc[1]+end], "\n")
		out = append(out, body)
		out = append(out, chunkBodies(tb, body)...)
		rest = rest[loc[1]+end+len(closing):]
	}
}
