package lua_test

import (
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// Every bundled health_test.yaml case, through the engine under both Argo CD profiles.
func TestBundledSuites(t *testing.T) {
	for _, profile := range engine.Profiles() {
		rep, err := verify.Runner{Engine: verify.Engine{Profile: verify.Profile(profile)}}.Tree(lua.FS, ".")
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range rep.Results {
			t.Run(string(profile)+"/"+res.Suite+"/"+res.Case, func(t *testing.T) {
				if !res.Passed() {
					t.Error(res.Failure)
				}
			})
		}
	}
}
