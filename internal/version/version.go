// Package version names the release of analysis-health a binary was built from, for --version, the
// plugin's metadata and the header of every generated file.
package version

import "runtime/debug"

// stamped is set by `make dist` (internal/dist) with -ldflags "-X …/internal/version.stamped=$(git describe)".
// A linker -X only reaches a variable initialised to a constant, hence this one and String.
var stamped string

// String is the stamped version; else the main module's version from the build info, which is the tag
// for `go install …/cmd/analysis-health@vX` (and, since Go 1.24, a pseudo-version for a `go build` in a
// git checkout); else "dev".
func String() string {
	info, _ := debug.ReadBuildInfo()
	return resolve(stamped, info)
}

func resolve(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
