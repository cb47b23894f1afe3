package verify

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/analysis-health/analysis-health/engine"
	"github.com/analysis-health/analysis-health/lua"
)

func TestScratch3(t *testing.T) {
	for _, budget := range []int{1} {
		st := time.Now()
		b := os.DirFS(os.Getenv("BUILTIN"))
		rep, err := Fuzz(b, FuzzOptions{Engine: engine.Engine{Profile: engine.V2}, HealthOpenLibs: true, N: 20, Seed: 1, MinimizeBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("builtin", budget, len(rep.Scripts), rep.Cases(), len(rep.Findings()), time.Since(st))
	}
	st := time.Now()
	rep, _ := Fuzz(lua.FS, FuzzOptions{Engine: engine.Engine{Profile: engine.V2}, N: 5, Seed: 1, MinimizeBudget: 1})
	fmt.Println("bundled", rep.Cases(), len(rep.Findings()), time.Since(st))
	for _, s := range rep.Scripts {
		fmt.Println(s.Path, s.Seeds, s.Cases)
	}
}
