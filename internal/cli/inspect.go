package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/internal/ordered"

	"github.com/analysis-health/analysis-health/internal/gate/inspect"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

func init() { verbs = append(verbs, newInspectCommand) }

type inspectFlags struct {
	files          []string
	output         *enumValue
	strict         bool
	kargoTimeout   time.Duration
	knownTemplates []string
	syncTimeout    time.Duration
}

func newInspectCommand(o *Options) *cobra.Command {
	f := &inspectFlags{output: newEnum("table", "table", "json", "yaml")}
	cmd := &cobra.Command{
		Use:   "inspect -f FILE [-f FILE...]",
		Short: "Report each Rollout's analysis in rendered manifests, and how long a sync waits for it",
		Long: `inspect reads rendered manifests (helm template, kustomize build) and reports, for every Rollout:
its strategy; every analysis source (canary steps, background, blue-green pre/post-promotion,
experiment analyses) with templates, cluster scope, arguments and analysisRunMetadata; whether each
referenced AnalysisTemplate / ClusterAnalysisTemplate is in the input (a missing one makes the
Rollout InvalidSpec, which is Degraded); dry-run metrics; pauses that wait for a person (pause: {},
autoPromotionEnabled: false), which would hold a PostSync barrier until someone promotes; and the
least time from a sync to full promotion, with the Kargo argocd-update retry.timeout it needs.

The analyses table is followed by what each analysis runs, one item a line, so that it fits a
terminal. Problems are listed last. It exits 0 whatever it finds, unless --strict is given and a
problem was found (exit 1). See docs/hooks.md.`,
		Example: `  analysis-health inspect -f testdata/charts/canary-checkout.yaml
  helm template checkout ./chart | analysis-health inspect -f - -o json
  analysis-health inspect -f rendered/ --strict --kargo-timeout 30m`,
		Args: fileAsArgument,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.files) == 0 {
				return usageError("at least one -f FILE is required (use - for standard input)")
			}
			if f.kargoTimeout <= 0 {
				return usageError("--kargo-timeout must be positive")
			}
			if f.syncTimeout < 0 {
				return usageError("--argocd-sync-timeout must not be negative")
			}
			return runInspect(o, f)
		},
	}
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, "file, folder or - (stdin) with the rendered manifests of one application; repeatable")
	cmd.Flags().VarP(f.output, "output", "o", "output format: table|json|yaml")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "exit 1 when a problem is found")
	cmd.Flags().DurationVar(&f.kargoTimeout, "kargo-timeout", inspect.DefaultKargoTimeout, "the Kargo argocd-update step timeout (retry.timeout) to compare the estimate with")
	cmd.Flags().DurationVar(&f.syncTimeout, "argocd-sync-timeout", 0, "Argo CD's controller.sync.timeout.seconds to compare the estimate with (0: none, Argo CD's default)")
	cmd.Flags().StringArrayVar(&f.knownTemplates, "known-template", nil, "a template that exists in the cluster though not in the input, "+templateFlagForm+" (the form inspect prints); repeatable")
	return cmd
}

// noObjects is manifest.ErrNoObjects naming the input it is about.
func noObjects(files []string) error {
	return fmt.Errorf("%s: %w", strings.Join(files, ", "), manifest.ErrNoObjects)
}

// templateFlagForm is inspect.TemplateGrammar in words, for flag help: the grammar itself is one word
// wider than a wrapped help line.
const templateFlagForm = "[KIND/][NAMESPACE/]NAME with KIND AnalysisTemplate or ClusterAnalysisTemplate"

// checkTemplateFlag refuses a template flag value outside inspect.TemplateGrammar, the one spelling of a
// template on every verb.
func checkTemplateFlag(flag string, values []string) error {
	for _, v := range values {
		if _, err := inspect.ParseTemplateSelector(v); err != nil {
			return usageError("%s: %v", flag, err)
		}
	}
	return nil
}

func runInspect(o *Options, f *inspectFlags) error {
	if err := checkTemplateFlag("--known-template", f.knownTemplates); err != nil {
		return err
	}
	defer streaming()()
	entries, n, err := inspectEntries(manifest.NewReader(f.files, o.In))
	if err != nil {
		return err
	}
	if n == 0 {
		return noObjects(f.files)
	}
	report, err := inspect.InspectEntries(entries, inspect.Options{KargoTimeout: f.kargoTimeout, KnownTemplates: f.knownTemplates, ArgoCDSyncTimeout: f.syncTimeout})
	if err != nil {
		return err
	}
	// Built in memory first, so a failure never leaves half a report on stdout.
	var b bytes.Buffer
	switch f.output.String() {
	case "json":
		err = inspect.WriteJSON(&b, report)
	case "yaml":
		err = asYAML(&b, func(w io.Writer) error { return inspect.WriteJSON(w, report) })
	default:
		err = inspect.WriteTable(&b, report)
	}
	if err != nil {
		return err
	}
	if _, err := o.Out.Write(b.Bytes()); err != nil {
		return err
	}
	if f.strict && report.Failed() {
		return &ExitError{Code: 1, Err: fmt.Errorf("--strict: %d problem(s) found", len(report.Problems))}
	}
	return nil
}

// inspectEntries reads the input unit by unit on every core, as health does, keeping of each object only
// what inspect needs (inspect.Summarize): memory stays at the input's bytes plus the objects in flight.
// n counts the objects of every kind. The outcome is that of manifest.Read: a List item that does not
// decode on its own has its document decoded whole, and the first error in input order is returned.
func inspectEntries(r *manifest.Reader) (entries []inspect.Entry, n int, err error) {
	type result struct {
		u       manifest.Unit
		entries []inspect.Entry
		n       int
		split   bool // the unit, an item of a List, did not decode on its own
	}
	summarize := func(objs []manifest.Object) []inspect.Entry {
		var out []inspect.Entry
		for _, obj := range objs {
			if e, ok := inspect.Summarize(obj); ok {
				out = append(out, e)
			}
		}
		return out
	}
	var docKey, skip string
	var docEntries, docObjects int // where the current document's entries and objects start
	err = ordered.Map(0, r.Next, func(u manifest.Unit) (result, error) {
		objs, err := u.Decode()
		if err != nil {
			if u.Item > 0 {
				return result{u: u, split: true}, nil
			}
			return result{}, err
		}
		return result{u: u, entries: summarize(objs), n: len(objs)}, nil
	}, func(res result) error {
		file, doc := res.u.Document()
		key := fmt.Sprintf("%s\x00%d", file, doc)
		if key != docKey {
			docKey, docEntries, docObjects = key, len(entries), n
		}
		if key == skip {
			return nil
		}
		if res.split {
			entries, n, skip = entries[:docEntries], docObjects, key
			objs, err := res.u.DecodeDocument()
			if err != nil {
				return err
			}
			entries, n = append(entries, summarize(objs)...), n+len(objs)
			return nil
		}
		entries, n = append(entries, res.entries...), n+res.n
		return nil
	})
	return entries, n, err
}
