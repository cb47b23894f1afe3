package cli

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/lua"
)

type generateFlags struct {
	format       *enumValue
	inconclusive *enumValue
	humanGate    *enumValue
	kinds        []string
	namespace    string
	argocdName   string
	out          string
	actions      bool
	blockBypass  bool
	remove       bool
	from         string
	// nameSet and namespaceSet: --argocd-name and --namespace were given, so --from does not default them.
	nameSet, namespaceSet bool
	kargo                 kargoFlags
	version               profileValue
	argocdSource          string
}

func newGenerateCommand(o *Options) *cobra.Command {
	var formats []string
	for _, f := range generator.Formats() {
		formats = append(formats, string(f))
	}
	formats = append(formats, string(generator.Kargo), string(generator.Notifications), string(generator.Upstream))
	f := &generateFlags{
		format:       newEnum("", formats...),
		inconclusive: newEnum("suspended", "suspended", "degraded"),
		humanGate:    newEnum("suspended", "suspended", "healthy"),
	}
	cmd := &cobra.Command{
		Use:   "generate --format FORMAT [--out PATH]",
		Short: "Render the scripts and actions to install: argocd-cm, patch, Helm values, Kargo, ...",
		Long: `generate renders the bundled health scripts and resource actions into what installs them into
Argo CD, in the --format given.

Formats:
  argocd-cm          a complete argocd-cm ConfigMap holding only the analysis-health keys
  patch              a merge patch for argocd-cm:
                       kubectl patch configmap argocd-cm -n argocd --type merge --patch-file FILE
  helm               values for the argo-helm argo-cd chart (configs.cm): helm upgrade ... -f FILE
  kustomize          a folder with a kustomize Component that patches argocd-cm (needs --out)
  lua                a resource_customizations-style folder with the scripts, tests and fixtures
                     (needs --out)
  kargo              the Kargo verification that shows a Rollout's own analysis through the
                     Rollouts metric plugin analysis-health/rollout-analysis: AnalysisTemplate,
                     Stage snippet, argo-rollouts chart values, RBAC (needs --out and
                     --plugin-location; the --format kargo flags below; docs/kargo.md)
  notifications      Argo CD notifications of a failed analysis, naming the Rollout, the
                     AnalysisRun and the metric, once per revision: a trigger and template for
                     argocd-notifications-cm, the argocd-cmd-params-cm setting Argo CD v3 needs
                     (controller.resource.health.persist), and argo-helm values for both (needs
                     --out; --inconclusive degraded notifies an inconclusive analysis too;
                     docs/notifications.md)
  operator           for the Argo CD Operator / OpenShift GitOps: a merge patch for the ArgoCD
                     resource that sets spec.resourceHealthChecks and spec.resourceActions to
                     exactly our entries (replacing the lists):
                       kubectl patch argocd NAME -n NS --type merge --patch-file FILE
  operator-json6902  a JSON patch that appends our entries to the ArgoCD resource's existing lists,
                     refused whole if applied twice; with --from the live resource (kubectl get
                     argocd NAME -n NS -o yaml) it creates the lists and annotations it lacks:
                       kubectl patch argocd NAME -n NS --type json --patch-file FILE
  upstream           a pull request to Argo CD making these scripts its built-ins: health.lua, its
                     own health_test.yaml with the changed expectations and our recorded cases, to
                     copy over the Argo CD tree given with --argocd-source (needs --out;
                     docs/upstream.md)

The keys are resource.customizations.health.argoproj.io_<Kind> and, for the kinds with actions
(Rollout, AnalysisRun, Experiment), resource.customizations.actions.argoproj.io_<Kind> with
mergeBuiltinActions: true, so Argo CD's own actions stay in the menu; --actions=false leaves the
actions out. The Rollout discovery lists promote-full and skip-current-step disabled while an
analysis run of the current revision has failed; --block-bypass-on-failed-analysis=false switches
that off (docs/actions.md).

Single-file formats print to standard output unless --out names a file. Folder formats need --out:
a folder that does not exist yet (or is empty). Output is written atomically, so a failed run leaves
nothing behind. See docs/install.md.`,
		Example: `  analysis-health generate --format patch --out argocd-cm-patch.yaml
  analysis-health generate --format helm --inconclusive degraded > analysis-health-values.yaml
  analysis-health generate --format kustomize --kinds Rollout,AnalysisRun \
    --out analysis-health
  analysis-health generate --format patch --block-bypass-on-failed-analysis=false
  analysis-health generate --format lua --actions=false --out resource_customizations
  analysis-health generate --format kargo --project shop --rollout checkout --namespace shop \
    --plugin-location https://example.com/rollouts-plugin-metric-analysis-health \
    --plugin-file ./plugin --rollouts-values rollouts-values.yaml --out kargo/
  analysis-health generate --format notifications --out notifications/
  analysis-health generate --format operator-json6902 --argocd-name openshift-gitops \
    --namespace openshift-gitops
  kubectl get argocd argocd -n argocd -o yaml | \
    analysis-health generate --format operator-json6902 --from - --out argocd-patch.yaml`,
		Args: func(cmd *cobra.Command, args []string) error { return formatAsArgument(cmd, args, f.format) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkKargoFlags(cmd, &f.kargo, f.format.String()); err != nil {
				return err
			}
			if err := checkFormatFlags(cmd, f.format.String()); err != nil {
				return err
			}
			if f.format.String() == string(generator.Kargo) {
				return runGenerateKargo(cmd, o, f)
			}
			if err := checkUpstreamFlags(cmd, f.format.String()); err != nil {
				return err
			}
			if f.format.String() == string(generator.Upstream) {
				return runGenerateUpstream(o, f)
			}
			if f.format.String() == string(generator.Notifications) {
				return runGenerateNotifications(cmd, o, f)
			}
			f.nameSet, f.namespaceSet = cmd.Flags().Changed("argocd-name"), cmd.Flags().Changed("namespace")
			return runGenerate(o, f)
		},
	}
	cmd.Flags().Var(f.format, "format", "what to render (required): "+strings.Join(f.format.allowed, ", ")+" (Formats above)")
	cmd.Flags().Var(f.inconclusive, "inconclusive", "health of an inconclusive analysis: suspended (a pause waiting for a human) or degraded (a failure; --format notifications notifies it)")
	cmd.Flags().Var(f.humanGate, "human-gate", "health of a Rollout paused for a person (pause: {}, autoPromotionEnabled: false) after its analysis passed: suspended (the sync and Kargo's Stage wait) or healthy (they complete; verify with the plugin, docs/hooks.md)")
	cmd.Flags().StringSliceVar(&f.kinds, "kinds", nil, "kinds to include, comma-separated (default all: "+kindList()+")")
	cmd.Flags().StringVar(&f.namespace, "namespace", generator.DefaultNamespace, "namespace of argocd-cm (set in --format argocd-cm, and in the usage hints) and of the ArgoCD resource (operator formats); with --format kargo, the Rollout's namespace, given with --rollout; kargo does not use the default (without both, the Stage's vars name the Rollout)")
	cmd.Flags().StringVar(&f.argocdName, "argocd-name", generator.DefaultArgoCDName, "name of the ArgoCD resource the operator formats patch (they refuse to apply to any other)")
	cmd.Flags().StringVar(&f.out, "out", "", "write to this file (folder for kustomize and lua) instead of standard output")
	cmd.Flags().BoolVar(&f.actions, "actions", true, "include the resource actions (resource.customizations.actions.* keys, actions/ folders in --format lua)")
	addVersionFlag(cmd, &f.version, "Argo CD release line to render the health scripts for (the form cheapest in its Lua VM) and to derive --format lua's test expectations under")
	cmd.Flags().BoolVar(&f.blockBypass, "block-bypass-on-failed-analysis", true, "list a Rollout's promote-full and skip-current-step disabled while its current analysis has failed (=false: Argo CD's built-in entries stand)")
	cmd.Flags().StringVar(&f.from, "from", "", "--format operator-json6902: the live ArgoCD resource (kubectl get argocd NAME -n NS -o yaml; - for standard input); the patch then creates the lists and annotations it lacks, and --argocd-name and --namespace default to its own")
	cmd.Flags().BoolVar(&f.remove, "remove", false, "--format patch: the uninstall, a merge patch that deletes every key the same options install (docs/install.md)")
	addKargoFlags(cmd.Flags(), &f.kargo)
	cmd.Flags().StringVar(&f.argocdSource, "argocd-source", "", "--format upstream: root of the Argo CD source tree the pull request applies to (its suites are edited, its inputs kept)")
	return cmd
}

