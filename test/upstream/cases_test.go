package upstream

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/golden"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// recordedCase is a frame's object chosen as one of our own cases.
type recordedCase struct {
	kind     lua.Kind
	file     string
	raw      []byte
	old, new engine.Health
	scenario string
}

// openLibs is how Argo CD runs its built-in scripts (util/lua GetHealthScript: useOpenLibs true), and how
// its TestLuaHealthScript runs them.
var openLibs = engine.Engine{Profile: engine.V36, OpenLibs: true}

// selectRecordedCases walks every committed timeline (Rollouts v1.8.5, then v1.10.2; each frame's
// Rollout, AnalysisRuns and Experiments) and keeps, per kind, the first object for each pair of built-in
// status and our status where the two scripts answer differently: every way the pull request changes a
// recorded state, once. The built-in is v3.6.2's (its health scripts for these kinds are v2.14.21's too).
func selectRecordedCases(t *testing.T) []recordedCase {
	t.Helper()
	builtin, ours := map[string]string{}, map[string]string{}
	for _, k := range lua.Kinds() {
		raw, err := os.ReadFile(filepath.Join(base.kindDir(t, k.Kind), "health.lua"))
		if err != nil {
			t.Fatal(err)
		}
		builtin[k.Kind] = string(raw)
		if ours[k.Kind], err = generator.UpstreamScript(k); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var out []recordedCase
	for _, version := range timeline.Versions {
		tls, err := timeline.Load(filepath.Join(repoRoot, "test", timeline.Dir), version)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tls {
			for _, f := range tl.Frames {
				type object struct {
					kind, suffix string
					obj          map[string]any
				}
				objs := []object{{"Rollout", "", f.Rollout}}
				for i, r := range f.AnalysisRuns {
					objs = append(objs, object{"AnalysisRun", fmt.Sprintf("_run%d", i+1), r})
				}
				for i, e := range f.Experiments {
					objs = append(objs, object{"Experiment", fmt.Sprintf("_experiment%d", i+1), e})
				}
				for _, o := range objs {
					old, err1 := openLibs.Health(o.obj, builtin[o.kind])
					nw, err2 := openLibs.Health(o.obj, ours[o.kind])
					if err2 != nil {
						t.Errorf("%s %s frame %d %s: our script: %v", version, tl.Name, f.Frame, o.kind, err2)
						continue
					}
					if err1 != nil || old == nw {
						continue
					}
					key := o.kind + "|" + old.Status + "|" + nw.Status
					if seen[key] {
						continue
					}
					seen[key] = true
					trimmed := trim(o.obj)
					for _, s := range []struct {
						script string
						want   engine.Health
					}{{builtin[o.kind], old}, {ours[o.kind], nw}} {
						if got, err := openLibs.Health(trimmed, s.script); err != nil || got != s.want {
							t.Errorf("%s %s frame %d %s: trimming changed an answer: %+v (%v), want %+v", version, tl.Name, f.Frame, o.kind, got, err, s.want)
						}
					}
					body, err := yaml.Marshal(trimmed)
					if err != nil {
						t.Fatal(err)
					}
					scenario := fmt.Sprintf("Argo Rollouts %s, scenario %s (%s), frame %d", version, tl.Name, oneLine(tl.Summary), f.Frame)
					header := "# Recorded from Argo Rollouts " + version + "'s controllers on a kube-apiserver (analysis-health e2e scenario " +
						tl.Name + ", frame " + fmt.Sprint(f.Frame) + "); trimmed to the fields Argo CD's testdata keep.\n"
					out = append(out, recordedCase{
						kind: lua.Kind{Group: "argoproj.io", Kind: o.kind}, file: fmt.Sprintf("%s_%s_frame%d%s.yaml", tl.Name, version, f.Frame, o.suffix),
						raw: append([]byte(header), body...), old: old, new: nw, scenario: scenario,
					})
				}
			}
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trim drops what Argo CD's testdata leave out: the server-set metadata. Spec and status stay whole.
func trim(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for k, v := range md {
			switch k {
			case "uid", "resourceVersion", "creationTimestamp", "managedFields", "ownerReferences", "generateName", "selfLink":
			default:
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// TestRecordedCases keeps generator/upstreamcases equal to what the recordings give today (-update
// rewrites it): the inputs of our own cases are real frames, not hand-written ones.
func TestRecordedCases(t *testing.T) {
	cases := selectRecordedCases(t)
	if len(cases) == 0 {
		t.Fatal("no recorded frame where the scripts differ: the recordings or the selection broke")
	}
	want := map[string][]byte{}
	for _, c := range cases {
		want[path.Join(c.kind.Key(), c.file)] = c.raw
	}
	dir := filepath.Join(repoRoot, "generator", "upstreamcases")
	have := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.yaml"))
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		have[filepath.ToSlash(rel)] = raw
	}
	if golden.Updating() {
		for p := range have {
			if _, ok := want[p]; !ok {
				if err := os.Remove(filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for p, raw := range want {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	var names []string
	for p := range want {
		names = append(names, p)
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		switch w, h := want[p], have[p]; {
		case h == nil:
			t.Errorf("generator/upstreamcases/%s is missing (run with -update)", p)
		case w == nil:
			t.Errorf("generator/upstreamcases/%s is no longer selected from the recordings (run with -update)", p)
		case !bytes.Equal(w, h):
			t.Errorf("generator/upstreamcases/%s differs from the recorded frame (run with -update)", p)
		}
	}
}

func loadYAML(raw []byte) (map[string]any, error) {
	obj := map[string]any{}
	return obj, yaml.Unmarshal(raw, &obj)
}
