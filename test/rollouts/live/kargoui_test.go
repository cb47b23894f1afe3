package live

import (
	"testing"
	"time"
)

// TestMomentHumanize: the words of moment's English humanize with the thresholds Kargo's table passes
// ({ ss: 1 }), at each threshold's edges (momentjs.com/docs "Relative Time Thresholds"). TestLive's
// kargo-ui subtest holds the port to the page's own Duration cells.
func TestMomentHumanize(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "a few seconds"},
		{1400 * time.Millisecond, "a few seconds"},
		{1500 * time.Millisecond, "2 seconds"},
		{44 * time.Second, "44 seconds"},
		{45 * time.Second, "a minute"},
		{89 * time.Second, "a minute"},
		{90 * time.Second, "2 minutes"},
		{44 * time.Minute, "44 minutes"},
		{45 * time.Minute, "an hour"},
		{time.Hour + 7*time.Minute, "an hour"},
		{89 * time.Minute, "an hour"},
		{90 * time.Minute, "2 hours"},
		{21 * time.Hour, "21 hours"},
		{22 * time.Hour, "a day"},
		{35 * time.Hour, "a day"},
		{36 * time.Hour, "2 days"},
		{-90 * time.Second, "2 minutes"},
	} {
		if got := momentHumanize(tc.d); got != tc.want {
			t.Errorf("momentHumanize(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
