package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/generator"
)

// checkUpstreamFlags refuses --argocd-source with another format: the user expects it to do something.
func checkUpstreamFlags(cmd *cobra.Command, format string) error {
	if format != string(generator.Upstream) && cmd.Flags().Changed("argocd-source") {
		return usageError("--argocd-source only applies to --format upstream")
	}
	return nil
}

// runGenerateUpstream writes the files of a pull request to Argo CD: our health scripts as its built-ins,
// its own suites edited (generator.Upstream).
func runGenerateUpstream(o *Options, f *generateFlags) error {
	if f.out == "" {
		return usageError("--format upstream writes a folder: give it with --out DIR")
	}
	if f.argocdSource == "" {
		return usageError("--format upstream edits Argo CD's own test suites: give the Argo CD source tree (a checkout of github.com/argoproj/argo-cd) with --argocd-source DIR")
	}
	if st, err := os.Stat(filepath.Join(f.argocdSource, generator.UpstreamRoot)); err != nil || !st.IsDir() {
		return usageError("--argocd-source %s: no %s folder there; give the root of an Argo CD source tree", f.argocdSource, generator.UpstreamRoot)
	}
	files, err := generator.GenerateUpstream(generator.UpstreamOptions{
		Base:          os.DirFS(f.argocdSource),
		ArgoCDVersion: f.version.p.String(),
	})
	if err != nil {
		return fmt.Errorf("--argocd-source %s: %w", f.argocdSource, err)
	}
	if err := generator.WriteDir(f.out, files); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "wrote %s (%s): copy it over the root of %s\n", f.out, generator.Upstream, f.argocdSource)
	return nil
}
