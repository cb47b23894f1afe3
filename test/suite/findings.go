package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/builtinscripts"
	"github.com/analysis-health/analysis-health/internal/docblock"
	"github.com/analysis-health/analysis-health/verify"
)

// FuzzFindingClasses: every kind of fuzz finding, produced by the scripts of verify/testdata/classes, is
// what the release's own code does with the same object when the scripts come from argocd-cm: the
// controller's GetResourceHealth returns the same error (or invalid, Unknown, empty health), the API
// server's discovery and action code the same error. The built-in run (BuiltinScripts) covers the
// classes Argo CD's own scripts exhibit; this covers all of them, timeouts included.
func FuzzFindingClasses(t *testing.T, r Release) {
	fsys := os.DirFS(RepoFile(t, "verify/testdata/classes"))
	rep, err := verify.Fuzz(fsys, verify.FuzzOptions{Engine: verify.Engine{Profile: verify.Profile(r.Profile()), Timeout: 3 * time.Second}, N: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := verify.Scripts(fsys)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]verify.ScriptFile{}
	for _, s := range scripts {
		byPath[s.Path] = s
	}
	seen := map[verify.FindingKind]bool{}
	for _, f := range rep.Findings() {
		seen[f.Kind] = true
		kind, msg := builtinscripts.Replay(argoCMEvaluator(t, r, fsys, scripts, byPath[f.Script]), f)
		if kind != f.Kind || msg != f.Message {
			t.Errorf("%s: ours %s %q, Argo CD %s %q", f.Script, f.Kind, f.Message, kind, msg)
		}
	}
	for _, k := range verify.FindingKinds {
		if !seen[k] {
			t.Errorf("no %s finding to confirm", k)
		}
	}
}

// argoCMEvaluator runs a script as argocd-cm would hold it for its kind: the health script under
// resource.customizations.health (no open libraries), discovery and every action of the kind under
// resource.customizations.actions.
func argoCMEvaluator(t *testing.T, r Release, fsys fs.FS, scripts []verify.ScriptFile, s verify.ScriptFile) verify.Evaluator {
	key := s.Key()
	override := Override{}
	actions := map[string]any{}
	var defs []map[string]string
	for _, o := range scripts {
		switch {
		case o.Key() != key:
		case o.Role == verify.RoleHealth:
			override.HealthLua = o.Source
		case o.Role == verify.RoleDiscovery:
			actions["discovery.lua"] = o.Source
		default:
			defs = append(defs, map[string]string{"name": o.Action, "action.lua": o.Source})
		}
	}
	if len(actions) > 0 {
		actions["definitions"] = defs
		b, err := yaml.Marshal(actions)
		if err != nil {
			t.Fatal(err)
		}
		override.Actions = string(b)
	}
	argo := r.Overrides(map[string]Override{key: override})
	if s.Role == verify.RoleHealth {
		expectUnknown, expectEmpty := verify.HealthExpectations(fsys, s)
		return healthEvaluator(r, argo, expectUnknown, expectEmpty, nil)
	}
	return actionEvaluator(t, argo, s, nil, false)
}

// healthEvaluator classifies the controller's health of an object, after resolved (if not nil) has
// checked that Argo CD resolves the script under test for it.
func healthEvaluator(r Release, argo Settings, expectUnknown, expectEmpty bool, resolved func(map[string]any) bool) verify.Evaluator {
	return func(o map[string]any) (verify.FindingKind, string) {
		if resolved != nil && !resolved(o) {
			return "not-resolved", "Argo CD resolves another script, or no open libraries"
		}
		h, err := argo.ResourceHealth(o)
		if err != nil {
			if inner := errors.Unwrap(err); inner != nil && r.Capabilities().WrapsHealthErrors {
				err = inner // gitops-engine wraps the controller's error; its cause is compared
			}
			return verify.Classify(err, false)
		}
		if h == nil {
			return "no-health", ""
		}
		return verify.ClassifyHealth(h.Status, h.Message, expectUnknown, expectEmpty)
	}
}

// actionEvaluator classifies the API server's discovery or action (s's role) on an object; with
// resolvedOnly, a script Argo CD does not resolve for the object is "not-resolved".
func actionEvaluator(t *testing.T, argo Settings, s verify.ScriptFile, params map[string]string, resolvedOnly bool) verify.Evaluator {
	if s.Role == verify.RoleDiscovery {
		return func(o map[string]any) (verify.FindingKind, string) {
			scripts, err := argo.DiscoveryScripts(o)
			if resolvedOnly && (err != nil || len(scripts) != 1 || scripts[0] != s.Source) {
				return "not-resolved", "Argo CD resolves other discovery scripts"
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := argo.Discover(o, scripts); err != nil {
				return verify.Classify(err, false)
			}
			return "", ""
		}
	}
	return func(o map[string]any) (verify.FindingKind, string) {
		script, err := argo.ActionScript(o, s.Action)
		if resolvedOnly && (err != nil || script != s.Source) {
			return "not-resolved", "Argo CD resolves another action script"
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := argo.RunAction(o, script, params); err != nil {
			return verify.Classify(err, true)
		}
		return "", ""
	}
}

// BuiltinScripts runs verify --fuzz --lint over every built-in script of the release (its embedded
// resource_customizations tree, wildcard folders included), every finding replayed through the release's
// own code as it reaches each script: the controller's health (the script resolved from the object's
// group and kind, with the built-ins' open libraries) and the API server's discovery and actions (no open
// libraries; the suite's parameters where the release has them). where names the module for the
// document; the result is the release's block of docs/argocd-builtin-scripts.md.
func BuiltinScripts(t *testing.T, r Release, where string, minScripts int) {
	argo := Defaults(r)
	e := verify.Engine{Profile: verify.Profile(r.Profile())}
	res := builtinscripts.Execute(t, builtinscripts.Run{
		Version: r.Version(),
		Test:    fmt.Sprintf("`%s` in %s", t.Name(), where),
		FS:      r.Builtins(),
		Engine:  e,
		ArgoCD: func(s verify.ScriptFile) verify.Evaluator {
			if s.Role == verify.RoleHealth {
				expectUnknown, expectEmpty := verify.HealthExpectations(r.Builtins(), s)
				return healthEvaluator(r, argo, expectUnknown, expectEmpty, func(o map[string]any) bool {
					script, open, err := argo.HealthScript(o)
					return err == nil && script == s.Source && open
				})
			}
			var params map[string]string
			if s.Role != verify.RoleDiscovery && r.Capabilities().ActionParams {
				params = verify.ActionParams(r.Builtins(), s, e)
			}
			return actionEvaluator(t, argo, s, params, true)
		},
	})
	if len(res.Scripts) < minScripts || res.Fuzz.Cases() < 5000 {
		t.Errorf("only %d scripts and %d evaluations: the tree was not found whole", len(res.Scripts), res.Fuzz.Cases())
	}
	// The release's test is the block's owner, so each module rewrites only its own release's block.
	docblock.Check(t, RepoFile(t, "docs/argocd-builtin-scripts.md"), docblock.Owner(t), []byte("\n"+res.Markdown()+"\n"))
}
