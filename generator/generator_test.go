package generator

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/lua"
	"github.com/analysis-health/analysis-health/verify"
)

var rollout = lua.Kind{Group: "argoproj.io", Kind: "Rollout"}

// With default options the scripts must be the embedded files, byte for byte: the generator may not fork
// the source of truth.
func TestDefaultScriptsAreTheEmbeddedFiles(t *testing.T) {
	for _, opts := range []Options{{}, {Inconclusive: InconclusiveSuspended, Namespace: "other", Version: "v9"}} {
		for _, k := range lua.Kinds() {
			want, err := lua.Health(k.Group, k.Kind)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Script(k, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s with %+v differs from the embedded health.lua", k.Key(), opts)
			}
		}
	}
}

// Degraded rewrites the one option line and nothing else.
func TestDegradedChangesOnlyTheOptionLine(t *testing.T) {
	for _, k := range lua.Kinds() {
		orig, _ := lua.Health(k.Group, k.Kind)
		got, err := Script(k, Options{Inconclusive: InconclusiveDegraded})
		if err != nil {
			t.Fatal(err)
		}
		a, b := strings.Split(orig, "\n"), strings.Split(got, "\n")
		if len(a) != len(b) {
			t.Fatalf("%s: line count changed from %d to %d", k.Key(), len(a), len(b))
		}
		var changed []string
		for i := range a {
			if a[i] != b[i] {
				changed = append(changed, b[i])
			}
		}
		if len(changed) != 1 || changed[0] != `local inconclusiveStatus = "Degraded"` {
			t.Errorf("%s: changed lines %q, want only the inconclusiveStatus assignment", k.Key(), changed)
		}
	}
}

