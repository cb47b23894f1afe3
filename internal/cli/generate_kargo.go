package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/plugin/verdict"
)

// kargoFlags are the flags of `generate --format kargo` (generator.KargoOptions); --namespace is the
// generate command's own and means the Rollout's namespace here.
type kargoFlags struct {
	project, rollout                string
	pluginLocation, pluginSHA256    string
	pluginFile                      string
	pluginImage                     string
	kubeconfigSecret, kubeconfigKey string
	rolloutsServiceAccount          string
	imageRepo                       string
	noAnalysis                      *enumValue
	rolloutsValues                  []string
	names                           []string
}

func addKargoFlags(fs *pflag.FlagSet, k *kargoFlags) {
	for _, f := range []struct {
		dst        *string
		name, help string
	}{
		{&k.project, "project", "--format kargo: the Kargo Project namespace to put the AnalysisTemplate in (default: a ClusterAnalysisTemplate); with --namespace, the chart values let its runs read the Rollout there (the plugin's --allow-namespace-pair, docs/security.md)"},
		{&k.rollout, "rollout", "--format kargo: the Rollout whose analysis the Stage verification shows (with --namespace; default: the Stage's vars)"},
		{&k.pluginLocation, "plugin-location", "--format kargo: where the Rollouts controller gets the plugin binary, https://… or file:///… (required)"},
		{&k.pluginSHA256, "plugin-sha256", "--format kargo: the binary's hex SHA-256 (required for an http(s) location, or give --plugin-file)"},
		{&k.pluginImage, "plugin-image", "--format kargo: an image holding the plugin at " + generator.PluginImageBinary + ": the values copy it to the file:// location with an init container"},
		{&k.pluginFile, "plugin-file", "--format kargo: the plugin binary, to compute its SHA-256"},
		{&k.kubeconfigSecret, "kubeconfig-secret", "--format kargo: Secret in the Project namespace with a kubeconfig for the Rollout's cluster (multi-cluster: one https:// cluster with certificate-authority-data and a bound token, docs/security.md)"},
		{&k.kubeconfigKey, "kubeconfig-key", "--format kargo: key of --kubeconfig-secret (default " + generator.DefaultKargoKubeconfigKey + ")"},
		{&k.imageRepo, "image-repo", "--format kargo: the Freight's image repository: the Stage passes the Freight's image, and the plugin judges the revision that runs it"},
		{&k.rolloutsServiceAccount, "rollouts-service-account", "--format kargo: <namespace>/<name> of the Rollouts controller's ServiceAccount (default " + generator.DefaultRolloutsServiceAccount + ")"},
	} {
		fs.StringVar(f.dst, f.name, "", f.help)
		k.names = append(k.names, f.name)
	}
	k.noAnalysis = newEnum(verdict.NoAnalysisSuccessful, verdict.NoAnalysisPolicies...)
	fs.Var(k.noAnalysis, "no-analysis", "--format kargo: a revision promoted without analysis (first deployment, none in the strategy): "+
		strings.Join(verdict.NoAnalysisPolicies, ", "))
	k.names = append(k.names, "no-analysis")
	fs.StringArrayVar(&k.rolloutsValues, "rollouts-values", nil, "--format kargo: the argo-rollouts release's values now (helm get values argo-rollouts -n argo-rollouts -o yaml; repeat in helm's -f order; - reads stdin), "+
		"whose lists the chart values keep beside ours; "+generator.RolloutsValuesNone+" for a release without values of its own (required)")
	k.names = append(k.names, "rollouts-values")
}

// rolloutsValuesRequired is why --format kargo asks for --rollouts-values instead of defaulting to none:
// Helm replaces a list by the later file's, so values written without the release's would silently drop
// the platform's other plugins, init containers, volumes and mounts, and another Project's namespace
// pair; other teams' AnalysisRuns would then end in Error. A refusal costs one flag; a default costs them.
const rolloutsValuesRequired = "--format kargo needs --rollouts-values: the argo-rollouts release's values now, as " +
	"helm get values argo-rollouts -n argo-rollouts -o yaml prints them (a file, or - for stdin), since Helm replaces the chart's lists " +
	"by the generated ones; or --rollouts-values " + generator.RolloutsValuesNone + " for a release without values of its own (docs/kargo.md)"

