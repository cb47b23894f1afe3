package verify

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/lint"
)

// TestTypesMatchInternal: verify's Profile constants and Role numbers are the engine's and the linter's,
// since they are converted by value at the boundary.
func TestTypesMatchInternal(t *testing.T) {
	for _, tc := range []struct {
		ours   Profile
		engine engine.Profile
	}{{V214, engine.V214}, {V32, engine.V32}, {V36, engine.V36}} {
		if string(tc.ours) != string(tc.engine) {
			t.Errorf("verify profile %q, engine profile %q", tc.ours, tc.engine)
		}
		if p, err := ParseProfile(string(tc.engine)); err != nil || p != tc.ours {
			t.Errorf("ParseProfile(%q) = %q, %v", tc.engine, p, err)
		}
	}
	if got := len(engine.Profiles()); got != 3 {
		t.Errorf("the engine has %d profiles; verify names 3", got)
	}
	for _, tc := range []struct {
		ours Role
		lint lint.Role
	}{{RoleHealth, lint.Health}, {RoleDiscovery, lint.Discovery}, {RoleAction, lint.Action}} {
		if tc.ours.lintRole() != tc.lint || tc.ours.String() != tc.lint.String() {
			t.Errorf("role %v is lint's %v", tc.ours, tc.lint)
		}
	}
	if s := Role(7).String(); s != "Role(7)" {
		t.Errorf("Role(7) = %q", s)
	}
}
