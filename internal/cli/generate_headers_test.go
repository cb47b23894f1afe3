package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every generated file's header names the file it was written to, in the command that uses it, and a
// regenerate command that writes the same bytes again: formats × --out (none, a plain name, a path the
// shell must quote) × --remove. A suggested name instead (argocd-cm-patch.yaml, values.yaml) pasted from
// a --remove patch's header would re-install, and from a Helm values file would layer another file.
func TestGenerateHeadersNameTheOutFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("my dir", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format string
		remove bool
		// use is the usage hint line, with %s where the file goes ("" for formats whose header names no file).
		use string
	}{
		{"patch", false, "#   kubectl patch configmap argocd-cm -n argocd --type merge --patch-file %s\n"},
		{"patch", true, "#   kubectl patch configmap argocd-cm -n argocd --type merge --patch-file %s\n"},
		{"helm", false, "#   helm upgrade RELEASE argo/argo-cd -n argocd -f your-values.yaml -f %s\n"},
		{"operator", false, "#   kubectl patch argocd argocd -n argocd --type merge --patch-file %s\n"},
		{"operator-json6902", false, "#   kubectl patch argocd argocd -n argocd --type json --patch-file %s\n"},
		{"argocd-cm", false, ""},
	} {
		for _, out := range []struct{ flag, named string }{
			{"", "FILE"},
			{"remove.yaml", "remove.yaml"},
			{"my dir/analysis-health.yaml", "'my dir/analysis-health.yaml'"},
		} {
			name := tc.format
			if tc.remove {
				name += " --remove"
			}
			t.Run(name+" --out "+out.flag, func(t *testing.T) {
				args := []string{"generate", "--format", tc.format}
				if tc.remove {
					args = append(args, "--remove")
				}
				if out.flag != "" {
					args = append(args, "--out", out.flag)
				}
				data := generated(t, args, out.flag)
				header := headerOf(data)
				if tc.use != "" && !strings.Contains(header, strings.ReplaceAll(tc.use, "%s", out.named)) {
					t.Errorf("the header does not say %q:\n%s", strings.ReplaceAll(tc.use, "%s", out.named), header)
				}
				for _, suggested := range []string{"argocd-cm-patch.yaml", "values.yaml", "argocd-operator-patch.yaml", "argocd-operator-json6902.yaml"} {
					if strings.Contains(header, " "+suggested+"\n") {
						t.Errorf("the header names %s, which is not the file written:\n%s", suggested, header)
					}
				}
				// The regenerate command, run as the header spells it, writes these bytes again.
				lines := strings.Split(header, "\n")
				again := shellWords(t, strings.TrimPrefix(lines[1], "#   analysis-health "))
				if tc.remove != contains(again, "--remove") || (out.flag != "") != contains(again, "--out") {
					t.Errorf("the regenerate command %q does not spell out --remove/--out", lines[1])
				}
				if out.flag != "" {
					if err := os.Remove(out.flag); err != nil {
						t.Fatal(err)
					}
				}
				if got := generated(t, again, out.flag); got != data {
					t.Errorf("the regenerate command %q wrote other bytes", lines[1])
				}
			})
		}
	}
	// The folder formats spell --out out too, so their command runs as written (it needs --out).
	for _, format := range []string{"kustomize", "lua"} {
		code, _, errOut := run("generate", "--format", format, "--out", "tree-"+format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		first := "tree-" + format + "/kustomization.yaml"
		if format == "lua" {
			first = "tree-lua/argoproj.io/Rollout/health_test.yaml"
		}
		raw, err := os.ReadFile(first)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(headerOf(string(raw)), " --out tree-"+format+"\n") {
			t.Errorf("%s: the regenerate command lacks --out:\n%s", format, headerOf(string(raw)))
		}
	}
}

func generated(t *testing.T, args []string, out string) string {
	t.Helper()
	code, stdout, errOut := run(args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	if out == "" {
		return stdout
	}
	raw, err := os.ReadFile(filepath.FromSlash(out))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// headerOf is the leading comment block.
func headerOf(data string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(data, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// shellWords splits a command line as a POSIX shell does for the quoting the headers use: words
// separated by spaces, single quotes around a word holding anything else.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, c := range line {
		switch {
		case c == '\'':
			quoted, inWord = !quoted, true
		case c == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
