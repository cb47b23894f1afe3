package verify

import (
	"io/fs"

	"github.com/analysis-health/analysis-health/internal/script/lint"
)

// Lint checks every script of the tree against Argo CD's sandbox. healthOpenLibs says health scripts run
// with open libraries (built-ins, or argocd-cm with useOpenLibs); discovery and actions never do.
func Lint(fsys fs.FS, healthOpenLibs bool) ([]LintFinding, error) {
	scripts, err := Scripts(fsys)
	if err != nil {
		return nil, err
	}
	var out []LintFinding
	for _, s := range scripts {
		f, err := lint.Check(lint.Script{
			Path: s.Path, Source: s.Source, Role: s.Role.lintRole(), Kind: s.Kind,
			OpenLibs: s.Role == RoleHealth && healthOpenLibs,
		})
		if err != nil {
			return nil, SyntaxError(s.Path, s.Source, err)
		}
		for _, lf := range f {
			out = append(out, LintFinding{Path: lf.Path, Line: lf.Line, Rule: lf.Rule, Message: lf.Message})
		}
	}
	return out, nil
}
