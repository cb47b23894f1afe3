package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// allCommands is the root and every command below it, help and completion included.
func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}

// TestHelpWidth: every line of every command's --help fits in helpWidth columns, and a flag's type
// never lists its values (they go in its description), so the flag column stays narrow.
func TestHelpWidth(t *testing.T) {
	root := NewRootCommand(&Options{})
	cmds := allCommands(root)
	if len(cmds) < 10 {
		t.Fatalf("only %d commands found", len(cmds))
	}
	for _, c := range cmds {
		t.Run(c.CommandPath(), func(t *testing.T) {
			var out bytes.Buffer
			code := Run(append(strings.Fields(strings.TrimPrefix(c.CommandPath(), root.Name())), "--help"),
				&Options{In: strings.NewReader(""), Out: &out, ErrOut: &out})
			if code != 0 || out.Len() == 0 {
				t.Fatalf("--help: exit %d\n%s", code, out.String())
			}
			for i, line := range strings.Split(out.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth {
					t.Errorf("line %d is %d columns (max %d): %s", i+1, n, helpWidth, line)
				}
				if strings.HasPrefix(strings.TrimSpace(line), "-") && strings.Contains(strings.SplitN(strings.TrimSpace(line), "  ", 2)[0], "|") {
					t.Errorf("line %d: a flag type lists values: %s", i+1, line)
				}
			}
		})
	}
}

// TestVersionValuesOnce: --argocd-version's values are spelled once in each verb's help (its
// description), not in its type as well.
func TestVersionValuesOnce(t *testing.T) {
	for _, c := range allCommands(NewRootCommand(&Options{})) {
		f := c.LocalFlags().Lookup("argocd-version")
		if f == nil {
			continue
		}
		if got := f.Value.Type(); got != "string" {
			t.Errorf("%s: --argocd-version type %q, want string", c.CommandPath(), got)
		}
		if n := strings.Count(c.LocalFlags().FlagUsages(), "v2.14"); n != 2 {
			// "v2.14, v3.2, v3.6 (aliases: v2 = v2.14, ...)": the list once, with its alias.
			t.Errorf("%s: v2.14 appears %d times in the flags' help, want 2", c.CommandPath(), n)
		}
	}
}

// TestEveryVerbHasLong: every verb's --help starts with a long description, not the one-line Short.
func TestEveryVerbHasLong(t *testing.T) {
	for _, c := range allCommands(NewRootCommand(&Options{})) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.HasParent() && c.Parent().Name() == "completion") {
			continue
		}
		if len(c.Long) < 2*len(c.Short) || !strings.Contains(c.Long, "\n") {
			t.Errorf("%s: no long description (Long %q)", c.CommandPath(), c.Long)
		}
	}
}

// TestGenerateArguments: a format given as an argument points at --format; anything else says generate
// takes none. Both are usage errors (exit 2) naming the verb's help.
func TestGenerateArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "helm"}, `Error: unknown command "helm" for "analysis-health generate": did you mean --format helm?`},
		{[]string{"generate", "Kargo", "--out", "x"}, "did you mean --format kargo?"},
		{[]string{"generate", "operator-json6902"}, "did you mean --format operator-json6902?"},
		{[]string{"generate", "values"}, `Error: unknown command "values" for "analysis-health generate": generate takes no arguments; name the format with --format (argocd-cm, patch, helm,`},
		{[]string{"generate", "--format", "helm", "extra"}, `unknown command "extra"`},
	} {
		code, out, errOut := run(t, "", tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "Run 'analysis-health generate --help' for usage.") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestFlagHelp: what a flag means is in its help, for every format it applies to.
func TestFlagHelp(t *testing.T) {
	root := NewRootCommand(&Options{})
	for _, tc := range []struct {
		verb, flag string
		want       []string
	}{
		{"generate", "namespace", []string{"namespace of argocd-cm", "ArgoCD resource (operator formats)", "--format kargo, the Rollout's namespace", "--rollout"}},
		{"generate", "format", []string{"argocd-cm, patch, helm, kustomize, lua, operator, operator-json6902, kargo, notifications, upstream"}},
		{"generate", "plugin-sha256", []string{"--plugin-file"}},
		{"health", "argocd-cm", []string{"argocd-cm ConfigMap", "merge patch generate --format patch writes"}},
		{"scripts", "argocd-cm", []string{"argocd-cm ConfigMap", "merge patch generate --format patch writes"}},
		{"health", "argocd-version", []string{"v2.14, v3.2, v3.6 (aliases: v2 = v2.14, v3 = v3.6, v3.0–v3.5 = v3.2)"}},
	} {
		cmd, _, err := root.Find([]string{tc.verb})
		if err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags().Lookup(tc.flag)
		if f == nil {
			t.Fatalf("%s has no --%s", tc.verb, tc.flag)
		}
		for _, w := range tc.want {
			if !strings.Contains(f.Usage, w) {
				t.Errorf("%s --%s: %q lacks %q", tc.verb, tc.flag, f.Usage, w)
			}
		}
	}
}

// TestDocsNoEmptyCodeBlocks: no fenced block of the user docs is empty (docs/install.md had a stray
// one after the generate synopsis).
func TestDocsNoEmptyCodeBlocks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs: %v", err)
	}
	for _, f := range append(files, "../../README.md") {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		open, start := false, 0
		for i, l := range lines {
			if !strings.HasPrefix(strings.TrimSpace(l), "```") {
				continue
			}
			if open && strings.TrimSpace(strings.Join(lines[start+1:i], "")) == "" {
				t.Errorf("%s:%d: empty code block", f, start+1)
			}
			open, start = !open, i
		}
	}
}