// formatAsArgument refuses arguments, pointing `generate helm` at --format helm: the format is a flag.
func formatAsArgument(cmd *cobra.Command, args []string, format *enumValue) error {
	if len(args) == 0 {
		return nil
	}
	if probe := newEnum("", format.allowed...); probe.Set(args[0]) == nil {
		return usageError("unknown command %q for %q: did you mean --format %s?", args[0], cmd.CommandPath(), probe.String())
	}
	return usageError("unknown command %q for %q: generate takes no arguments; name the format with --format (%s)",
		args[0], cmd.CommandPath(), strings.Join(format.allowed, ", "))
}

// formatOnly names the flags that some formats ignore, with the formats they apply to; checkFormatFlags
// refuses them with any other, as checkKargoFlags does the kargo flags, so no flag is silently dropped.
// A flag not listed applies to every format.
var formatOnly = map[string][]generator.Format{
	"argocd-name":                     {generator.Operator, generator.OperatorJSON6902},
	"remove":                          {generator.Patch},
	"from":                            {generator.OperatorJSON6902},
	"kinds":                           nonKargo(),
	"actions":                         nonKargo(),
	"block-bypass-on-failed-analysis": nonKargo(),
	"argocd-version":                  nonKargo(),
	"human-gate":                      nonKargo(),
}

