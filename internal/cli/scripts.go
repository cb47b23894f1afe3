package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm"
	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
	"github.com/analysis-health/analysis-health/internal/install/manifest"
	"github.com/analysis-health/analysis-health/internal/script/engine"
)

func init() { verbs = append(verbs, newScriptsCommand) }

type scriptsFlags struct {
	configMap string
	files     []string
	version   profileValue
	output    *enumValue
	strict    bool
}

func newScriptsCommand(o *Options) *cobra.Command {
	f := &scriptsFlags{output: newEnum("table", "table", "json", "yaml")}
	cmd := &cobra.Command{
		Use:   "scripts --argocd-cm FILE",
		Short: "Show the health script and actions Argo CD uses per kind, and keys that do nothing",
		Long: `scripts reads an argocd-cm ConfigMap and lists, for every group/kind it customizes (and every
built-in kind a wildcard key reaches), the health script Argo CD would run — argocd-cm exact key,
argocd-cm wildcard, built-in script, built-in wildcard folder (v3), gitops-engine's Go check, or
none — and the discovery scripts and actions its API server would use, resolved as Argo CD's
util/lua GetHealthScript, GetResourceActionDiscovery and GetResourceAction do for the chosen
release.

It then warns about keys that match nothing or are shadowed: useOpenLibs without a health script,
lower-case or mis-cased kinds, wildcard actions (never applied), wildcards replacing built-in
scripts, shadowed by exact keys or overlapping each other, legacy entries overwritten by split keys,
actions that hide or replace built-in ones. With -f, the objects you deploy: their kinds are listed
too, and keys matching none of them are reported; the kinds controllers make from them (a Rollout's
AnalysisRuns and Experiments), which rendered manifests never hold, count as present. --strict
exits 1 on any warning.`,
		Example: `  analysis-health scripts --argocd-cm argocd-cm.yaml
  analysis-health scripts --argocd-cm argocd-cm.yaml -f manifests/ --argocd-version v2.14 --strict`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScripts(o, f)
		},
	}
	cmd.Flags().StringVar(&f.configMap, "argocd-cm", "", "the argocd-cm ConfigMap (YAML or JSON), or the merge patch generate --format patch writes")
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, "objects you deploy (file, folder or -); their kinds are resolved too")
	addVersionFlag(cmd, &f.version, "Argo CD release whose resolution and built-in scripts to use")
	cmd.Flags().VarP(f.output, "output", "o", "table|json|yaml")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "exit 1 when there is any warning")
	return cmd
}

type scriptsReport struct {
	ArgoCD   string                `json:"argocdVersion"`
	Kinds    []argocdcm.Resolution `json:"kinds"`
	Warnings []argocdcm.Warning    `json:"warnings"`
}

func runScripts(o *Options, f *scriptsFlags) error {
	if f.configMap == "" {
		return usageError("--argocd-cm is required")
	}
	data, err := readArgoCDCM(f.configMap, o.In)
	if err != nil {
		return err
	}
	ov, err := argocdcm.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", f.configMap, err)
	}
	ix, err := builtin.For(f.version.p.String())
	if err != nil {
		return err
	}
	var present map[string]bool
	if len(f.files) > 0 {
		deployed, err := manifest.Read(f.files, o.In)
		if err != nil {
			return err
		}
		if len(deployed) == 0 {
			return noObjects(f.files)
		}
		present = map[string]bool{}
		for _, d := range deployed {
			present[argocdcm.ConfigMapKey(d.Group(), d.Kind())] = true
		}
	}
	warnings, err := argocdcm.Warnings(data, ix, present)
	if err != nil {
		return fmt.Errorf("%s: %w", f.configMap, err)
	}

	keys := ov.Kinds(ix)
	for k := range present {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rep := scriptsReport{ArgoCD: f.version.p.String(), Warnings: warnings}
	for i, key := range keys {
		if i > 0 && keys[i-1] == key {
			continue
		}
		group, kind := argocdcm.SplitKey(key)
		r, err := ov.Resolve(group, kind, ix, engine.GoHealthCheck(group, kind))
		if err != nil {
			return fmt.Errorf("%s: %w", f.configMap, err)
		}
		rep.Kinds = append(rep.Kinds, r)
	}

	if f.output.String() == "json" || f.output.String() == "yaml" {
		enc := func(w io.Writer) error {
			e := json.NewEncoder(w)
			e.SetIndent("", "  ")
			return e.Encode(rep)
		}
		if f.output.String() == "yaml" {
			if err := asYAML(o.Out, enc); err != nil {
				return err
			}
		} else if err := enc(o.Out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tHEALTH\tACTIONS")
		for _, r := range rep.Kinds {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Key, describeHealth(r.Health), describeActions(r.Actions))
		}
		tw.Flush()
		if len(rep.Kinds) == 0 {
			fmt.Fprintln(o.Out, "(no customized kinds)")
		}
		for _, w := range warnings {
			fmt.Fprintln(o.Out, "WARN "+w.String())
		}
	}
	if f.strict && len(warnings) > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

func describeHealth(h argocdcm.HealthResolution) string {
	var s string
	switch h.Source {
	case argocdcm.ExactKey:
		s = "argocd-cm " + h.Key
	case argocdcm.Wildcard:
		s = fmt.Sprintf("argocd-cm wildcard %q", h.Key)
		if len(h.Ambiguous) > 0 {
			s += fmt.Sprintf(" (or %s: ambiguous)", strings.Join(h.Ambiguous, ", "))
		}
	case argocdcm.Builtin, argocdcm.BuiltinWildcard:
		s = string(h.Source) + " " + h.Key
	default:
		return string(h.Source)
	}
	if h.Source == argocdcm.ExactKey || h.Source == argocdcm.Wildcard {
		if h.OpenLibs {
			s += " (open libraries)"
		} else {
			s += " (no open libraries)"
		}
	}
	return s
}

func describeActions(a argocdcm.ActionsResolution) string {
	if len(a.Discovery) == 0 && len(a.Custom) == 0 && len(a.Builtin) == 0 {
		return "none"
	}
	var discovery []string
	for _, d := range a.Discovery {
		discovery = append(discovery, string(d.Source))
	}
	if len(discovery) == 0 {
		discovery = []string{"none"}
	}
	parts := []string{"discovery: " + strings.Join(discovery, " + ")}
	if len(a.Custom) > 0 {
		parts = append(parts, "argocd-cm: "+strings.Join(a.Custom, ", "))
	}
	if len(a.Builtin) > 0 {
		b := "built-in: " + strings.Join(a.Builtin, ", ")
		if a.BuiltinHidden {
			b += " (hidden from the menu)"
		}
		parts = append(parts, b)
	}
	return strings.Join(parts, "; ")
}
