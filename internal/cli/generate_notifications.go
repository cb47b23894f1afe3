package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/analysis-health/analysis-health/generator"
)

// runGenerateNotifications is `generate --format notifications`: the folder of generator.Notifications,
// with --inconclusive (degraded: notify an inconclusive analysis too) and --namespace (Argo CD's, in the
// usage hints); every other option of generate is refused by checkFormatFlags and its kin.
func runGenerateNotifications(cmd *cobra.Command, o *Options, f *generateFlags) error {
	if f.out == "" {
		return usageError("--format notifications writes a folder: give it with --out DIR")
	}
	if f.namespace == "" {
		return usageError("--namespace must not be empty")
	}
	opts := generator.NotificationsOptions{Inconclusive: generator.InconclusiveSuspended, Namespace: f.namespace, Version: Version}
	if f.inconclusive.String() == "degraded" {
		opts.Inconclusive = generator.InconclusiveDegraded
	}
	if err := opts.Validate(); err != nil {
		return usageError("%v", err)
	}
	files, err := generator.GenerateNotifications(opts)
	if err != nil {
		return err
	}
	if err := generator.WriteDir(f.out, files); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "wrote %s (%s)\n", f.out, generator.Notifications)
	return nil
}
