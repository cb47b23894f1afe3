package builtin_test

import (
	"slices"
	"testing"

	"github.com/analysis-health/analysis-health/internal/install/argocdcm/builtin"
)

func TestIndex(t *testing.T) {
	for _, tc := range []struct {
		release, key, health string
		wildcard             bool
		actions              []string
	}{
		{"v2.14", "argoproj.io/Rollout", "argoproj.io/Rollout/health.lua", false, []string{"abort", "promote-full", "restart", "resume", "retry"}},
		{"v3.6", "argoproj.io/Rollout", "argoproj.io/Rollout/health.lua", false, []string{"abort", "pause", "promote-full", "restart", "resume", "retry", "skip-current-step"}},
		{"v2.14", "s3.aws.upbound.io/Bucket", "", false, nil},
		{"v3.2", "s3.aws.upbound.io/Bucket", "_.upbound.io/_/health.lua", true, nil},
		{"v3.2", "apps/Deployment", "", false, []string{"pause", "restart", "resume", "scale"}},
	} {
		ix, err := builtin.For(tc.release)
		if err != nil {
			t.Fatal(err)
		}
		p, wildcard, ok := ix.Health(tc.key)
		if p != tc.health || wildcard != tc.wildcard || ok != (tc.health != "") {
			t.Errorf("%s %s: health %q %v %v", tc.release, tc.key, p, wildcard, ok)
		}
		if got := ix.Actions(tc.key); !slices.Equal(got, tc.actions) {
			t.Errorf("%s %s: actions %v, want %v", tc.release, tc.key, got, tc.actions)
		}
		if _, ok := ix.Discovery(tc.key); ok != (len(tc.actions) > 0) {
			t.Errorf("%s %s: discovery %v", tc.release, tc.key, ok)
		}
	}
	if _, err := builtin.For("v9"); err == nil {
		t.Error("v9 has a list")
	}
}
