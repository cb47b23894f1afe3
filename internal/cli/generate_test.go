package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
)

// run executes the CLI in-process and returns exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Run(args, &cli.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func rendered(t *testing.T, f generator.Format, o generator.Options) []generator.File {
	t.Helper()
	o.Version = cli.Version
	if o.ArgoCDVersion == "" {
		// What the CLI passes without --argocd-version.
		o.ArgoCDVersion = engine.Default.String()
	}
	files, err := generator.Generate(f, o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func tree(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

// Flags reach the generator: stdout is exactly the library's output for the same options.
func TestGenerateStdout(t *testing.T) {
	tests := []struct {
		args   []string
		format generator.Format
		opts   generator.Options
	}{
		{[]string{"--format", "argocd-cm"}, generator.ConfigMap, generator.Options{}},
		{[]string{"--format", "patch", "--inconclusive", "degraded"}, generator.Patch, generator.Options{Inconclusive: generator.InconclusiveDegraded}},
		{[]string{"--format", "HELM", "--inconclusive", "Suspended"}, generator.Helm, generator.Options{}},
		{
			[]string{"--format", "argocd-cm", "--kinds", "rollout,argoproj.io/AnalysisRun", "--namespace", "gitops"},
			generator.ConfigMap,
			generator.Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "AnalysisRun"}, {Group: "argoproj.io", Kind: "Rollout"}}, Namespace: "gitops"},
		},
		{[]string{"--format", "patch", "--actions=false"}, generator.Patch, generator.Options{Actions: new(false)}},
		{[]string{"--format", "helm", "--block-bypass-on-failed-analysis=false"}, generator.Helm, generator.Options{BlockBypassOnFailedAnalysis: new(false)}},
		{[]string{"--format", "argocd-cm", "--actions=true", "--block-bypass-on-failed-analysis=true"}, generator.ConfigMap, generator.Options{}},
		// Without Rollout the guard cannot apply, but leaving it on (the default) is no contradiction.
		{[]string{"--format", "patch", "--kinds", "AnalysisRun"}, generator.Patch, generator.Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "AnalysisRun"}}}},
		{[]string{"--format", "argocd-cm", "--argocd-version", "v2"}, generator.ConfigMap, generator.Options{ArgoCDVersion: "v2.14"}},
		{[]string{"--format", "helm", "--argocd-version", "3.2"}, generator.Helm, generator.Options{ArgoCDVersion: "v3.2"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := run(append([]string{"generate"}, tc.args...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			want := rendered(t, tc.format, tc.opts)[0].Data
			if out != string(want) {
				t.Errorf("stdout differs from generator.Generate(%s, %+v)", tc.format, tc.opts)
			}
		})
	}
}

// Bad flags are usage errors (exit 2) that list the valid values, and print nothing on stdout.
func TestGenerateUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no format", []string{}, "--format is required: one of argocd-cm, patch, helm, kustomize, lua"},
		{"unknown format", []string{"--format", "json"}, `"json" is not one of argocd-cm, patch, helm, kustomize, lua`},
		{"unknown inconclusive", []string{"--format", "patch", "--inconclusive", "unknown"}, `"unknown" is not one of suspended, degraded`},
		{"unknown kind", []string{"--format", "patch", "--kinds", "Rollout,Deployment"}, `unknown kind "Deployment" (valid: AnalysisRun, Experiment, Rollout)`},
		{"bad namespace", []string{"--format", "argocd-cm", "--namespace", "Argo CD"}, `namespace "Argo CD" is not a valid`},
		{"empty namespace", []string{"--format", "argocd-cm", "--namespace", ""}, "--namespace must not be empty"},
		{"kustomize needs --out", []string{"--format", "kustomize"}, "--format kustomize writes a folder: give it with --out DIR"},
		{"lua needs --out", []string{"--format", "lua"}, "--format lua writes a folder"},
		{"argument", []string{"--format", "patch", "extra"}, `unknown command "extra"`},
		{"actions not a bool", []string{"--format", "patch", "--actions=maybe"}, `invalid argument "maybe" for "--actions" flag`},
		{"guard off without actions", []string{"--format", "patch", "--actions=false", "--block-bypass-on-failed-analysis=false"}, "--block-bypass-on-failed-analysis=false has no effect with --actions=false"},
		{"guard off without Rollout", []string{"--format", "patch", "--kinds", "AnalysisRun", "--block-bypass-on-failed-analysis=false"}, "no selected kind's discovery has the option (it applies to Rollout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(append([]string{"generate"}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.wantErr)
			}
		})
	}
}

func TestGenerateOutFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "values.yaml")
	code, out, errOut := run("generate", "--format", "helm", "--out", file)
	if code != 0 || out != "" || errOut != "wrote "+file+" (helm)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(got, rendered(t, generator.Helm, generator.Options{Out: file})[0].Data) {
		t.Errorf("file content differs from the generator's (%v)", err)
	}
	if names := tree(t, dir); strings.Join(names, ",") != ".,values.yaml" {
		t.Errorf("folder holds %v: temporary files left behind", names)
	}
}

func TestGenerateOutFolder(t *testing.T) {
	for _, f := range []generator.Format{generator.Kustomize, generator.Lua} {
		t.Run(string(f), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			code, out, errOut := run("generate", "--format", string(f), "--out", dir)
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			for _, want := range rendered(t, f, generator.Options{Out: dir}) {
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(want.Path)))
				if err != nil || !bytes.Equal(got, want.Data) {
					t.Errorf("%s: %v, or content differs", want.Path, err)
				}
			}
		})
	}
}

// The lua folder is what `verify DIR` runs on, with every option that derives expectations; the action
// suites are there unless --actions=false.
func TestGenerateLuaThenVerify(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantActions bool
	}{
		{"default", nil, true},
		{"degraded", []string{"--inconclusive", "degraded"}, true},
		{"guard off", []string{"--block-bypass-on-failed-analysis=false"}, true},
		{"no actions", []string{"--actions=false"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "resource_customizations")
			args := append([]string{"generate", "--format", "lua", "--out", dir}, tc.args...)
			if code, _, errOut := run(args...); code != 0 {
				t.Fatalf("generate: exit %d: %s", code, errOut)
			}
			code, out, errOut := run("verify", dir)
			if code != 0 || !strings.HasSuffix(out, " passed, 0 failed\n") || strings.HasPrefix(out, "0 passed") {
				t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
			}
			_, err := os.Stat(filepath.Join(dir, "argoproj.io", "Rollout", "actions", "action_test.yaml"))
			if (err == nil) != tc.wantActions {
				t.Errorf("Rollout action suite present: %v, want %v", err == nil, tc.wantActions)
			}
		})
	}
}

// --out into a folder that is missing, a file, or holds someone else's files: a clear error (exit 1, the
// run failed; the flags were fine) and nothing written.
func TestGenerateOutErrors(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "full"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "full", "mine.yaml"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		format  string
		out     string
		wantErr string
	}{
		{"missing folder", "patch", filepath.Join(base, "missing", "patch.yaml"), "folder " + filepath.Join(base, "missing") + " does not exist"},
		{"folder is a file", "patch", filepath.Join(base, "file", "patch.yaml"), "is not a folder"},
		{"file onto a folder", "patch", filepath.Join(base, "full"), "is a directory"},
		{"tree into missing folder", "kustomize", filepath.Join(base, "missing", "k"), "does not exist"},
		{"tree onto a folder with files", "lua", filepath.Join(base, "full"), "exists and is not empty"},
		{"tree onto a file", "kustomize", filepath.Join(base, "file"), "is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tree(t, base)
			code, out, errOut := run("generate", "--format", tc.format, "--out", tc.out)
			if code != 1 || out != "" || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and an error containing %q", code, out, errOut, tc.wantErr)
			}
			if after := tree(t, base); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("files changed from %v to %v", before, after)
			}
		})
	}
}
