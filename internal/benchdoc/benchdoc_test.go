package benchdoc

import (
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/golden"
)

// docs/performance.md is what the committed benchmark output renders to; `make bench` refreshes both
// (go test ./internal/benchdoc/ -update rewrites the page from the committed output).
func TestPerformanceDoc(t *testing.T) {
	doc, err := Document("testdata")
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, "../../docs/performance.md", []byte(doc))
}

func TestParse(t *testing.T) {
	out := `goos: linux
BenchmarkCost/Rollout/steady/ours-2     	     300	    500000 ns/op	  337955 B/op	    2886 allocs/op
BenchmarkCost/Rollout/steady/ours-2     	     300	    900000 ns/op	    400000 cpu-ns/op	  337955 B/op	    2886 allocs/op
BenchmarkCost/Rollout/steady/builtin-2  	     300	   1000000 ns/op	  496904 B/op	    4873 allocs/op
BenchmarkCost/Rollout/steady/floor-2    	     300	    200000 ns/op	  202776 B/op	    1043 allocs/op
PASS
`
	res, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	r := res["BenchmarkCost/Rollout/steady/ours"]
	if r.NsPerOp != 400000 || r.AllocsPerOp != 2886 || r.Runs != 2 {
		t.Fatalf("ours: %+v, want the fastest of two runs", r)
	}
	doc := Render([]VM{{Name: "vX", Results: res}}, map[string]float64{"vX": 0.5})
	for _, want := range []string{"| Rollout | steady | 400 µs, 2886 allocs | 1.00 ms, 4873 allocs | 200 µs, 1043 allocs | 0.40, 0.59 | 2.00 |", "**0.40**, 0.59", "| yes |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, doc)
		}
	}
	doc = Render([]VM{{Name: "vX", Results: res}}, map[string]float64{"vX": 0.3})
	if !strings.Contains(doc, "| **no** |") {
		t.Errorf("a missed goal is not reported:\n%s", doc)
	}
}