func TestApplyOptions(t *testing.T) {
	const block = "-- analysis-health:options\n"
	const end = "-- analysis-health:end-options\n"
	set := map[string]any{"inconclusiveStatus": "Degraded"}
	off := map[string]any{"blockBypassOnFailedAnalysis": false}
	tests := []struct {
		name    string
		src     string
		values  map[string]any
		want    string
		wantErr string
	}{
		{
			name:   "rewrites the value only",
			src:    "x = 1\n" + block + "local inconclusiveStatus = \"Suspended\"\n" + end + "return x\n",
			values: set,
			want:   "x = 1\n" + block + "local inconclusiveStatus = \"Degraded\"\n" + end + "return x\n",
		},
		{
			name:   "keeps spacing, trailing comment, other options and comments",
			src:    block + "-- why\nlocal other = \"a\"\nlocal  inconclusiveStatus =\"Suspended\" -- note\n\n" + end,
			values: set,
			want:   block + "-- why\nlocal other = \"a\"\nlocal  inconclusiveStatus =\"Degraded\" -- note\n\n" + end,
		},
		{
			name:   "keeps CRLF line endings",
			src:    "-- analysis-health:options\r\nlocal inconclusiveStatus = \"Suspended\"\r\n-- analysis-health:end-options\r\n",
			values: set,
			want:   "-- analysis-health:options\r\nlocal inconclusiveStatus = \"Degraded\"\r\n-- analysis-health:end-options\r\n",
		},
		{
			name:   "an assignment outside the block is not touched",
			src:    "local inconclusiveStatus = \"Suspended\"\n" + block + "local inconclusiveStatus = \"Suspended\"\n" + end,
			values: set,
			want:   "local inconclusiveStatus = \"Suspended\"\n" + block + "local inconclusiveStatus = \"Degraded\"\n" + end,
		},
		{name: "no block", src: "return {}\n", values: set, wantErr: "options block missing"},
		{name: "not closed", src: block + "local inconclusiveStatus = \"Suspended\"\n", values: set, wantErr: "not closed"},
		{name: "end before begin", src: end + block, values: set, wantErr: "before"},
		{name: "two blocks", src: block + end + block + end, values: set, wantErr: "appears twice"},
		{name: "option missing", src: block + "local other = \"a\"\n" + end, values: set, wantErr: "no assignment of inconclusiveStatus"},
		{name: "option twice", src: block + "local inconclusiveStatus = \"Suspended\"\nlocal inconclusiveStatus = \"Degraded\"\n" + end, values: set, wantErr: "assigned twice"},
		{name: "code in block", src: block + "local inconclusiveStatus = pick()\n" + end, values: set, wantErr: "malformed at line 2"},
		{name: "single quotes", src: block + "local inconclusiveStatus = 'Suspended'\n" + end, values: set, wantErr: "malformed"},
		{name: "escape in value", src: block + "local inconclusiveStatus = \"Sus\\\"pended\"\n" + end, values: set, wantErr: "malformed"},
		{name: "value not a word", src: block + "local inconclusiveStatus = \"Suspended\"\n" + end, values: map[string]any{"inconclusiveStatus": `x" .. os.exit() .. "`}, wantErr: "not a plain word"},
		{
			name:   "sets a boolean, keeping the comment",
			src:    block + "local blockBypassOnFailedAnalysis = true -- guard\n" + end + "return {}\n",
			values: off,
			want:   block + "local blockBypassOnFailedAnalysis = false -- guard\n" + end + "return {}\n",
		},
		{
			name:   "boolean and string options in one block",
			src:    block + "local a = false\nlocal inconclusiveStatus = \"Suspended\"\n" + end,
			values: map[string]any{"a": true, "inconclusiveStatus": "Degraded"},
			want:   block + "local a = true\nlocal inconclusiveStatus = \"Degraded\"\n" + end,
		},
		{
			name:   "boolean set to its own value",
			src:    block + "local blockBypassOnFailedAnalysis=false\n" + end,
			values: off,
			want:   block + "local blockBypassOnFailedAnalysis=false\n" + end,
		},
		{name: "string for a boolean", src: block + "local blockBypassOnFailedAnalysis = true\n" + end, values: map[string]any{"blockBypassOnFailedAnalysis": "false"}, wantErr: "the script assigns a boolean"},
		{name: "boolean for a string", src: block + "local inconclusiveStatus = \"Suspended\"\n" + end, values: map[string]any{"inconclusiveStatus": true}, wantErr: "the script assigns a string"},
		{name: "neither string nor bool", src: block + "local n = \"1\"\n" + end, values: map[string]any{"n": 1}, wantErr: "neither a string nor a bool"},
		{name: "boolean option missing", src: block + "local inconclusiveStatus = \"Suspended\"\n" + end, values: off, wantErr: "no assignment of blockBypassOnFailedAnalysis"},
		{name: "nil", src: block + "local blockBypassOnFailedAnalysis = nil\n" + end, values: off, wantErr: "malformed at line 2"},
		{name: "number", src: block + "local blockBypassOnFailedAnalysis = 1\n" + end, values: off, wantErr: "malformed"},
		{name: "capitalised boolean", src: block + "local blockBypassOnFailedAnalysis = True\n" + end, values: off, wantErr: "malformed"},
		{name: "boolean expression", src: block + "local blockBypassOnFailedAnalysis = true and false\n" + end, values: off, wantErr: "malformed"},
		{name: "negation", src: block + "local blockBypassOnFailedAnalysis = not false\n" + end, values: off, wantErr: "malformed"},
		{name: "word starting with true", src: block + "local blockBypassOnFailedAnalysis = trueish\n" + end, values: off, wantErr: "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lua.SetOptions(tc.src, tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestOptionsErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"inconclusive", Options{Inconclusive: "Unknown"}, `inconclusive status "Unknown" is not one of Suspended, Degraded`},
		{"inconclusive case", Options{Inconclusive: "degraded"}, "is not one of"},
		{"namespace", Options{Namespace: "Argo_CD"}, `namespace "Argo_CD" is not a valid`},
		{"namespace dash", Options{Namespace: "argocd-"}, "is not a valid"},
		{"kind", Options{Kinds: []lua.Kind{{Group: "apps", Kind: "Deployment"}}}, "no bundled health script for apps/Deployment (valid: AnalysisRun, Experiment, Rollout)"},
		// A guard switched off where it cannot reach is refused, not silently ignored.
		{"block bypass without actions", Options{Actions: new(false), BlockBypassOnFailedAnalysis: new(false)}, "--block-bypass-on-failed-analysis=false has no effect with --actions=false"},
		{"block bypass without Rollout", Options{Kinds: []lua.Kind{{Group: "argoproj.io", Kind: "AnalysisRun"}}, BlockBypassOnFailedAnalysis: new(false)}, "no selected kind's discovery has the option (it applies to Rollout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range Formats() {
				_, err := Generate(f, tc.opts)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s: error %v, want one containing %q", f, err, tc.wantErr)
				}
			}
		})
	}
	if _, err := Generate("json", Options{}); err == nil || !strings.Contains(err.Error(), "argocd-cm, patch, helm, kustomize, lua") {
		t.Errorf("unknown format: error %v, want the list of formats", err)
	}
}

