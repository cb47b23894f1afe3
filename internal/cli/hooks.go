package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/internal/gate/hooks"
	"github.com/analysis-health/analysis-health/internal/gate/inspect"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

func init() { verbs = append(verbs, newHooksCommand) }

type hooksFlags struct {
	files          []string
	mode           *enumValue
	templates      []string
	args           []string
	labels         []string
	annotations    []string
	kargoTimeout   time.Duration
	knownTemplates []string
	requireTmpl    bool
	postRenderer   bool
	failOnWarning  bool
}

func newHooksCommand(o *Options) *cobra.Command {
	f := &hooksFlags{mode: newEnum(string(hooks.Barrier), string(hooks.Barrier), string(hooks.AnalysisRun))}
	cmd := &cobra.Command{
		Use:   "hooks [-f FILE...] [--mode barrier|analysisrun] [--post-renderer]",
		Short: "Generate the PostSync hook that makes a sync (and Kargo) wait for the analysis",
		Long: `hooks generates the Argo CD PostSync hook that makes a sync operation carry the analysis verdict.
Without a hook and with one sync wave Argo CD ends a sync right after apply; with a hook it waits
until every resource is Healthy, fails when one turns Degraded, and keeps running while one is
Progressing or Suspended. Kargo's argocd-update step waits for that operation.

  --mode barrier      (default) one ConfigMap PostSync hook for the input: no Pod, no RBAC, deleted
                      when the operation ends. The sync then waits for the Rollouts'
                      analysis-aware health.
  --mode analysisrun  a PostSync AnalysisRun for each AnalysisTemplate no Rollout runs that is
                      selected with --template or annotated analysis-health.argoproj.io/verify:
                      "true", with the template's metrics, args, dryRun and measurementRetention
                      inlined and --arg values; plain Deployments get an analysis that gates the
                      sync.

--analysis-labels / --analysis-annotations add analysisRunMetadata to every analysis block of every
Rollout (and to the generated AnalysisRuns), so their AnalysisRuns can be traced to a Kargo stage or
freight.

Without --post-renderer it prints the generated hooks only (patching Rollouts needs
--post-renderer). With --post-renderer it prints its input (standard input unless -f is given)
unchanged, followed by the hooks, with patched Rollouts in place: usable as helm --post-renderer and
as an Argo CD Config Management Plugin. A run over its own output adds nothing. A template a Rollout
names that is not in the input (a platform ClusterAnalysisTemplate) is a warning and the hooks are
written for the rest; name it with --known-template, or make it an error with --require-templates.
Bad input (malformed YAML, a --template naming nothing) is an error naming the file, document and
object, exit 1, and nothing on stdout. Warnings go to standard error; --fail-on-warning makes them
an error too (exit 1, nothing on stdout), which a Helm post-renderer needs: Helm discards the
standard error of a post-renderer that succeeds. See docs/hooks.md.`,
		Example: `  analysis-health hooks -f testdata/charts/canary-checkout.yaml
  helm template checkout ./chart --post-renderer analysis-health \
    --post-renderer-args hooks --post-renderer-args --post-renderer
  analysis-health hooks --mode analysisrun -f web.yaml --post-renderer --arg expected-version=2.4.0
  analysis-health hooks -f - --post-renderer --analysis-labels kargo.akuity.io/stage=prod \
    < rendered.yaml`,
		Args: fileAsArgument,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			return runHooks(o, f, opts)
		},
	}
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, "file, folder or - (stdin) with the rendered manifests of one application; repeatable")
	cmd.Flags().Var(f.mode, "mode", "which hook: barrier|analysisrun")
	cmd.Flags().StringArrayVar(&f.templates, "template", nil, "analysisrun: an AnalysisTemplate or ClusterAnalysisTemplate to run after every sync, "+templateFlagForm+"; repeatable")
	cmd.Flags().StringArrayVar(&f.args, "arg", nil, "analysisrun: NAME=VALUE for a template argument; repeatable")
	cmd.Flags().StringArrayVar(&f.labels, "analysis-labels", nil, "KEY=VALUE label for the AnalysisRuns of every Rollout analysis (analysisRunMetadata); repeatable")
	cmd.Flags().StringArrayVar(&f.annotations, "analysis-annotations", nil, "KEY=VALUE annotation for the AnalysisRuns of every Rollout analysis (analysisRunMetadata); repeatable")
	cmd.Flags().DurationVar(&f.kargoTimeout, "kargo-timeout", inspect.DefaultKargoTimeout, "warn when a Rollout needs longer than this Kargo argocd-update timeout (retry.timeout)")
	cmd.Flags().StringArrayVar(&f.knownTemplates, "known-template", nil, "a template that exists in the cluster though not in the input, "+templateFlagForm+"; repeatable")
	cmd.Flags().BoolVar(&f.requireTmpl, "require-templates", false, "exit 1 when a template a Rollout names is neither in the input nor a --known-template")
	cmd.Flags().BoolVar(&f.failOnWarning, "fail-on-warning", false, "exit 1 with nothing on stdout when there is any warning (Helm shows a failing post-renderer's stderr, and discards a succeeding one's)")
	cmd.Flags().BoolVar(&f.postRenderer, "post-renderer", false, "print the input (stdin unless -f is given) followed by the hooks: helm --post-renderer, Config Management Plugin")
	return cmd
}

