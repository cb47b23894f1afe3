package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/upstream"
)

// Every analysis-health command shown to users — the Example of each command's --help, and the shell
// blocks of README.md and docs/*.md — runs and exits 0. Paths are resolved against the repository: a
// path that exists there is used as is; the placeholders the examples use for the reader's own files
// (rollout.yaml, rendered.yaml, ...) stand for the repository files below; kubectl and helm in a pipeline
// stand for the repository files they would print. Anything else that looks like an input path and does
// not exist fails the test, naming the example.

// exampleStandIns maps the placeholders of the examples to repository files (or, with "generate:", to the
// output of an analysis-health command run first).
var exampleStandIns = map[string]string{
	"rollout.yaml":              "lua/argoproj.io/Rollout/testdata/canary_pause_step.yaml",
	"analysisrun.yaml":          "lua/argoproj.io/AnalysisRun/testdata/background-analysis-running-no-count.yaml",
	"rollouts.yaml":             "testdata/examples/canary-analysis.yaml",
	"rendered.yaml":             "testdata/charts/canary-checkout.yaml",
	"rendered/":                 "testdata/charts",
	"manifests/":                "testdata/charts",
	"web.yaml":                  "testdata/charts/deployment-web.yaml",
	"argocd-cm.yaml":            "generate:argocd-cm",
	"live-argocd-cm.yaml":       "generate:argocd-cm",
	"./resource_customizations": "generate:lua",
	"resource_customizations":   "generate:lua",
	// A statically linked Linux executable's header: what generate --plugin-file accepts.
	"./plugin": "internal/cli/testdata/plugin-static-elf",
	"./rollouts-plugin-metric-analysis-health-linux-amd64":      "internal/cli/testdata/plugin-static-elf",
	"./dist/rollouts-plugin-metric-analysis-health-linux-amd64": "internal/cli/testdata/plugin-static-elf",
	// What kubectl get argocd prints, which generate --format operator-json6902 --from reads.
	"argocd.live.yaml": "internal/cli/testdata/argocd-operator-live.yaml",
	// What helm get values prints for the argo-rollouts release, which generate --format kargo reads.
	"rollouts-values.yaml": "internal/cli/testdata/rollouts-values.yaml",
	// The workload API server's CA and a ServiceAccount's token, which kubeconfig-secret reads.
	"ca.crt": "internal/cli/testdata/kubeconfig-secret/ca.crt",
	"token":  "internal/cli/testdata/kubeconfig-secret/token",
}

// Examples whose point is a non-zero exit: inspect --strict exits 1 on findings, and the rendered charts
// have them on purpose. scripts --strict on our own install and the rendered charts has none.
var exampleExitCodes = map[string]int{
	"inspect --strict": 1,
	// The stand-in chart (canary-checkout) ends with a pause: {}, which hooks warns holds the sync: the
	// post-renderer example fails on it, as docs/hooks.md says it does.
	"hooks --fail-on-warning": 1,
}

// What the non-analysis-health commands of a pipeline would print.
var exampleProducers = []struct {
	prefix, file string
}{
	{"kubectl get rollouts,analysisruns", "testdata/examples/canary-analysis.yaml"},
	{"kubectl get rollouts", "testdata/examples/canary-analysis.yaml"},
	{"kubectl get rollout", "lua/argoproj.io/Rollout/testdata/canary_pause_step.yaml"},
	{"helm template", "testdata/charts/canary-checkout.yaml"},
	{"kubectl get argocd", "internal/cli/testdata/argocd-operator-live.yaml"},
}

type example struct {
	where string // file:line or "<verb> --help"
	line  string
}

func helpExamples(cmd *cobra.Command) []example {
	var out []example
	if cmd.Example != "" {
		for _, l := range joinContinued(strings.Split(cmd.Example, "\n")) {
			if strings.TrimSpace(l) != "" {
				out = append(out, example{cmd.CommandPath() + " --help", strings.TrimSpace(l)})
			}
		}
	}
	for _, c := range cmd.Commands() {
		out = append(out, helpExamples(c)...)
	}
	return out
}

