package benchdoc

import (
	"strings"
	"testing"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

// docs/performance.md is what the committed benchmark output renders to; `make bench` refreshes both
// (`make docs` rewrites the page from the committed output).
func TestPerformanceDoc(t *testing.T) {
	doc, err := Document("testdata")
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, "../../../docs/performance.md", "internal/bench/benchdoc TestPerformanceDoc", []byte(doc))
}

// Variants measured in turns come out per variant, all from the run that cost least in total.
func TestParseTurns(t *testing.T) {
	out := `BenchmarkCost/Rollout/steady-2 	 2000	 1806569 ns/op	 2370 bound-allocs/op	 500000 bound-cpu-ns/op	 4910 builtin-allocs/op	 1000000 builtin-cpu-ns/op	 2674 ours-allocs/op	 600000 ours-cpu-ns/op
BenchmarkCost/Rollout/steady-2 	 2000	 1806569 ns/op	 2370 bound-allocs/op	 450000 bound-cpu-ns/op	 4910 builtin-allocs/op	 1300000 builtin-cpu-ns/op	 2674 ours-allocs/op	 550000 ours-cpu-ns/op
BenchmarkCost/Rollout/steady-2 	 2000	 1806569 ns/op	 2370 bound-allocs/op	 480000 bound-cpu-ns/op	 4910 builtin-allocs/op	 900000 builtin-cpu-ns/op	 2674 ours-allocs/op	 580000 ours-cpu-ns/op
`
	res, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]Result{
		"ours":    {NsPerOp: 580000, AllocsPerOp: 2674, Runs: 3},
		"builtin": {NsPerOp: 900000, AllocsPerOp: 4910, Runs: 3},
		"bound":   {NsPerOp: 480000, AllocsPerOp: 2370, Runs: 3},
	} {
		if got := res["BenchmarkCost/Rollout/steady/"+v]; got != want {
			t.Errorf("%s: %+v, want %+v (the third run's, least in total)", v, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	out := `goos: linux
BenchmarkCost/Rollout/steady/ours-2     	     300	    500000 ns/op	  337955 B/op	    2886 allocs/op
BenchmarkCost/Rollout/steady/ours-2     	     300	    900000 ns/op	    400000 cpu-ns/op	  337955 B/op	    2886 allocs/op
BenchmarkCost/Rollout/steady/builtin-2  	     300	   1000000 ns/op	  496904 B/op	    4873 allocs/op
BenchmarkCost/Rollout/steady/floor-2    	     300	    200000 ns/op	  202776 B/op	    1043 allocs/op
BenchmarkPhases/Rollout/steady/ours/parse-2	     300	    150000 ns/op	  1000 B/op	    1000 allocs/op
BenchmarkPhases/Rollout/steady/ours/parse-code-2	     300	    90000 ns/op	  900 B/op	    980 allocs/op
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
	doc := Render([]VM{{Name: "vX", Results: res}}, map[string]Goal{"vX": {Ratio: 0.5, Floor: 2.5}})
	for _, want := range []string{"| Rollout | steady | 400 µs, 2886 allocs | 1.00 ms, 4873 allocs | 200 µs, 1043 allocs | 0.40, 0.59 | 2.00 |", "**0.40**, 0.59", "| yes |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, doc)
		}
	}
	// The goal leaves 0.5 × 1 ms − 200 µs beyond the floor, and (2.5 − 1) × 200 µs; the long strings took
	// 150 − 90 µs of the parse, 20 % of that.
	doc = Render([]VM{{Name: "vX", Results: res, ParsesEveryCall: true}}, map[string]Goal{"vX": {Ratio: 0.5, Floor: 2.5}})
	for _, want := range []string{"leaves a script **300 µs** beyond the floor", "≤ 2.50× the floor leaves\n**300 µs**",
		"| reading the long strings (the lazily compiled chunks' bytes), every call | 60 µs | 20 | 20 % |",
		"| parsing the code of the main chunk | 90 µs | 980 | 30 % |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, doc)
		}
	}
	// A bound at 300 µs of the built-in's 1 ms, 2000 of its 4873 allocs: within 0.5× in both, above 0.25×
	// in time, and above 0.35× in allocations only.
	res["BenchmarkCost/Rollout/steady/bound"] = Result{NsPerOp: 300000, AllocsPerOp: 2000, Runs: 1}
	for _, tc := range []struct {
		ratio float64
		want  []string
	}{
		{0.5, []string{"| yes | 0.30, 0.41 |", "| Rollout | steady | 300 µs, 2000 allocs | 1.00 ms, 4873 allocs | 400 µs, 2886 allocs | 0.30, 0.41 | 1.33, 1.44 |", "within the goal of 0.50×",
			"the goal of ≤ 0.50× leaves a script 300 µs (1394 allocs); the bounds spend 100 µs (957 allocs) there."}},
		{0.25, []string{"above the goal of 0.25×: no\nscript keeping these rules can meet it"}},
		{0.35, []string{"**0.30×** the built-ins on the mix in time and **0.41×** in allocations"}},
	} {
		doc = Render([]VM{{Name: "vX", Results: res}}, map[string]Goal{"vX": {Ratio: tc.ratio, Floor: 2.5}})
		for _, want := range tc.want {
			if !strings.Contains(doc, want) {
				t.Errorf("goal %.2f: rendered page lacks %q:\n%s", tc.ratio, want, doc)
			}
		}
	}
	delete(res, "BenchmarkCost/Rollout/steady/bound")
	for _, g := range []Goal{{Ratio: 0.3, Floor: 2.5}, {Ratio: 0.5, Floor: 1.5}} {
		doc = Render([]VM{{Name: "vX", Results: res}}, map[string]Goal{"vX": g})
		if !strings.Contains(doc, "| **no** |") {
			t.Errorf("a missed goal %+v is not reported:\n%s", g, doc)
		}
	}
}
