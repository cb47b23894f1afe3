package lua_test

import (
	"encoding/binary"
	"encoding/json"
	"math/rand"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/bench/worstcase"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/internal/script/mutate"
	"github.com/analysis-health/analysis-health/lua"
)

// generous is the deadline of evaluations in tests that are not about the deadline: on a loaded CI machine
// a megabyte object can take longer than Argo CD's 1 s without the script being at fault.
const generous = 30 * time.Second

// phases are values the scripts branch on, substituted for fields so mutations reach those branches.
var phases = []string{"Failed", "Inconclusive", "Running", "Degraded", "Error", "Successful", "Paused"}

type seed struct {
	kind lua.Kind
	raw  []byte
	// big marks the worst-case objects (internal/bench/worstcase: megabytes), mutated fewer times per test run.
	big bool
}

func seeds(t testing.TB) []seed {
	fx, err := lua.Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	var out []seed
	for _, f := range fx {
		out = append(out, seed{kind: f.Kind, raw: f.Raw})
	}
	for _, w := range worstcase.Objects() {
		raw, err := json.Marshal(w.Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seed{kind: lua.Kind{Group: "argoproj.io", Kind: w.Kind}, raw: raw, big: true})
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

func checkMutated(t *testing.T, s seed, data []byte) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(s.raw, &obj); err != nil {
		t.Fatal(err)
	}
	m := mutate.FromBytes(data)
	m.Strings = phases
	// Argo CD always hands the script an object; the top level stays a map (Object ensures it).
	mutated := m.Object(obj)
	// Every script must survive every shape, not only its own kind's.
	for _, k := range lua.Kinds() {
		script, err := lua.Health(k.Group, k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		// Under every profile the script returns a table: no path depends on nil, whose meaning v3.6
		// changed ("no health" instead of an empty status).
		var h engine.Health
		for i, p := range engine.Profiles() {
			got, err := engine.Engine{Profile: p, Timeout: generous}.Execute(mutated, script)
			if err != nil || got == nil || (i > 0 && *got != h) {
				b, _ := yaml.Marshal(mutated)
				t.Fatalf("%s script under %s: %+v, %v (want a table, as under %s: %+v)\nobject:\n%s", k.Kind, p, got, err, engine.Profiles()[0], h, b)
			}
			h = *got
		}
		// Every form the generator emits for an Argo CD VM gives what the source gives.
		for _, version := range []string{"v2.14", "v3.6"} {
			form := formOf(t, k, version)
			if got, err := (engine.Engine{Profile: engine.V214, Timeout: generous}).Health(mutated, form); err != nil || got != h {
				b, _ := yaml.Marshal(mutated)
				t.Fatalf("%s script, form for %s: %+v, %v; the source gives %+v\nobject:\n%s", k.Kind, version, got, err, h, b)
			}
		}
		switch h.Status {
		case engine.Healthy, engine.Progressing, engine.Suspended, engine.Degraded:
		default:
			b, _ := yaml.Marshal(mutated)
			t.Fatalf("%s script returned %+v\nobject:\n%s", k.Kind, h, b)
		}
	}
}

var forms sync.Map // kind key + " " + version -> script

func formOf(t *testing.T, k lua.Kind, version string) string {
	key := k.Key() + " " + version
	if s, ok := forms.Load(key); ok {
		return s.(string)
	}
	s, err := generator.Script(k, generator.Options{ArgoCDVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	forms.Store(key, s)
	return s
}

// TestMutatedFixtures runs a fixed number of pseudo-random mutations of every fixture on each `go test`;
// FuzzScripts explores further under `make fuzz`.
func TestMutatedFixtures(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, s := range seeds(t) {
		n := 15
		if s.big {
			n = 1
		}
		for i := 0; i < n; i++ {
			data := make([]byte, 256)
			rng.Read(data)
			checkMutated(t, s, data)
		}
	}
}

func FuzzScripts(f *testing.F) {
	all := seeds(f)
	for i := range all {
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, uint32(i))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		i := int(binary.LittleEndian.Uint32(data) % uint32(len(all)))
		checkMutated(t, all[i], data[4:])
	})
}
