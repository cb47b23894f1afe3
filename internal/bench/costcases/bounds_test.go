package costcases

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	ahlua "github.com/analysis-health/analysis-health/lua"
)

const boundMutations = 100

// TestBoundsAnswerAsOurs holds each bound to what makes it one: on every bundled fixture of its kind taking
// its path (the objects its benchmark measures) it gives exactly our script's answer; on every other
// object of its kind, the other fixtures and 100 mutations of each fixture, it gives that answer or
// nothing; it never fails. A bound that skipped a rule its path needs, to be cheaper, would give a wrong
// answer somewhere here.
func TestBoundsAnswerAsOurs(t *testing.T) {
	bounds, err := Bounds()
	if err != nil {
		t.Fatal(err)
	}
	if len(bounds) == 0 {
		t.Fatal("no bound scripts")
	}
	fixtures, err := ahlua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	strs := []string{"", "Pending", "Running", "Successful", "Failed", "Error", "Inconclusive", "Healthy", "Paused",
		"Progressing", "Degraded", "InconclusiveAnalysisRun", "InconclusiveExperiment"}
	for name, bound := range bounds {
		kind, path, _ := strings.Cut(name, "/")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ours, err := ahlua.Health("argoproj.io", kind)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(14))
			onPath, compared := 0, 0
			check := func(obj map[string]any, what string, fixture bool) {
				for _, p := range engine.Profiles() {
					// The subtests run in parallel on a loaded machine: Argo CD's 1 s deadline is not what this
					// test is about, so a slow evaluation must not read as a wrong answer.
					e := engine.Engine{Profile: p, Timeout: time.Minute}
					want, err := e.Health(obj, ours)
					if err != nil {
						t.Fatalf("%s, %s: ours: %v", what, p, err)
					}
					got, err := e.Health(obj, bound)
					if err != nil {
						t.Errorf("%s, %s: bound fails: %v", what, p, err)
						continue
					}
					compared++
					if fixture && Path(kind, &unstructured.Unstructured{Object: obj}, want) == path {
						if p == engine.V214 {
							onPath++
						}
						if want == (engine.Health{}) {
							t.Fatalf("%s, %s: ours gives no health on the bound's path, so the bound cannot be told from one that declines", what, p)
						}
						if got != want {
							t.Errorf("%s, %s (on the path): bound %+v, ours %+v", what, p, got, want)
						}
					} else if got != want && got != (engine.Health{}) {
						t.Errorf("%s, %s (off the path): bound %+v, ours %+v; want ours or nothing", what, p, got, want)
					}
				}
			}
			for _, f := range fixtures {
				if f.Kind.Kind != kind {
					continue
				}
				obj, err := f.Object()
				if err != nil {
					t.Fatal(err)
				}
				check(obj, f.Path, true)
				for n := 0; n < boundMutations; n++ {
					m := mutate.FromRand(rng)
					m.Strings = strs
					check(m.Object(mutate.DeepCopy(obj).(map[string]any), "apiVersion", "kind", "metadata"), fmt.Sprintf("%s, mutation %d", f.Path, n), false)
				}
			}
			if onPath == 0 {
				t.Fatalf("no %s fixture takes the %s path", kind, path)
			}
			t.Logf("%s: %d evaluations compared, %d fixtures on the path", name, compared, onPath)
		})
	}
}

func TestBoundNames(t *testing.T) {
	bounds, err := Bounds()
	if err != nil {
		t.Fatal(err)
	}
	for name := range bounds {
		kind, path, ok := strings.Cut(name, "/")
		if !ok || kind == "" || !slices.Contains(Paths, path) {
			t.Errorf("bound %q is not <Kind>/<path>", name)
		}
	}
}
