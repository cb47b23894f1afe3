package formats

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
	"github.com/analysis-health/analysis-health/internal/cli"
	"github.com/analysis-health/analysis-health/internal/upstream"
)

// kargoPlatformValues is the argo-rollouts release of a platform that has plugins and pod additions of its
// own before any Kargo Project verifies with ours: what `helm get values` prints for it.
const kargoPlatformValues = `controller:
  extraArgs:
  - --metricport=8091
  metricProviderPlugins:
  - name: argoproj-labs/sample-prometheus
    location: https://plugins.example.internal/sample-prometheus
  stepPlugins:
  - name: argoproj-labs/step-exec
    location: https://plugins.example.internal/step-exec
  initContainers:
  - name: download-tools
    image: alpine:3.20
    command: [sh, -c, "true"]
  volumes:
  - name: my-certs
    configMap:
      name: my-certs-cm
  volumeMounts:
  - name: my-certs
    mountPath: /etc/ssl/certs
`

// kargoProject is one Project's quick start: docs/kargo.md's words replaced by this Project's.
type kargoProject struct{ project, rollout, namespace, out string }

func (p kargoProject) rewrite(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		switch {
		case w == "kargo-shop":
			w = p.project
		case w == "checkout":
			w = p.rollout
		case w == "shop":
			w = p.namespace
		case strings.HasPrefix(w, "kargo/"):
			w = p.out + strings.TrimPrefix(w, "kargo")
		}
		out[i] = w
	}
	return out
}

// TestKargoQuickStartKeepsPlatformValues runs docs/kargo.md's quick start (steps 3 and 4, its generate and
// helm commands as written) against a release of the argo-helm argo-rollouts chart 2.41.0 whose values
// hold another metric plugin, a step plugin, an init container, a volume, a mount and an extra argument,
// then a second Project's the same way, and renders the chart with Helm's library after each install.
// Helm replaces a list of an earlier -f file by a later file's whole, so values that list our entries
// alone drop the platform's, and the second Project's would drop the first's namespace pair: other teams'
// AnalysisRuns would go to Error. Every platform entry must be in the rendered argo-rollouts-config and
// controller Deployment beside ours, with both Projects' pairs.
func TestKargoQuickStartKeepsPlatformValues(t *testing.T) {
	chart := upstream.Vendored(t, "argo-helm/charts/argo-rollouts")
	root, err := upstream.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "kargo.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	generate, install := quickStartCommands(t, doc, "generate"), quickStartCommands(t, doc, "install")
	image := "registry.example.internal/analysis-health/rollouts-plugin-metric-analysis-health@sha256:" + strings.Repeat("ef", 32)
	for _, tc := range []struct {
		name string
		// flags replaced in the generate command; an empty value drops the flag
		flags map[string]string
	}{
		{"as written", nil},
		{"plugin image", map[string]string{"--plugin-location": "file:///analysis-health/rollouts-plugin-metric-analysis-health",
			"--plugin-file": "", "--plugin-image": image}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			t.Chdir(work)
			var release map[string]any
			if err := yaml.Unmarshal([]byte(kargoPlatformValues), &release); err != nil {
				t.Fatal(err)
			}
			projects := []kargoProject{
				{project: "kargo-shop", rollout: "checkout", namespace: "shop", out: "kargo"},
				{project: "kargo-web", rollout: "storefront", namespace: "web", out: "kargo-web"},
			}
			var pairs []string
			for _, p := range projects {
				release = runQuickStart(t, generate, install, release, p, tc.flags)
				pairs = append(pairs, "--"+generator.KargoAllowNamespacePairFlag+"="+p.project+"="+p.namespace)
				values, err := yaml.Marshal(release)
				if err != nil {
					t.Fatal(err)
				}
				cm, controller := renderedRollouts(t, chart, values)
				checkPlatformKept(t, p.project, cm, controller)
				ours := checkOurPlugin(t, p.project, cm)
				for _, pair := range pairs {
					if !slices.Contains(ours.Args, pair) {
						t.Errorf("after %s's install our plugin's args %v lack %s: that Project's verifications would end in Error", p.project, ours.Args, pair)
					}
				}
				if tc.flags["--plugin-image"] != "" {
					checkOurInitContainer(t, p.project, image, controller)
				}
			}
		})
	}
}