func nonKargo() []generator.Format { return generator.Formats() }

func checkFormatFlags(cmd *cobra.Command, format string) error {
	if format == "" {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(formatOnly)) {
		formats := formatOnly[name]
		if !cmd.Flags().Changed(name) || slices.Contains(formats, generator.Format(format)) {
			continue
		}
		names := make([]string, len(formats))
		for i, f := range formats {
			names[i] = string(f)
		}
		return usageError("--%s only applies to --format %s", name, strings.Join(names, ", "))
	}
	return nil
}

func kindList() string {
	var names []string
	for _, k := range lua.Kinds() {
		names = append(names, k.Kind)
	}
	return strings.Join(names, ",")
}

func runGenerate(o *Options, f *generateFlags) error {
	if f.format.String() == "" {
		return usageError("--format is required: one of %s", strings.Join(f.format.allowed, ", "))
	}
	format := generator.Format(f.format.String())
	if format.IsDir() && f.out == "" {
		return usageError("--format %s writes a folder: give it with --out DIR", format)
	}
	opts := generator.Options{
		Inconclusive: generator.InconclusiveSuspended,
		Namespace:    f.namespace,
		ArgoCDName:   f.argocdName,
		Version:      Version,
		// Always set, defaults included: the generator then refuses a switched-off guard that cannot apply.
		Actions:                     new(f.actions),
		BlockBypassOnFailedAnalysis: new(f.blockBypass),
		ArgoCDVersion:               f.version.p.String(),
		Remove:                      f.remove,
		// The headers' usage hints name the file written (FILE for standard output).
		Out: f.out,
	}
	if f.inconclusive.String() == "degraded" {
		opts.Inconclusive = generator.InconclusiveDegraded
	}
	if f.humanGate.String() == "healthy" {
		opts.HumanGate = generator.HumanGateHealthy
	}
	if f.from != "" {
		raw, err := readSource(f.from, o.In)
		if err != nil {
			return fmt.Errorf("--from %s: %w", f.from, pathError(err))
		}
		live, err := generator.ReadArgoCD(f.from, raw)
		if err != nil {
			return err
		}
		// The resource says which one it is; flags given anyway must agree (the generator checks).
		if !f.nameSet {
			opts.ArgoCDName, f.argocdName = live.Name(), live.Name()
		}
		if !f.namespaceSet {
			opts.Namespace, f.namespace = live.Namespace(), live.Namespace()
		}
		opts.From = live
	}
	if f.namespace == "" {
		return usageError("--namespace must not be empty")
	}
	if f.argocdName == "" {
		return usageError("--argocd-name must not be empty")
	}
	if len(f.kinds) > 0 {
		kinds, err := generator.ParseKinds(f.kinds)
		if err != nil {
			return usageError("--kinds: %v", err)
		}
		opts.Kinds = kinds
	}
	if err := opts.Validate(); err != nil {
		return usageError("%v", err)
	}
	files, err := generator.Generate(format, opts)
	if err != nil {
		return err
	}
	switch {
	case f.out == "":
		_, err = o.Out.Write(files[0].Data)
		return err
	case format.IsDir():
		if err := generator.WriteDir(f.out, files); err != nil {
			return err
		}
	default:
		if err := generator.WriteFile(f.out, files[0].Data); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.ErrOut, "wrote %s (%s)\n", f.out, format)
	return nil
}

// fileAsArgument refuses arguments of a verb that reads -f, pointing `health rollout.yaml` at
// -f rollout.yaml, as formatAsArgument does for generate.
func fileAsArgument(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	a := args[0]
	if _, err := os.Stat(a); err == nil || a == "-" || strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") || strings.HasSuffix(a, ".json") {
		return usageError("unknown command %q for %q: did you mean -f %s?", a, cmd.CommandPath(), a)
	}
	return usageError("unknown command %q for %q: %s takes no arguments; give the input with -f FILE", a, cmd.CommandPath(), cmd.Name())
}
