package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name, stamped string
		info          *debug.BuildInfo
		want          string
	}{
		{"make dist stamp wins", "v1.2.0-3-gabcdef0", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0-3-gabcdef0"},
		{"go install @v1.2.0", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/analysis-health/analysis-health", Version: "v1.2.0"}}, "v1.2.0"},
		{"go build in a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201203825-525def7abcde+dirty"}}, "v0.0.0-20261201203825-525def7abcde+dirty"},
		{"go build without VCS", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "", nil, "dev"},
	} {
		if got := resolve(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