func joinContinued(lines []string) []string {
	var out []string
	cur := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		out = append(out, cur+t)
		cur = ""
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

var fence = regexp.MustCompile("^\\s*```(\\w*)")

func docExamples(t *testing.T, root string) []example {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []example
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		lines := strings.Split(string(raw), "\n")
		lang, in := "", false
		var block []string
		start := 0
		for i, l := range lines {
			if m := fence.FindStringSubmatch(l); m != nil {
				if in {
					if lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" {
						for j, c := range joinContinued(block) {
							_ = j
							out = append(out, example{fmt.Sprintf("%s:%d", rel, start), c})
						}
					}
					in, block = false, nil
				} else {
					in, lang, start = true, m[1], i+2
				}
				continue
			}
			if in {
				block = append(block, l)
			}
		}
	}
	return out
}

// words splits a shell line into words, honouring quotes, and drops a trailing comment.
func words(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	has := false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, has = r, true
		case r == '#' && !has && cur.Len() == 0:
			return out
		case r == ' ' || r == '\t':
			if has || cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// segments splits a line at |, && and ; (outside quotes, as words).
func segments(ws []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range ws {
		if w == "|" || w == "&&" || w == ";" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, w)
	}
	return append(out, cur)
}

func ours(seg []string) []string {
	switch {
	case len(seg) >= 1 && seg[0] == "analysis-health":
		return seg[1:]
	case len(seg) >= 3 && seg[0] == "go" && seg[1] == "run" && seg[2] == "./cmd/analysis-health":
		return seg[3:]
	case len(seg) >= 2 && seg[0] == "$" && seg[1] == "analysis-health":
		return seg[2:]
	}
	return nil
}

type exampleEnv struct {
	root       string
	generated  map[string]string
	standInDir string
}

func (e *exampleEnv) standIn(t *testing.T, name string) (string, bool) {
	target, ok := exampleStandIns[name]
	if !ok {
		return "", false
	}
	if gen, isGen := strings.CutPrefix(target, "generate:"); isGen {
		if p, done := e.generated[gen]; done {
			return p, true
		}
		p := filepath.Join(e.standInDir, gen)
		if code, _, errOut := runIn(t, nil, "generate", "--format", gen, "--out", p); code != 0 {
			t.Fatalf("generating the %s stand-in: exit %d: %s", gen, code, errOut)
		}
		e.generated[gen] = p
		return p, true
	}
	return filepath.Join(e.root, target), true
}

func runIn(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(args, &cli.Options{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// outputFlags name files or folders a command writes; inputFlags files it reads.
var (
	outputFlags = map[string]bool{"--out": true, "--fuzz-out": true}
	inputFlags  = map[string]bool{"-f": true, "--filename": true, "--argocd-cm": true, "--plugin-file": true, "--rollouts-values": true, "--from": true, "--ca-file": true, "--token-file": true}
)

// resolve rewrites the arguments of one of our commands: input paths (values of inputFlags, and verify's
// folder) that exist in the repository to absolute ones, placeholders to their stand-ins, output paths
// into the scratch folder (creating their parent, which the reader's repository has); it fails on an
// input path that resolves to nothing.
func (e *exampleEnv) resolve(t *testing.T, ex example, args []string, scratch string) []string {
	t.Helper()
	out := make([]string, 0, len(args))
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		val, flag := a, ""
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			flag, val = k+"=", v
			prev = k
		}
		input := inputFlags[prev] || i == 1 && args[0] == "verify" && !strings.HasPrefix(a, "-")
		switch {
		case outputFlags[prev]:
			if filepath.IsAbs(val) {
				val = filepath.Join(scratch, filepath.Base(val))
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(scratch, filepath.Clean(val))), 0o755); err != nil {
				t.Fatal(err)
			}
		case input && val != "-" && !(prev == "--rollouts-values" && val == generator.RolloutsValuesNone):
			if p, ok := e.standIn(t, val); ok {
				val = p
			} else if _, err := os.Stat(filepath.Join(e.root, val)); err == nil {
				val = filepath.Join(e.root, val)
			} else {
				t.Errorf("%s: `%s`: %s does not exist in the repository and stands for no example file", ex.where, ex.line, val)
			}
		}
		out = append(out, flag+val)
	}
	return out
}

