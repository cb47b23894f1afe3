package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/analysis-health/analysis-health/internal/script/engine"
)

// profileValue is --argocd-version: any spelling engine.ParseProfile accepts, kept as the canonical profile,
// so a bad value fails at parse time (exit 2) with the list of valid values.
type profileValue struct{ p engine.Profile }

func (v *profileValue) String() string { return v.p.String() }
func (v *profileValue) Type() string   { return "string" }
func (v *profileValue) Set(s string) error {
	p, err := engine.ParseProfile(s)
	if err != nil {
		return err
	}
	v.p = p
	return nil
}

var _ pflag.Value = (*profileValue)(nil)

// addVersionFlag registers --argocd-version on cmd, defaulting to the newest profile; what says what the
// release line decides for this verb. The values are engine.ProfileNames, the list ParseProfile's error
// gives too: defined once, for every verb.
func addVersionFlag(cmd *cobra.Command, v *profileValue, what string) {
	v.p = engine.Default
	cmd.Flags().Var(v, "argocd-version", what+", one of "+engine.ProfileNames())
}