func TestParseKinds(t *testing.T) {
	tests := []struct {
		in      []string
		want    []lua.Kind
		wantErr string
	}{
		{in: []string{"Rollout"}, want: []lua.Kind{rollout}},
		{in: []string{"argoproj.io/rollout", " analysisrun "}, want: []lua.Kind{rollout, {Group: "argoproj.io", Kind: "AnalysisRun"}}},
		{in: []string{"Deployment"}, wantErr: `unknown kind "Deployment" (valid: AnalysisRun, Experiment, Rollout)`},
		{in: []string{""}, wantErr: "unknown kind"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.in, ","), func(t *testing.T) {
			got, err := ParseKinds(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr && !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// Kind order and duplicates in Options do not change the bytes.
func TestDeterministic(t *testing.T) {
	ar := lua.Kind{Group: "argoproj.io", Kind: "AnalysisRun"}
	for _, f := range Formats() {
		a, err := Generate(f, Options{Kinds: []lua.Kind{rollout, ar}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(f, Options{Kinds: []lua.Kind{ar, rollout, ar}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: output depends on the order of Kinds", f)
		}
	}
}

// Every YAML artifact loads back (as Kubernetes tooling reads it) to exactly our keys with byte-identical
// scripts, in the place each consumer looks, with no useOpenLibs and no legacy key.
func TestArtifactsLoadBack(t *testing.T) {
	for _, set := range optionSets {
		want, err := ConfigMapData(set.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatal("no scripts")
		}
		for _, f := range []Format{ConfigMap, Patch, Helm, Kustomize} {
			t.Run(set.name+"/"+string(f), func(t *testing.T) {
				files, err := Generate(f, set.opts)
				if err != nil {
					t.Fatal(err)
				}
				var doc map[string]any
				raw := files[0].Data
				if f == Kustomize {
					raw = nil
					for _, file := range files {
						if file.Path == patchFile {
							raw = file.Data
						}
					}
				}
				if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(raw, []byte("# Generated by analysis-health dev.")) {
					t.Errorf("no header comment")
				}
				for _, banned := range []string{"useOpenLibs", "resource.customizations:"} {
					if bytes.Contains(raw, []byte(banned)) {
						t.Errorf("output contains %q", banned)
					}
				}
				data := doc["data"]
				switch f {
				case Helm:
					data = doc["configs"].(map[string]any)["cm"]
				case ConfigMap:
					meta := doc["metadata"].(map[string]any)
					labels := meta["labels"].(map[string]any)
					ns := set.opts.Namespace
					if ns == "" {
						ns = "argocd"
					}
					if meta["name"] != "argocd-cm" || meta["namespace"] != ns || labels["app.kubernetes.io/part-of"] != "argocd" {
						t.Errorf("metadata %v: want argocd-cm in %s labelled part-of argocd", meta, ns)
					}
				case Kustomize:
					meta := doc["metadata"].(map[string]any)
					if _, ok := meta["namespace"]; ok || meta["name"] != "argocd-cm" {
						t.Errorf("kustomize patch metadata %v: want name argocd-cm and no namespace", meta)
					}
				}
				got, ok := data.(map[string]any)
				if !ok || len(got) != len(want) {
					t.Fatalf("data %T with %d keys, want %d", data, len(got), len(want))
				}
				for k, script := range want {
					if got[k] != script {
						t.Errorf("%s: script differs from the generator's", k)
					}
					// a block scalar: the key line ends in "|" and the script's lines follow indented
					if !bytes.Contains(raw, []byte(k+": |\n")) {
						t.Errorf("%s is not written as a literal block scalar", k)
					}
				}
			})
		}
	}
}

// A script a block scalar cannot hold is an error, not silently a quoted string; one starting with
// spaces gets an indentation indicator and still round-trips.
func TestEncodeBlockScalars(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr bool
	}{
		{"plain", "return {}\n", false},
		{"no final newline", "return {}", false},
		{"leading spaces", "  return {}\n", false},
		{"blank lines at end", "return {}\n\n\n", false},
		{"tab", "if x then\n\treturn {}\nend\n", false},
		{"trailing space", "return {} \nend\n", true},
		{"control character", "return \"\x01\"\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]string{"k": tc.script}
			out, err := encode("", mapping("data", scripts(data)), data)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, wantErr %v\n%s", err, tc.wantErr, out)
			}
			if err != nil {
				return
			}
			var back struct{ Data map[string]string }
			if err := yaml.Unmarshal(out, &back); err != nil || back.Data["k"] != tc.script {
				t.Errorf("round trip: %q, %v; want %q", back.Data["k"], err, tc.script)
			}
		})
	}
}

// The lua tree is a complete resource_customizations tree: `verify` passes on it, with the bundled
// expectations under default options and the re-evaluated ones under Degraded.
func TestLuaTreeVerifies(t *testing.T) {
	bundled, err := verify.Runner{Engine: verify.Engine{Profile: verify.V214}}.Tree(lua.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range optionSets {
		t.Run(set.name, func(t *testing.T) {
			files, err := Generate(Lua, set.opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "tree")
			if err := WriteDir(dir, files); err != nil {
				t.Fatal(err)
			}
			rep, err := verify.Runner{Engine: verify.Engine{Profile: verify.V214}}.Tree(os.DirFS(dir), ".")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Failures() {
				t.Error(f)
			}
			// every bundled case of the selected kinds is there, the action suites unless actions are off
			want := 0
			r, _ := set.opts.resolve()
			for _, res := range bundled.Results {
				if !r.actions && strings.Contains(res.Suite, "/actions/") {
					continue
				}
				for _, k := range r.kinds {
					if strings.HasPrefix(res.Suite, k.Key()+"/") {
						want++
					}
				}
			}
			if len(rep.Results) != want || want == 0 {
				t.Errorf("%d cases in the generated tree, want the %d bundled ones", len(rep.Results), want)
			}
			actionSuites := 0
			for _, res := range rep.Results {
				if strings.HasSuffix(res.Suite, "/actions/"+actionTestFile) {
					actionSuites++
				}
			}
			if (actionSuites > 0) != r.actions {
				t.Errorf("%d action cases with actions %v", actionSuites, r.actions)
			}
			// Each option that changes a script must change some expectation (else the bundled suites do not
			// exercise it, or it does nothing), and no other set may change any.
			for _, mark := range []struct {
				text string
				on   bool
			}{
				{"# changed by --inconclusive degraded", r.inconclusive == InconclusiveDegraded},
				{"# changed by --block-bypass-on-failed-analysis=false", !r.blockBypass},
			} {
				changed := 0
				for _, f := range files {
					changed += bytes.Count(f.Data, []byte(mark.text))
				}
				if mark.on && changed == 0 {
					t.Errorf("no expectation marked %q: the bundled suites do not exercise the option, or it does nothing", mark.text)
				}
				if !mark.on && changed != 0 {
					t.Errorf("%d expectations marked %q without the option", changed, mark.text)
				}
			}
		})
	}
}

// deriveSuite refuses to turn a broken bundled suite, or an option effect other than the documented one,
// into expectations.
func TestDeriveSuiteRefuses(t *testing.T) {
	r, err := Options{Inconclusive: InconclusiveDegraded}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := lua.FS.ReadFile("argoproj.io/Rollout/" + healthTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var suite verify.HealthSuite
	if err := yaml.Unmarshal(raw, &suite); err != nil || len(suite.Tests) == 0 {
		t.Fatalf("bundled Rollout suite: %v, %d cases", err, len(suite.Tests))
	}
	first := suite.Tests[0]

	wrong := fmt.Sprintf("tests:\n- inputPath: %s\n  healthStatus: {status: Unknown, message: nope}\n", first.InputPath)
	optioned, _ := Script(rollout, Options{Inconclusive: InconclusiveDegraded})
	if _, err := deriveSuite(rollout, rendering{resolved: r}, []byte(wrong), optioned); err == nil || !strings.Contains(err.Error(), "the bundled suite fails") {
		t.Errorf("broken suite: error %v", err)
	}

	good := fmt.Sprintf("tests:\n- inputPath: %s\n  healthStatus: {status: %s, message: %q}\n", first.InputPath, first.HealthStatus.Status, first.HealthStatus.Message)
	rogue := `return {status = "Healthy", message = "rogue"}`
	if first.HealthStatus.Status == "Healthy" {
		rogue = `return {status = "Unknown", message = "rogue"}`
	}
	if _, err := deriveSuite(rollout, rendering{resolved: r}, []byte(good), rogue); err == nil || !strings.Contains(err.Error(), "it may only change the status to Degraded") {
		t.Errorf("script changing more than the option: error %v", err)
	}
}
