package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
)

// platformValues is what helm get values -o yaml prints for a release with a metric plugin of its own.
const platformValues = `controller:
  metricProviderPlugins:
  - name: argoproj-labs/sample-prometheus
    location: https://example.com/prometheus
`

// TestGenerateKargoRolloutsValues: --format kargo needs the release's values (or an explicit none),
// because Helm replaces the chart's lists by the generated ones; they come from files or stdin and the
// plugin list is theirs with ours merged in. Bad input is a usage error naming the flag and the file,
// and nothing is written.
func TestGenerateKargoRolloutsValues(t *testing.T) {
	dir := t.TempDir()
	platform := filepath.Join(dir, "rollouts-values.yaml")
	later := filepath.Join(dir, "later.yaml")
	table := filepath.Join(dir, "table.txt")
	for p, data := range map[string]string{
		platform: platformValues,
		later:    "controller:\n  metricProviderPlugins:\n  - name: acme/other\n    location: https://example.com/other\n",
		table:    "USER-SUPPLIED VALUES:\n" + platformValues,
	} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"generate", "--format", "kargo", "--project", "kargo-shop", "--rollout", "checkout", "--namespace", "shop",
		"--plugin-location", "file:///plugins/p"}
	for _, tc := range []struct {
		name    string
		flags   []string
		stdin   string
		plugins []string // the values' metric plugins, in order; nil: refused
		want    string   // in stderr, when refused
	}{
		{name: "missing", want: "--format kargo needs --rollouts-values"},
		{name: "missing says how to get them", want: "helm get values argo-rollouts -n argo-rollouts -o yaml"},
		{name: "none", flags: []string{"none"}, plugins: []string{generator.KargoPluginName}},
		{name: "a file", flags: []string{platform}, plugins: []string{"argoproj-labs/sample-prometheus", generator.KargoPluginName}},
		{name: "stdin", flags: []string{"-"}, stdin: platformValues, plugins: []string{"argoproj-labs/sample-prometheus", generator.KargoPluginName}},
		// helm -f order: the later file's list replaces the earlier's, as helm upgrade would
		{name: "files in helm's order", flags: []string{platform, later}, plugins: []string{"acme/other", generator.KargoPluginName}},
		{name: "none with a file", flags: []string{"none", platform}, want: "give no other --rollouts-values"},
		{name: "stdin twice", flags: []string{"-", "-"}, want: "--rollouts-values - (stdin) given twice"},
		{name: "no such file", flags: []string{filepath.Join(dir, "nope.yaml")}, want: "--rollouts-values " + filepath.Join(dir, "nope.yaml")},
		{name: "helm's table output", flags: []string{table}, want: "--rollouts-values " + table + ": this is helm get values' table output"},
		{name: "not a map", flags: []string{"-"}, stdin: "- a\n", want: "--rollouts-values -: chart values are a map, not a list"},
		{name: "a volume of ours that is not", flags: []string{"-"}, stdin: "controller:\n  metricProviderPlugins: []\n  volumes:\n  - name: " + generator.KargoPluginVolume + "\n    configMap: {name: x}\n",
			want: "is named " + generator.KargoPluginVolume + " but is not the emptyDir volume analysis-health writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "kargo")
			args := append([]string{}, base...)
			for _, f := range tc.flags {
				args = append(args, "--rollouts-values", f)
			}
			if tc.name == "a volume of ours that is not" {
				args = append(args, "--plugin-location", "file:///analysis-health/p", "--plugin-image", "registry.example.internal/p@sha256:"+strings.Repeat("ef", 32))
			}
			args = append(args, "--out", out)
			var stdout, stderr bytes.Buffer
			code := cli.Run(args, &cli.Options{In: strings.NewReader(tc.stdin), Out: &stdout, ErrOut: &stderr})
			if tc.plugins == nil {
				if code != 2 || stdout.Len() > 0 || !strings.Contains(stderr.String(), tc.want) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout.String(), stderr.String(), tc.want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Error("the output folder was written")
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			raw, err := os.ReadFile(filepath.Join(out, generator.KargoValuesFile))
			if err != nil {
				t.Fatal(err)
			}
			var values struct {
				Controller struct {
					MetricProviderPlugins []struct {
						Name     string   `json:"name"`
						Location string   `json:"location"`
						Args     []string `json:"args,omitempty"`
					} `json:"metricProviderPlugins"`
				} `json:"controller"`
			}
			if err := yaml.UnmarshalStrict(raw, &values); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range values.Controller.MetricProviderPlugins {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.plugins, ",") {
				t.Errorf("metric plugins %v, want %v", names, tc.plugins)
			}
			// the header's regenerate command keeps the flag, and its helm command layers the same files
			for _, f := range tc.flags {
				if !strings.Contains(string(raw), "--rollouts-values "+f) {
					t.Errorf("the header's command lacks --rollouts-values %s:\n%s", f, raw)
				}
				if f != "none" && !strings.Contains(string(raw), "-f "+f) {
					t.Errorf("the header's helm command does not layer %s:\n%s", f, raw)
				}
			}
		})
	}
	if code, _, stderr := run("generate", "--format", "helm", "--rollouts-values", "none"); code != 2 || !strings.Contains(stderr, "--rollouts-values only applies to --format kargo") {
		t.Errorf("--rollouts-values with --format helm: exit %d %q", code, stderr)
	}
}
