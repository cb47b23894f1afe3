package generator_test

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

// fakeArgoCD is an Argo CD tree whose suites hold three cases per kind, on inputs from our bundled
// fixtures: one with our script's answer, one with another message, and one without a message line, in
// a file without a final newline. (The real trees are test/upstream's.)
func fakeArgoCD(t *testing.T) (fstest.MapFS, map[string][3]engine.Health) {
	t.Helper()
	base := fstest.MapFS{}
	answers := map[string][3]engine.Health{}
	for _, k := range lua.Kinds() {
		raw, err := lua.FS.ReadFile(path.Join(k.Key(), "health_test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var suite verify.HealthSuite
		if err := sigsyaml.Unmarshal(raw, &suite); err != nil {
			t.Fatal(err)
		}
		dir := path.Join(generator.UpstreamRoot, k.Key())
		var text strings.Builder
		text.WriteString("tests:\n")
		var want [3]engine.Health
		for i, tc := range suite.Tests[:3] {
			input, err := lua.FS.ReadFile(path.Join(k.Key(), tc.InputPath))
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("testdata/upstream%d.yaml", i)
			base[path.Join(dir, name)] = &fstest.MapFile{Data: input}
			want[i] = tc.HealthStatus
			switch i {
			case 0:
				fmt.Fprintf(&text, "- healthStatus:\n    status: %s\n    message: %q\n  inputPath: %s\n", tc.HealthStatus.Status, tc.HealthStatus.Message, name)
			case 1:
				fmt.Fprintf(&text, "- healthStatus:\n    status: %s\n    message: \"the built-in's words\"\n  inputPath: %s\n", tc.HealthStatus.Status, name)
			case 2:
				fmt.Fprintf(&text, "- healthStatus:\n    status: Unknown\n  inputPath: %s", name)
			}
		}
		answers[k.Kind] = want
		base[path.Join(dir, "health_test.yaml")] = &fstest.MapFile{Data: []byte(text.String())}
		base[path.Join(dir, "health.lua")] = &fstest.MapFile{Data: []byte("return {status = \"Healthy\"}\n")}
	}
	return base, answers
}

func TestUpstreamEditsSuitesInPlace(t *testing.T) {
	base, answers := fakeArgoCD(t)
	files, cases, err := generator.UpstreamTree(generator.UpstreamOptions{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[f.Path] = string(f.Data)
		if _, err := fs.Stat(base, f.Path); err == nil && path.Base(f.Path) != "health.lua" && path.Base(f.Path) != "health_test.yaml" {
			t.Errorf("%s replaces a file of the Argo CD tree", f.Path)
		}
	}
	for _, k := range lua.Kinds() {
		dir := path.Join(generator.UpstreamRoot, k.Key())
		script := out[path.Join(dir, "health.lua")]
		if strings.Contains(script, "analysis-health") || !strings.HasPrefix(script, "-- The health an inconclusive analysis gives") {
			t.Errorf("%s health.lua keeps our header or options: %.120q", k.Kind, script)
		}
		orig := strings.Split(string(base[path.Join(dir, "health_test.yaml")].Data), "\n")
		got := strings.Split(out[path.Join(dir, "health_test.yaml")], "\n")
		a := answers[k.Kind]
		want := append(append(append([]string{}, orig[:7]...), fmt.Sprintf("    message: %q", a[1].Message), orig[8]),
			"- healthStatus:", "    status: "+a[2].Status, fmt.Sprintf("    message: %q", a[2].Message), orig[11])
		if strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
			t.Errorf("%s suite: got\n%s\nwant\n%s", k.Kind, strings.Join(got[:len(want)], "\n"), strings.Join(want, "\n"))
		}
		var kc []generator.UpstreamCase
		for _, c := range cases {
			if c.Kind == k {
				kc = append(kc, c)
			}
		}
		if len(kc) < 4 || kc[0].Changed() || !kc[1].Changed() || !kc[2].Changed() || kc[2].Old.Status != "Unknown" {
			t.Errorf("%s cases: %+v", k.Kind, kc[:min(3, len(kc))])
		}
		// The rest are our recorded cases, appended in the suite's layout, each input written beside.
		for _, c := range kc[3:] {
			if c.Upstream || !strings.HasPrefix(c.InputPath, "testdata/"+generator.UpstreamCasesDir+"/") || out[path.Join(dir, c.InputPath)] == "" {
				t.Errorf("%s: own case %+v has no input in the output", k.Kind, c)
			}
			if !strings.Contains(out[path.Join(dir, "health_test.yaml")], "\n  inputPath: "+c.InputPath+"\n") {
				t.Errorf("%s: own case %s is not in the suite", k.Kind, c.InputPath)
			}
		}
	}
}

func TestUpstreamRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(fstest.MapFS)
		want string
	}{
		{"no tree", nil, "no Argo CD source tree"},
		{"no suite", func(b fstest.MapFS) { delete(b, "resource_customizations/argoproj.io/Rollout/health_test.yaml") }, "has no suite for argoproj.io/Rollout"},
		{"unknown field", func(b fstest.MapFS) {
			b["resource_customizations/argoproj.io/Experiment/health_test.yaml"] = &fstest.MapFile{Data: []byte("tests:\n- inputPath: testdata/upstream0.yaml\n  healthStatus: {status: Healthy}\n  timeout: 3\n")}
		}, "resource_customizations/argoproj.io/Experiment/health_test.yaml: tests[0]: timeout is not a field"},
		{"missing input", func(b fstest.MapFS) {
			delete(b, "resource_customizations/argoproj.io/AnalysisRun/testdata/upstream1.yaml")
		}, "AnalysisRun/health_test.yaml: tests[1]"},
		{"input of ours already there", func(b fstest.MapFS) {
			own, _ := fs.Glob(generator.UpstreamCasesFS(), "argoproj.io/Rollout/*.yaml")
			b["resource_customizations/argoproj.io/Rollout/testdata/recorded/"+path.Base(own[0])] = &fstest.MapFile{Data: []byte("kind: Rollout\n")}
		}, "an upstream input is never replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base fs.FS
			if tc.edit != nil {
				b, _ := fakeArgoCD(t)
				tc.edit(b)
				base = b
			}
			_, err := generator.GenerateUpstream(generator.UpstreamOptions{Base: base})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
