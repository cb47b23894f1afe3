package cli

import (
	"text/template"

	"github.com/spf13/cobra"
)

func init() { verbs = append(verbs, newVersionCommand) }

// newVersionCommand is `analysis-health version`, for those who type the verb rather than the flag: it
// prints exactly what --version prints, through cobra's own version template, so the two cannot differ.
func newVersionCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this build (the same as --version)",
		Long: `version prints the version of this build, exactly as --version does: the release make dist
stamped, else the module version go install recorded, else dev.`,
		Example: `  analysis-health version`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("version takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The template uses only text/template's builtins (cobra's default, which this tree keeps).
			root := cmd.Root()
			t, err := template.New("version").Parse(root.VersionTemplate())
			if err != nil {
				return err
			}
			return t.Execute(o.Out, root)
		},
	}
}