func TestExamplesRun(t *testing.T) {
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := &exampleEnv{root: root, generated: map[string]string{}, standInDir: t.TempDir()}
	examples := append(helpExamples(cli.NewRootCommand(&cli.Options{})), docExamples(t, root)...)
	ran := map[string]bool{}
	count := 0
	for _, ex := range examples {
		ws := words(ex.line)
		if len(ws) == 0 {
			continue
		}
		// Synopses ("analysis-health hooks [-f FILE...] [--mode barrier|analysisrun]") are not commands.
		if strings.Contains(ex.line, " [-") {
			continue
		}
		var stdin []byte
		for _, seg := range segments(ws) {
			if len(seg) == 0 {
				continue
			}
			args := ours(seg)
			post := postRendererArgs(seg)
			if args == nil && post == nil {
				// Someone else's command: what it would print feeds the next segment.
				stdin = nil
				joined := strings.Join(seg, " ")
				for _, p := range exampleProducers {
					if strings.HasPrefix(joined, p.prefix) {
						if stdin, err = os.ReadFile(filepath.Join(root, p.file)); err != nil {
							t.Fatal(err)
						}
						break
					}
				}
				continue
			}
			if post != nil {
				// helm --post-renderer analysis-health --post-renderer-args ...: helm pipes the rendered chart in.
				args = post
				if stdin, err = os.ReadFile(filepath.Join(root, "testdata/charts/canary-checkout.yaml")); err != nil {
					t.Fatal(err)
				}
			}
			// Redirections.
			var clean []string
			for i := 0; i < len(args); i++ {
				switch {
				case args[i] == ">" && i+1 < len(args):
					i++
				case args[i] == "<" && i+1 < len(args):
					p, ok := env.standIn(t, args[i+1])
					if !ok {
						p = filepath.Join(root, args[i+1])
					}
					if stdin, err = os.ReadFile(p); err != nil {
						t.Errorf("%s: `%s`: %v", ex.where, ex.line, err)
					}
					i++
				default:
					clean = append(clean, args[i])
				}
			}
			key := strings.Join(clean, " ")
			if ran[key] {
				continue
			}
			ran[key] = true
			count++
			t.Run(ex.where+": "+key, func(t *testing.T) {
				scratch := t.TempDir()
				t.Chdir(scratch)
				resolved := env.resolve(t, ex, clean, scratch)
				// Measurements and fuzzing: the same command with fewer iterations (two cores run the whole suite).
				for i, a := range resolved {
					if strings.HasPrefix(a, "--fuzz=") {
						resolved[i] = "--fuzz=5"
					}
				}
				if slices.Contains(resolved, "--bench") {
					resolved = append(resolved, "--bench-n=2")
				}
				// Fuzzing judges each evaluation against Argo CD's 1 s deadline; on a loaded CI machine a slow
				// evaluation is not a finding, so the deadline is raised (verify's --timeout says why).
				if len(resolved) > 0 && resolved[0] == "verify" && slices.ContainsFunc(resolved, func(a string) bool { return strings.HasPrefix(a, "--fuzz") }) {
					resolved = append(resolved, "--timeout=30s")
				}
				code, out, errOut := runIn(t, stdin, resolved...)
				want := 0
				for subs, c := range exampleExitCodes {
					verb, flag, _ := strings.Cut(subs, " ")
					if strings.Contains(key, verb+" ") && strings.Contains(key, flag) {
						want = c
					}
				}
				if code != want {
					t.Errorf("`%s` (run as %q): exit %d, want %d\nstderr: %s", ex.line, resolved, code, want, errOut)
				}
				if out == "" && want == 0 && !strings.Contains(key, "--out") && !strings.Contains(errOut, "wrote") {
					t.Errorf("`%s`: no output", ex.line)
				}
			})
			stdin = nil
		}
	}
	if count < 20 {
		t.Errorf("only %d examples found: is the extraction broken?", count)
	}
	// Every verb shows at least one example in its --help.
	var missing []string
	for _, c := range cli.NewRootCommand(&cli.Options{}).Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" && len(c.Commands()) == 0 {
			missing = append(missing, c.Name())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("verbs without an Example in --help: %v", missing)
	}
}

// postRendererArgs is the analysis-health invocation helm makes for `--post-renderer analysis-health
// --post-renderer-args A --post-renderer-args B`, or nil.
func postRendererArgs(seg []string) []string {
	if len(seg) == 0 || seg[0] != "helm" {
		return nil
	}
	var args []string
	found := false
	for i := 0; i+1 < len(seg); i++ {
		switch seg[i] {
		case "--post-renderer":
			found = found || seg[i+1] == "analysis-health"
		case "--post-renderer-args":
			args = append(args, seg[i+1])
		}
	}
	if !found {
		return nil
	}
	return args
}
