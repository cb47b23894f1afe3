package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/docblock"
)

// kargoSets are the kargo option combinations, by golden folder name under testdata/kargo/.
var kargoSets = []struct {
	name string
	opts KargoOptions
}{
	{"single-cluster", KargoOptions{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop",
		PluginLocation: "https://artifacts.example.internal/analysis-health/rollouts-plugin-metric-analysis-health-linux-amd64",
		PluginSHA256:   strings.Repeat("ab", 32)}},
	{"cluster-template-vars", KargoOptions{PluginLocation: "file:///plugins/rollouts-plugin-metric-analysis-health"}},
	{"plugin-image", KargoOptions{Project: "kargo-shop", PluginLocation: "file:///analysis-health/rollouts-plugin-metric-analysis-health",
		PluginImage: "registry.example.internal/analysis-health/rollouts-plugin-metric-analysis-health@sha256:" + strings.Repeat("ef", 32)}},
	{"freight-image", KargoOptions{Project: "kargo-shop", PluginLocation: "file:///plugins/rollouts-plugin-metric-analysis-health", ImageRepo: "ghcr.io/shop/checkout"}},
	{"no-analysis-failed", KargoOptions{Project: "kargo-shop", PluginLocation: "file:///plugins/rollouts-plugin-metric-analysis-health", ImageRepo: "ghcr.io/shop/checkout",
		NoAnalysis: "failed"}},
	{"multi-cluster", KargoOptions{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop", PluginLocation: "https://example.com/p",
		PluginSHA256: strings.Repeat("cd", 32), KubeconfigSecret: "shop-workload", KubeconfigKey: "config", RolloutsServiceAccount: "rollouts/controller"}},
	// the platform's release values (helm get values), whose lists the values keep beside ours
	{"rollouts-values", KargoOptions{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop", PluginLocation: "file:///analysis-health/rollouts-plugin-metric-analysis-health",
		PluginImage:    "registry.example.internal/analysis-health/rollouts-plugin-metric-analysis-health@sha256:" + strings.Repeat("ef", 32),
		RolloutsValues: []File{{Path: "rollouts-values.yaml", Data: []byte(platformRolloutsValues)}}}},
}

// Every kargo option set, compared with testdata/kargo/<set>/; every file is YAML.
func TestKargoGolden(t *testing.T) {
	for _, set := range kargoSets {
		t.Run(set.name, func(t *testing.T) {
			files, err := GenerateKargo(set.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 {
				t.Fatalf("%d files", len(files))
			}
			for _, f := range files {
				for i, doc := range strings.Split(string(f.Data), "\n---\n") {
					var v map[string]any
					if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil || len(v) == 0 {
						t.Errorf("%s document %d: %v", f.Path, i, err)
					}
				}
			}
			assertGoldenDir(t, filepath.Join("testdata", "kargo", set.name), files)
		})
	}
}

func TestKargoOptionsRejected(t *testing.T) {
	for _, tc := range []struct {
		opts KargoOptions
		want string
	}{
		{KargoOptions{}, "plugin location is required"},
		{KargoOptions{PluginLocation: "https://x/p"}, "needs the binary's sha256"},
		{KargoOptions{PluginLocation: "ftp://x/p"}, "not an http://, https:// or file:// URL"},
		{KargoOptions{PluginLocation: "https://x/p", PluginSHA256: strings.Repeat("ab", 32), PluginImage: "x/y:1"}, "a plugin image is copied to a file:// location"},
		{KargoOptions{PluginLocation: "file:///p", PluginImage: "x/y:1"}, "must name a folder for the plugin's volume"},
		{KargoOptions{PluginLocation: "file:///d/p", PluginImage: "x/y:{{v}}"}, "not an image reference"},
		{KargoOptions{PluginLocation: "file:///p", PluginSHA256: "ABC"}, "not 64 lower-case hex digits"},
		{KargoOptions{PluginLocation: "file:///p", Rollout: "checkout"}, "give both or neither"},
		{KargoOptions{PluginLocation: "file:///p", Rollout: "Checkout!", Namespace: "shop"}, "not a valid object name"},
		{KargoOptions{PluginLocation: "file:///p", KubeconfigSecret: "a_b"}, "not a valid object name"},
		{KargoOptions{PluginLocation: "file:///p", ImageRepo: "ghcr.io/shop/checkout:1.0"}, "not a repository URL"},
		{KargoOptions{PluginLocation: "file:///p", ImageRepo: `a"b`}, "not a repository URL"},
		{KargoOptions{PluginLocation: "file:///p", RolloutsServiceAccount: "argo-rollouts"}, "not <namespace>/<name>"},
		{KargoOptions{PluginLocation: "file:///p", NoAnalysis: "degraded"}, `no-analysis "degraded" is not one of successful, inconclusive, failed`},
		{KargoOptions{PluginLocation: "file:///p", NoAnalysis: "Failed"}, `no-analysis "Failed" is not one of`},
	} {
		if _, err := GenerateKargo(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestKargoDoc keeps docs/kargo.md's example values equal to the plugin-image golden set; -update
// rewrites it.
func TestKargoDoc(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "kargo", "plugin-image", KargoValuesFile))
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, "../docs/kargo.md", "generator TestKargoDoc", []byte("```yaml\n"+string(raw)+"```\n"))
}

// TestKargoExpressionsOneLine: every Kargo expression is printed on one line, whatever its length (a
// long image repository would otherwise be folded inside its ${{ }}), and reads back as given.
func TestKargoExpressionsOneLine(t *testing.T) {
	long := "registry.example.com/a-rather-long-organisation-name/and-a-long-team/checkout-service"
	for _, tc := range []struct {
		name string
		opts KargoOptions
		want string
	}{
		{"freight image", KargoOptions{PluginLocation: "file:///p/x", ImageRepo: "ghcr.io/shop/checkout"}, KargoImageExpression("ghcr.io/shop/checkout")},
		{"long image repository", KargoOptions{PluginLocation: "file:///p/x", ImageRepo: long}, KargoImageExpression(long)},
		{"stage vars", KargoOptions{PluginLocation: "file:///p/x"}, "${{ vars.rolloutNamespace }}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := GenerateKargo(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range files {
				for i, line := range strings.Split(string(f.Data), "\n") {
					if strings.HasPrefix(strings.TrimSpace(line), "#") {
						continue
					}
					for rest := line; strings.Contains(rest, "${{"); {
						_, after, _ := strings.Cut(rest, "${{")
						var closed bool
						if _, rest, closed = strings.Cut(after, "}}"); !closed {
							t.Errorf("%s:%d: an expression spans lines: %s", f.Path, i+1, line)
						}
					}
					found = found || strings.HasSuffix(line, "value: "+tc.want)
				}
				if f.Path != KargoStageFile {
					continue
				}
				var stage struct {
					Spec struct {
						Verification struct {
							Args []struct{ Name, Value string }
						}
					}
				}
				if err := yaml.Unmarshal(f.Data, &stage); err != nil {
					t.Fatal(err)
				}
				var values []string
				for _, a := range stage.Spec.Verification.Args {
					values = append(values, a.Value)
				}
				if !strings.Contains(strings.Join(values, "\n"), tc.want) {
					t.Errorf("args %q lack %q", values, tc.want)
				}
			}
			if !found {
				t.Errorf("no line ends with value: %s", tc.want)
			}
		})
	}
}