// readRolloutsValues reads --rollouts-values: nil for none, else each file (- is stdin, once).
func readRolloutsValues(o *Options, names []string) ([]generator.File, error) {
	if len(names) == 0 {
		return nil, usageError("%s", rolloutsValuesRequired)
	}
	if slices.Contains(names, generator.RolloutsValuesNone) {
		if len(names) > 1 {
			return nil, usageError("--rollouts-values %s is a release without values of its own: give no other --rollouts-values (./%s for a file named so)", generator.RolloutsValuesNone, generator.RolloutsValuesNone)
		}
		return nil, nil
	}
	files := []generator.File{}
	stdin := false
	for _, n := range names {
		var data []byte
		var err error
		if n == "-" {
			if stdin {
				return nil, usageError("--rollouts-values - (stdin) given twice")
			}
			stdin = true
			data, err = io.ReadAll(o.In)
		} else {
			data, err = os.ReadFile(n)
		}
		if err != nil {
			return nil, usageError("--rollouts-values %s: %v", n, err)
		}
		files = append(files, generator.File{Path: n, Data: data})
	}
	return files, nil
}

// checkKargoFlags refuses kargo flags with another format: the user expects them to do something.
func checkKargoFlags(cmd *cobra.Command, k *kargoFlags, format string) error {
	if format == string(generator.Kargo) {
		return nil
	}
	for _, n := range k.names {
		if cmd.Flags().Changed(n) {
			return usageError("--%s only applies to --format kargo", n)
		}
	}
	return nil
}

func runGenerateKargo(cmd *cobra.Command, o *Options, f *generateFlags) error {
	k := f.kargo
	if f.out == "" {
		return usageError("--format kargo writes a folder: give it with --out DIR")
	}
	if k.pluginLocation == "" {
		return usageError("--format kargo needs --plugin-location (https://… of the released binary, or file:///… inside the Rollouts controller's container)")
	}
	if k.pluginFile != "" && k.pluginSHA256 != "" {
		return usageError("give --plugin-sha256 or --plugin-file, not both")
	}
	opts := generator.KargoOptions{
		Project: k.project, Rollout: k.rollout, PluginLocation: k.pluginLocation, PluginImage: k.pluginImage, PluginSHA256: k.pluginSHA256,
		KubeconfigSecret: k.kubeconfigSecret, KubeconfigKey: k.kubeconfigKey, RolloutsServiceAccount: k.rolloutsServiceAccount,
		ImageRepo: k.imageRepo, NoAnalysis: k.noAnalysis.String(), Version: Version,
	}
	if f.inconclusive.String() == "degraded" {
		opts.Inconclusive = generator.InconclusiveDegraded
	}
	if cmd.Flags().Changed("namespace") {
		opts.Namespace = f.namespace
	}
	if (opts.Rollout == "") != (opts.Namespace == "") {
		return usageError("--rollout and --namespace go together: give both, or neither (the Stage's vars then name the Rollout)")
	}
	values, err := readRolloutsValues(o, k.rolloutsValues)
	if err != nil {
		return err
	}
	opts.RolloutsValues = values
	if k.pluginFile != "" {
		bin, err := os.ReadFile(k.pluginFile)
		if err != nil {
			return fmt.Errorf("--plugin-file: %w", err)
		}
		if err := generator.CheckPluginBinary(bin); err != nil {
			return fmt.Errorf("--plugin-file %s: %w", k.pluginFile, err)
		}
		opts.PluginSHA256 = generator.PluginSHA256Of(bin)
	}
	if err := opts.Validate(); err != nil {
		return usageError("%v", err)
	}
	files, err := generator.GenerateKargo(opts)
	if err != nil {
		return err
	}
	if err := generator.WriteDir(f.out, files); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "wrote %s (%s)\n", f.out, generator.Kargo)
	return nil
}