// quickStartCommands are the shell commands of the fenced block after `<!-- quickstart: NAME -->`,
// continuation lines joined, split into words (the quick start quotes nothing).
func quickStartCommands(t *testing.T, doc, name string) [][]string {
	t.Helper()
	marker := "<!-- quickstart: " + name + " -->"
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs/kargo.md: no %s", marker)
	}
	m := regexp.MustCompile("(?s)\\n( *)```[a-z]*\\n(.*?)\\n *```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatalf("docs/kargo.md: no fenced block after %s", marker)
	}
	var out [][]string
	for _, c := range strings.Split(strings.ReplaceAll(m[2], "\\\n", " "), "\n") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// runQuickStart runs one Project's steps 3 and 4 in the working folder against the release's values
// (what helm get values prints), and returns the release's values after the helm upgrade: its -f files
// merged as Helm merges them. A values file the steps name but do not write (the page's your-values.yaml
// of old) is the platform's own, holding the release's values.
func runQuickStart(t *testing.T, generate, install [][]string, release map[string]any, p kargoProject, flags map[string]string) map[string]any {
	t.Helper()
	current, err := yaml.Marshal(release)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range generate {
		c = p.rewrite(c)
		line := strings.Join(c, " ")
		switch {
		case strings.HasPrefix(line, "helm get values argo-rollouts ") && strings.Contains(line, " -n argo-rollouts") &&
			strings.Contains(line, " -o yaml") && len(c) > 2 && c[len(c)-2] == ">":
			write(c[len(c)-1], current)
		case c[0] == "analysis-health":
			args := generateArgs(t, c[1:], flags)
			var stdout, stderr bytes.Buffer
			if code := cli.Run(args, &cli.Options{In: bytes.NewReader(current), Out: &stdout, ErrOut: &stderr}); code != 0 {
				t.Fatalf("%s: step 3 %v: exit %d\n%s", p.project, args, code, stderr.String())
			}
		default:
			t.Fatalf("step 3: a command this test does not know: %s", line)
		}
	}
	var helm []string
	for _, c := range install {
		if c[0] == "helm" {
			helm = p.rewrite(c)
		}
	}
	line := strings.Join(helm, " ")
	if !strings.HasPrefix(line, "helm upgrade --install argo-rollouts argo/argo-rollouts ") || !strings.Contains(line, " -n argo-rollouts") {
		t.Fatalf("step 4 does not install the argo-rollouts release: %q", line)
	}
	// Helm's -f files in order, merged by Helm's own helm.sh/helm/v3/pkg/cli/values Options.MergeValues, as
	// helm upgrade merges them and stores the result as the release's values (local files need no getter).
	var files []string
	for i := 0; i < len(helm); i++ {
		if helm[i] != "-f" && helm[i] != "--values" {
			continue
		}
		i++
		if _, err := os.Stat(helm[i]); os.IsNotExist(err) {
			write(helm[i], current)
		}
		files = append(files, helm[i])
	}
	merged, err := (&values.Options{ValueFiles: files}).MergeValues(getter.Providers{})
	if err != nil {
		t.Fatalf("helm's -f files %v: %v", files, err)
	}
	if !strings.Contains(line, "-f "+p.out+"/"+generator.KargoValuesFile) {
		t.Fatalf("step 4's helm command does not install the generated values: %q", line)
	}
	return merged
}

// generateArgs is the page's generate command with flags replaced or dropped, and step 1's build, which
// --plugin-file reads, put where the command says.
func generateArgs(t *testing.T, args []string, flags map[string]string) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v, replaced := flags[a]
		if !replaced {
			out = append(out, a)
			if a == "--plugin-file" && i+1 < len(args) {
				if err := os.MkdirAll(filepath.Dir(args[i+1]), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(args[i+1], staticELF(), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		seen[a] = true
		i++ // the page's value
		if v != "" {
			out = append(out, a, v)
		}
	}
	for f, v := range flags {
		if !seen[f] && v != "" {
			out = append(out, f, v)
		}
	}
	return out
}

// staticELF is the header of a statically linked Linux executable (one PT_LOAD, no PT_INTERP): step 1's
// build, as far as `generate --plugin-file` looks.
func staticELF() []byte {
	le := binary.LittleEndian
	b := make([]byte, 64+56)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(b[16:], 2)
	le.PutUint16(b[18:], 62)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], 64)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	le.PutUint16(b[58:], 64)
	le.PutUint32(b[64:], 1)
	return b
}