// options turns the flags into hooks.Options; every mistake here is a usage error (exit 2).
func (f *hooksFlags) options() (hooks.Options, error) {
	opts := hooks.Options{Mode: hooks.Mode(f.mode.String()), Templates: f.templates, KargoTimeout: f.kargoTimeout, KnownTemplates: f.knownTemplates,
		RequireTemplates: f.requireTmpl}
	if len(f.files) == 0 && !f.postRenderer {
		return opts, usageError("at least one -f FILE is required (use - for standard input), or --post-renderer to read standard input")
	}
	if f.kargoTimeout <= 0 {
		return opts, usageError("--kargo-timeout must be positive")
	}
	if err := checkTemplateFlag("--template", f.templates); err != nil {
		return opts, err
	}
	if err := checkTemplateFlag("--known-template", f.knownTemplates); err != nil {
		return opts, err
	}
	var err error
	if opts.AnalysisLabels, err = keyValues("--analysis-labels", f.labels); err != nil {
		return opts, err
	}
	if opts.AnalysisAnnotations, err = keyValues("--analysis-annotations", f.annotations); err != nil {
		return opts, err
	}
	for _, a := range f.args {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return opts, usageError("--arg %q: want NAME=VALUE", a)
		}
		opts.Args = append(opts.Args, hooks.Arg{Name: name, Value: value})
	}
	if !f.postRenderer && (len(opts.AnalysisLabels) > 0 || len(opts.AnalysisAnnotations) > 0) {
		return opts, usageError("--analysis-labels and --analysis-annotations change Rollouts in place: add --post-renderer to print the whole stream")
	}
	if err := opts.Validate(); err != nil {
		return opts, usageError("%v", err)
	}
	return opts, nil
}

func keyValues(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("%s %q: want KEY=VALUE", flag, kv)
		}
		if prev, dup := out[k]; dup && prev != v {
			return nil, usageError("%s: %s given twice with different values", flag, k)
		}
		out[k] = v
	}
	return out, nil
}

func runHooks(o *Options, f *hooksFlags, opts hooks.Options) error {
	defer keepingWholeInput()()
	files := f.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	streams, err := manifest.ReadStreamsKeeping(files, o.In, hooks.Keep)
	if err != nil {
		return err
	}
	res, err := hooks.Generate(streams, opts)
	if errors.Is(err, manifest.ErrNoObjects) {
		return noObjects(files)
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	if f.failOnWarning && len(res.Warnings) > 0 {
		// Before the first byte of stdout: Helm (pkg/postrender/exec.go) drops a successful post-renderer's
		// stderr, so a warning it must see has to fail the render, and a failed render writes nothing.
		return &ExitError{Code: 1, Err: errors.New("--fail-on-warning: there are warnings (above); nothing written")}
	}
	// Generate returns everything at once; nothing has been written before this point.
	if f.postRenderer {
		_, err = res.WriteTo(o.Out)
		return err
	}
	_, err = o.Out.Write(res.GeneratedYAML())
	return err
}