// The small things a new user tripped on: a flag's help that contradicts its default, an error naming a
// flag without its --, the kustomize example writing into a folder an empty checkout lacks, and -o yaml
// where health has it.
func TestHelpSmallThings(t *testing.T) {
	code, out, _ := run(t, "", "generate", "--help")
	if code != 0 || strings.Contains(out, "(no default") {
		t.Errorf("generate --help says both no default and a default for --namespace:\n%s", out)
	}
	code, _, errOut := run(t, "", "generate", "--format", "patch", "--actions=false", "--block-bypass-on-failed-analysis=false")
	if code != 2 || !strings.Contains(errOut, "Error: --block-bypass-on-failed-analysis=false has no effect with --actions=false") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, patch, _ := run(t, "", "generate", "--format", "patch")
	cm := filepath.Join(t.TempDir(), "patch.yaml")
	if err := os.WriteFile(cm, []byte(patch), 0o644); err != nil || code != 0 {
		t.Fatal(code, err)
	}
	for _, args := range [][]string{
		{"inspect", "-f", "../../testdata/charts/canary-checkout.yaml", "-o", "yaml"},
		{"scripts", "--argocd-cm", cm, "-o", "yaml"},
	} {
		code, out, errOut := run(t, "", args...)
		var v map[string]any
		if code != 0 || yaml.UnmarshalStrict([]byte(out), &v) != nil || len(v) == 0 || strings.HasPrefix(out, "{") {
			t.Errorf("%v: exit %d, not YAML:\n%s%s", args, code, out, errOut)
		}
	}
	t.Chdir(t.TempDir())
	if code, _, errOut := run(t, "", "generate", "--format", "kustomize", "--kinds", "Rollout,AnalysisRun", "--out", "analysis-health"); code != 0 {
		t.Errorf("the kustomize example in an empty folder: exit %d %s", code, errOut)
	}
	code, out, _ = run(t, "", "generate", "--help")
	if !strings.Contains(out, "--format kustomize --kinds Rollout,AnalysisRun \\\n    --out analysis-health\n") {
		t.Errorf("the kustomize example is not the one run here:\n%s", out)
	}
}

// What docs/ and README.md tell a new user holds: short verb cells, no internal package offered as API,
// no published release promised, cited files that exist, and install.md's check of the options block.
func TestUserDocsClaims(t *testing.T) {
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme := read("README.md")
	table := readme[strings.Index(readme, "| verb | what | docs |"):]
	table = table[:strings.Index(table, "\n\n")]
	for _, row := range strings.Split(table, "\n") {
		if len(row) > 250 {
			t.Errorf("README verb table: a %d-character row (link to the page instead):\n%s", len(row), row)
		}
	}
	if strings.Contains(readme, "take a statically linked release binary") {
		t.Error("README offers a release binary; none is published")
	}
	if v := read("docs/verify.md"); strings.Contains(v, "lint.Check") || strings.Contains(v, "mutate.Mutator") || strings.Contains(v, "mutate.Minimize") {
		t.Error("docs/verify.md offers internal packages as public API")
	}
	for _, m := range regexp.MustCompile("`([a-z0-9./_-]+\\.go)`").FindAllStringSubmatch(read("testdata/charts/README.md"), -1) {
		if _, err := os.Stat(filepath.Join("..", "..", m[1])); err != nil {
			t.Errorf("testdata/charts/README.md cites %s: %v", m[1], err)
		}
	}
	// install.md's sed prints the options block of the generated Rollout script.
	install := read("docs/install.md")
	m := regexp.MustCompile(`sed -n '/([^/]+)/,/([^/]+)/p'`).FindStringSubmatch(install)
	if m == nil {
		t.Fatal("docs/install.md no longer shows how to print the options block")
	}
	code, out, _ := run(t, "", "generate", "--format", "argocd-cm")
	var cm struct{ Data map[string]string }
	if code != 0 || yaml.Unmarshal([]byte(out), &cm) != nil {
		t.Fatal("generate --format argocd-cm")
	}
	script := cm.Data["resource.customizations.health.argoproj.io_Rollout"]
	from, to := strings.Index(script, m[1]), strings.Index(script, m[2])
	if from < 0 || to < from || !strings.Contains(script[from:to], "inconclusiveStatus") {
		t.Errorf("the sed range %q..%q does not hold the options block of the generated script", m[1], m[2])
	}
}
