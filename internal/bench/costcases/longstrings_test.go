package costcases

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/analysis-health/analysis-health/generator"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

func TestEmptyLongStrings(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		removed         int
	}{
		{"none", `return {status="Healthy"}`, `return {status="Healthy"}`, 0},
		{"chunk", "return loadstring([[\nreturn 1\n]])()", "return loadstring([[]])()", 10},
		{"levels", "local a = [==[x]]y]==] .. [[z]]", "local a = [==[]==] .. [[]]", 5},
		{"nested levels kept apart", "f([=[ [[inner]] ]=])", "f([=[]=])", 11},
		{"bracket in a quoted string", `local s = "[[" .. '[[' return s`, `local s = "[[" .. '[[' return s`, 0},
		{"escaped quote", `local s = "\"[[" return [[x]]`, `local s = "\"[[" return [[]]`, 1},
		{"line comment", "-- [[not a string\nreturn [[ab]]", "-- [[not a string\nreturn [[]]", 2},
		{"block comment", "--[[ [[x]] ]] return [[ab]]", "--[[ [[x]] ]] return [[]]", 2},
		{"index is not a long string", "local t = {1} return t[1] + t[ 1 ]", "local t = {1} return t[1] + t[ 1 ]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, removed := EmptyLongStrings(tc.src)
			if got != tc.want || removed != tc.removed {
				t.Fatalf("EmptyLongStrings(%q) = %q, %d; want %q, %d", tc.src, got, removed, tc.want, tc.removed)
			}
			if len(tc.src)-len(got) != removed {
				t.Fatalf("removed %d, but the length fell by %d", removed, len(tc.src)-len(got))
			}
			// The result still parses, as the source does.
			L := lua.NewState()
			defer L.Close()
			if _, err := L.LoadString(tc.src); err == nil {
				if _, err := L.LoadString(got); err != nil {
					t.Fatalf("result does not parse: %v", err)
				}
			}
		})
	}
}

func TestEmptyLongStringsOnOurForms(t *testing.T) {
	for _, k := range []string{"Rollout", "AnalysisRun", "Experiment"} {
		src, err := generator.Script(ahlua.Kind{Group: "argoproj.io", Kind: k}, generator.Options{ArgoCDVersion: "v2.14"})
		if err != nil {
			t.Fatal(err)
		}
		got, removed := EmptyLongStrings(src)
		if _, again := EmptyLongStrings(got); removed == 0 || again != 0 || !strings.Contains(got, "loadstring(") {
			t.Fatalf("%s: %d bytes emptied, %d left", k, removed, again)
		}
		L := lua.NewState()
		if _, err := L.LoadString(got); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		L.Close()
	}
}
