package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fileFixtures is a folder as a CI runner's checkout holds it: a .env with a password, a Lua module, a
// FIFO (nothing ever writes to it) and a file that is not Lua.
func fileFixtures(t *testing.T) (dir, env, fifo string) {
	t.Helper()
	dir = t.TempDir()
	env = filepath.Join(dir, ".env")
	for name, body := range map[string]string{
		".env":       "DB_PASSWORD=\"hunter2-from-env\"\n", // a .env is often valid Lua
		"helper.lua": `return {status = "Degraded", message = "DB_PASSWORD=hunter2-from-module"}`,
		"notes.txt":  "not lua: DB_PASSWORD hunter2-from-notes {\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifo = filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, env, fifo
}

// Issue 57 #5: a script the CLI evaluates (an argocd-cm under review, a pull request's tree) reads no file
// of this machine: dofile, loadfile and require of a file are refused, naming the function and the flag
// that opens them, and the refusal holds no byte of the file (a syntax or runtime error would quote it).
// A FIFO no longer holds the evaluation past its timeout: nothing is opened. Strings still load.
func TestScriptsReadNoFiles(t *testing.T) {
	dir, env, fifo := fileFixtures(t)
	notes := filepath.Join(dir, "notes.txt")
	// pcall'd, the error becomes the message: it must not carry the file either
	caught := func(call string) string {
		return fmt.Sprintf(`local ok, err = pcall(function() return %s end)
return {status = "Healthy", message = tostring(err)}`, call)
	}
	for _, tc := range []struct {
		name, script, fn string
	}{
		{"dofile .env", fmt.Sprintf("dofile(%q)", env), "dofile"},
		{"dofile .env, then its variable", fmt.Sprintf("dofile(%q)\nreturn {status = \"Healthy\", message = DB_PASSWORD}", env), "dofile"},
		{"dofile .env, caught", caught(fmt.Sprintf("dofile(%q)", env)), "dofile"},
		{"dofile not Lua", fmt.Sprintf("dofile(%q)", notes), "dofile"},
		{"loadfile .env", fmt.Sprintf("local f = loadfile(%q) return f()", env), "loadfile"},
		{"loadfile not Lua, caught", caught(fmt.Sprintf("loadfile(%q)", notes)), "loadfile"},
		{"loadfile FIFO", fmt.Sprintf("loadfile(%q)", fifo), "loadfile"},
		{"dofile FIFO", fmt.Sprintf("dofile(%q)", fifo), "dofile"},
		{"require a local module", fmt.Sprintf("package.path = %q\nreturn require(\"helper\")", dir+"/?.lua"), "require"},
		{"require through the loader", fmt.Sprintf("package.path = %q\nlocal f = package.loaders[2](\"helper\")\nif type(f) == \"function\" then return f() end\nreturn {status = \"Healthy\", message = f}", dir+"/?.lua"), "require"},
		{"require, caught", fmt.Sprintf("package.path = %q\n", dir+"/?.lua") + caught(`require("helper")`), "require"},
	} {
		for _, reuse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reuse=%v", tc.name, reuse), func(t *testing.T) {
				type result struct {
					h   Health
					err error
				}
				done := make(chan result, 1)
				go func() {
					h, err := Engine{ReuseStates: reuse}.Health(rollout(), tc.script)
					done <- result{h, err}
				}()
				var r result
				select {
				case r = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("the evaluation still runs 5 s later: the FIFO was opened")
				}
				out := r.h.Status + " " + r.h.Message
				if r.err != nil {
					out += " " + r.err.Error()
				}
				if strings.Contains(out, "hunter2") || strings.Contains(out, "DB_PASSWORD") {
					t.Errorf("a file's content is in the result: %s", out)
				}
				if !strings.Contains(out, tc.fn) || !strings.Contains(out, "--open-libs") {
					t.Errorf("got %s; want a refusal naming %s and --open-libs", out, tc.fn)
				}
			})
		}
	}
}

// What still works without file access: strings and functions load (Argo CD's base library has load and
// loadstring), and require gets the preloaded safe os.
func TestScriptsStillLoadStrings(t *testing.T) {
	for _, script := range []string{
		`return {status = "Healthy", message = loadstring("return 'ok'")()}`,
		`local done = false
return {status = "Healthy", message = load(function() if done then return nil end done = true return "return 'ok'" end)()}`,
		`local os = require("os") return {status = "Healthy", message = type(os.time()) == "number" and "ok" or "no"}`,
	} {
		h, err := Engine{}.Health(rollout(), script)
		if err != nil || h.Status != Healthy || h.Message != "ok" {
			t.Errorf("%s: %+v %v", script, h, err)
		}
	}
}

// With FileAccess, or OpenLibs, a script reads files as in Argo CD's controller: the flag is the user's
// decision to trust the scripts.
func TestFileAccessOptIn(t *testing.T) {
	dir, _, _ := fileFixtures(t)
	for _, e := range []Engine{{FileAccess: true}, {FileAccess: true, ReuseStates: true}, {OpenLibs: true}} {
		for _, script := range []string{
			fmt.Sprintf("return dofile(%q)", filepath.Join(dir, "helper.lua")),
			fmt.Sprintf("return loadfile(%q)()", filepath.Join(dir, "helper.lua")),
			fmt.Sprintf("package.path = %q\nreturn require(\"helper\")", dir+"/?.lua"),
		} {
			h, err := e.Health(rollout(), script)
			if err != nil || h.Status != Degraded || h.Message != "DB_PASSWORD=hunter2-from-module" {
				t.Errorf("%+v: %s: %+v %v; want the module's table, as Argo CD's controller gives it", e, script, h, err)
			}
		}
	}
}