// renderedRollouts renders the chart with the release's values and decodes, strictly, the
// argo-rollouts-config ConfigMap and the controller Deployment.
func renderedRollouts(t *testing.T, chart string, values []byte) (*corev1.ConfigMap, *appsv1.Deployment) {
	t.Helper()
	var cm *corev1.ConfigMap
	var controller *appsv1.Deployment
	for _, m := range Render(t, chart, values, "argo-rollouts", "argo-rollouts") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(m.Doc), &head); err != nil {
			t.Fatalf("%s: %v", m.Template, err)
		}
		switch {
		case head.Kind == "ConfigMap" && head.Metadata.Name == "argo-rollouts-config":
			cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict([]byte(m.Doc), cm); err != nil {
				t.Fatalf("%s: %v", m.Template, err)
			}
		case head.Kind == "Deployment" && head.Metadata.Name == "argo-rollouts":
			controller = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(m.Doc), controller); err != nil {
				t.Fatalf("%s: %v", m.Template, err)
			}
		}
	}
	if cm == nil || controller == nil || len(controller.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the chart rendered no argo-rollouts-config (%v) or no controller Deployment with one container (%v)", cm != nil, controller)
	}
	return cm, controller
}

// rolloutsPlugin is an item of argo-rollouts-config's plugin lists (argo-rollouts utils/plugin/types
// PluginItem's JSON fields).
type rolloutsPlugin struct {
	Name     string   `json:"name"`
	Location string   `json:"location"`
	Sha256   string   `json:"sha256,omitempty"`
	Args     []string `json:"args,omitempty"`
	Disabled bool     `json:"disabled,omitempty"`
}

func configPlugins(t *testing.T, cm *corev1.ConfigMap, key string) []rolloutsPlugin {
	t.Helper()
	var out []rolloutsPlugin
	if err := yaml.UnmarshalStrict([]byte(cm.Data[key]), &out); err != nil {
		t.Fatalf("argo-rollouts-config %s: %v\n%s", key, err, cm.Data[key])
	}
	return out
}

func checkOurPlugin(t *testing.T, project string, cm *corev1.ConfigMap) rolloutsPlugin {
	t.Helper()
	var ours []rolloutsPlugin
	for _, p := range configPlugins(t, cm, "metricProviderPlugins") {
		if p.Name == generator.KargoPluginName {
			ours = append(ours, p)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("after %s's install argo-rollouts-config holds %d items of %s:\n%s", project, len(ours), generator.KargoPluginName, cm.Data["metricProviderPlugins"])
	}
	return ours[0]
}

// checkPlatformKept: each of the platform's entries is in the rendered objects.
func checkPlatformKept(t *testing.T, project string, cm *corev1.ConfigMap, d *appsv1.Deployment) {
	t.Helper()
	has := func(what, name string, names []string) {
		t.Helper()
		if !slices.Contains(names, name) {
			t.Errorf("after %s's install the platform's %s %s is gone (left: %v)", project, what, name, names)
		}
	}
	pluginNames := func(key string) []string {
		var n []string
		for _, p := range configPlugins(t, cm, key) {
			n = append(n, p.Name+" "+p.Location)
		}
		return n
	}
	has("metric plugin", "argoproj-labs/sample-prometheus https://plugins.example.internal/sample-prometheus", pluginNames("metricProviderPlugins"))
	has("step plugin", "argoproj-labs/step-exec https://plugins.example.internal/step-exec", pluginNames("stepPlugins"))
	spec := d.Spec.Template.Spec
	var inits, volumes, mounts []string
	for _, c := range spec.InitContainers {
		inits = append(inits, c.Name+" "+c.Image)
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			volumes = append(volumes, v.Name+" configMap "+v.ConfigMap.Name)
		}
	}
	for _, m := range spec.Containers[0].VolumeMounts {
		mounts = append(mounts, m.Name+" "+m.MountPath)
	}
	has("init container", "download-tools alpine:3.20", inits)
	has("volume", "my-certs configMap my-certs-cm", volumes)
	has("controller mount", "my-certs /etc/ssl/certs", mounts)
	has("controller argument", "--metricport=8091", spec.Containers[0].Args)
}

// checkOurInitContainer: the plugin image's init container, its emptyDir and the controller's mount of it
// are there too, each once.
func checkOurInitContainer(t *testing.T, project, image string, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	count := 0
	for _, c := range spec.InitContainers {
		if c.Name == generator.KargoPluginVolume && c.Image == image {
			count++
		}
	}
	for _, v := range spec.Volumes {
		if v.Name == generator.KargoPluginVolume && v.EmptyDir != nil {
			count++
		}
	}
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.Name == generator.KargoPluginVolume && m.MountPath == "/analysis-health" {
			count++
		}
	}
	if count != 3 {
		t.Errorf("after %s's install the controller pod has %d of our init container, volume and mount, want one each: %+v %+v %+v",
			project, count, spec.InitContainers, spec.Volumes, spec.Containers[0].VolumeMounts)
	}
}
