package engine

import (
	"fmt"
	"strings"
)

// Profile selects the Argo CD release line whose behaviour is reproduced where releases differ. Each
// profile is proven against one release in its own code (test/argocd-v2.14/, test/argocd-v3.2, test/argocd-v3.6);
// docs/argocd-versions.md says which releases each one stands for.
type Profile string

const (
	// V214 is Argo CD v2.14: runtime errors keep gopher-lua's stack traceback; actions take no
	// parameters and a map cleared to {} keeps its old value; a nil or {} health result is an empty
	// status; an object being deleted is Progressing "Pending deletion" before any script runs.
	V214 Profile = "v2.14"
	// V32 is Argo CD v3.0 to v3.5: tracebacks stripped, actionParams, cleared maps stay cleared; the
	// deletion short-circuit spares hooks that carry Argo CD's hook finalizer.
	V32 Profile = "v3.2"
	// V36 is Argo CD v3.6: a script returning nil gives no health (gitops-engine's Go checks apply),
	// and scripts run for objects being deleted; a result with a deletionMessage replaces
	// "Pending deletion". Script results are otherwise those of V32.
	V36 Profile = "v3.6"
)

// Default is the newest profile: what every verb assumes without --argocd-version, and what an Engine
// with an empty Profile runs.
const Default = V36

// Profiles lists the profiles oldest first.
func Profiles() []Profile { return []Profile{V214, V32, V36} }

// aliases maps every accepted spelling (lower case, without a leading "v") to its profile. A bare major
// version means its newest line: "3" is v3.6, as a user running "Argo CD 3" today runs the newest release.
// Minor versions name the profile that stands for them (v3.0–v3.5 behave as v3.2).
var aliases = map[string]Profile{
	"2": V214, "2.14": V214,
	"3": V36, "3.0": V32, "3.1": V32, "3.2": V32, "3.3": V32, "3.4": V32, "3.5": V32,
	"3.6": V36,
}

// ParseProfile accepts v2.14, v3.2, v3.6 and the aliases v2, v3 (the newest v3 line, v3.6) and any minor
// release a profile stands for (v3.0–v3.5 → v3.2), with or without the leading "v" and with or without a
// patch number (v3.6.1). Anything else is an error listing the valid values.
func ParseProfile(s string) (Profile, error) {
	key := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "v")
	if parts := strings.Split(key, "."); len(parts) == 3 && digits(parts[2]) {
		key = parts[0] + "." + parts[1]
	}
	if p, ok := aliases[key]; ok {
		return p, nil
	}
	return "", fmt.Errorf("unknown Argo CD version %q (valid: %s)", s, ProfileNames())
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ProfileNames is the list of valid --argocd-version values for usage messages.
func ProfileNames() string {
	return "v2.14, v3.2, v3.6 (aliases: v2 = v2.14, v3 = v3.6, v3.0–v3.5 = v3.2)"
}

// AtLeast reports whether p is the release line q or a newer one; the empty profile is Default.
func (p Profile) AtLeast(q Profile) bool { return p.rank() >= q.resolve().rank() }

func (p Profile) resolve() Profile {
	if p == "" {
		return Default
	}
	return p
}

func (p Profile) rank() int {
	switch p.resolve() {
	case V214:
		return 0
	case V32:
		return 1
	}
	return 2
}

// String is the profile's canonical name.
func (p Profile) String() string { return string(p.resolve()) }
