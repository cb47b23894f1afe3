package engine

import (
	"strings"
	"testing"
)

func TestParseProfile(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Profile
	}{
		{"v2.14", V214}, {"2.14", V214}, {"v2", V214}, {"V2", V214}, {"2", V214},
		{"v3.2", V32}, {"3.2", V32}, {"v3.0", V32}, {"v3.5", V32},
		{"v3.6", V36}, {"3.6", V36}, {"v3", V36}, {"3", V36}, {" v3.6 ", V36}, {"v3.6.1", V36}, {"v2.14.21", V214}, {"3.5.7", V32},
	} {
		got, err := ParseProfile(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "v4", "v3.7", "v2.13", "latest", "vv3", "v3.6.x", "v3.6.1.2", "v3..6"} {
		_, err := ParseProfile(bad)
		if err == nil || !strings.Contains(err.Error(), "v2.14, v3.2, v3.6") {
			t.Errorf("ParseProfile(%q): want an error listing the valid values, got %v", bad, err)
		}
	}
}

func TestProfileOrder(t *testing.T) {
	var zero Profile
	if zero.String() != string(Default) || Default != V36 || !zero.AtLeast(V36) {
		t.Fatalf("the empty profile must be the newest, got %s", zero)
	}
	if V214.AtLeast(V32) || !V32.AtLeast(V214) || V32.AtLeast(V36) || !V36.AtLeast(V32) {
		t.Fatal("profiles are not ordered by release")
	}
	ps := Profiles()
	for i := 1; i < len(ps); i++ {
		if !ps[i].AtLeast(ps[i-1]) || ps[i-1].AtLeast(ps[i]) {
			t.Fatalf("Profiles() not oldest first: %v", ps)
		}
	}
}
