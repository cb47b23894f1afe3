package verify

import (
	"fmt"
	"time"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/lint"
	"github.com/analysis-health/analysis-health/verify/result"
)

// The types of this file are the package's vocabulary: every exported signature of verify uses them (or
// standard types), never a type of an internal package, which a user's module could not name
// (TestAPINamesNoInternalPackage). They are converted to the engine's and the linter's at the boundary.

// Profile is the Argo CD release line whose Lua VM a run reproduces: V214, V32 or V36 (ParseProfile reads
// the spellings the CLI's --argocd-version takes). The empty Profile is the newest, V36.
type Profile string

const (
	// V214 is Argo CD v2.14: tracebacks in runtime errors, no action parameters, a map cleared to {} keeps
	// its old value.
	V214 Profile = "v2.14"
	// V32 is Argo CD v3.0 to v3.5.
	V32 Profile = "v3.2"
	// V36 is Argo CD v3.6: a script returning nil gives no health, and scripts run for objects being
	// deleted.
	V36 Profile = "v3.6"
)

// ParseProfile reads an Argo CD version: v2.14, v3.2, v3.6, the aliases v2 and v3 (v3.6), any minor
// release a profile stands for (v3.0–v3.5 are v3.2), with or without the "v" and a patch number.
func ParseProfile(s string) (Profile, error) {
	p, err := engine.ParseProfile(s)
	return Profile(p), err
}

// Engine is the sandbox every script runs in, like Argo CD's lua.VM: each evaluation gets a fresh Lua
// state with the libraries Argo CD gives it.
type Engine struct {
	// Profile is the Argo CD release line to reproduce; empty means V36.
	Profile Profile
	// OpenLibs opens gopher-lua's full standard library for health scripts, as Argo CD does for its
	// built-in scripts and for argocd-cm with resource.customizations.useOpenLibs.<group>_<Kind>: "true".
	// Discovery and action scripts never get it, in Argo CD or here.
	OpenLibs bool
	// Timeout is the per-evaluation deadline; zero is Argo CD's 1 s.
	Timeout time.Duration
}

// vm is the engine e describes.
func (e Engine) vm() engine.Engine {
	return engine.Engine{Profile: engine.Profile(e.Profile), OpenLibs: e.OpenLibs, Timeout: e.Timeout}
}

// Health is a health script's result as Argo CD's suites spell it (status, message, deletionMessage).
type Health = result.Health

// Action is one entry of a discovery result, Argo CD's ResourceAction.
type Action = result.Action

// ActionParam is one parameter of a discovered action, Argo CD's ResourceActionParam.
type ActionParam = result.ActionParam

// Role is the part a script plays in Argo CD: a health script, an actions' discovery script or an action.
type Role int

const (
	RoleHealth Role = iota
	RoleDiscovery
	RoleAction
)

// String is "health", "discovery" or "action".
func (r Role) String() string {
	switch r {
	case RoleHealth, RoleDiscovery, RoleAction:
		return lint.Role(r).String()
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// lintRole is r for the linter, whose roles are numbered alike (TestRolesMatchLint).
func (r Role) lintRole() lint.Role { return lint.Role(r) }

// LintFinding is one problem the sandbox lint found, at a line of a script.
type LintFinding struct {
	// Path is the script's path in the tree.
	Path string
	Line int
	// Rule is the lint rule: stdlib, string-method, global, status or kind (docs/verify.md).
	Rule    string
	Message string
}

// String is "path:line: rule: message".
func (f LintFinding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.Path, f.Line, f.Rule, f.Message)
}
