package generator

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// platformRolloutsValues is a platform's argo-rollouts release: a metric plugin, a step plugin, an init
// container, a volume and a mount of its own (helm get values -o yaml).
const platformRolloutsValues = `controller:
  replicas: 2
  metricProviderPlugins:
  - name: argoproj-labs/sample-prometheus
    location: https://example.com/prometheus
  stepPlugins:
  - name: argoproj-labs/step-exec
    location: https://example.com/step-exec
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

var testPluginImage = "registry.example.internal/analysis-health/p@sha256:" + strings.Repeat("ef", 32)

func imageOpts(values ...File) KargoOptions {
	return KargoOptions{Project: "kargo-shop", Rollout: "checkout", Namespace: "shop",
		PluginLocation: "file:///analysis-health/p", PluginImage: testPluginImage, RolloutsValues: values}
}

func httpsOpts(project, ns string, values ...File) KargoOptions {
	return KargoOptions{Project: project, Rollout: "checkout", Namespace: ns, PluginLocation: "https://example.com/v2/p",
		PluginSHA256: strings.Repeat("cd", 32), RolloutsValues: values}
}

func valuesFile(data string) File { return File{Path: "rollouts-values.yaml", Data: []byte(data)} }

// names is each list's entries' names, as "list: a,b".
func names(t *testing.T, controller map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range controller {
		var n []string
		for _, e := range v.([]any) {
			n = append(n, e.(map[string]any)["name"].(string))
		}
		out[k] = strings.Join(n, ",")
	}
	return out
}

// TestKargoValuesMerge: the generated lists are the release's with ours merged in by name; the lists we
// do not need are not written, so Helm keeps the release's; ours already there is updated in place, its
// namespace pairs the union of the old and the new.
func TestKargoValuesMerge(t *testing.T) {
	ours := KargoPluginName
	pair := func(p, ns string) string { return "--" + KargoAllowNamespacePairFlag + "=" + p + "=" + ns }
	for _, tc := range []struct {
		name  string
		opts  KargoOptions
		lists map[string]string
		// the values of our plugin item, when checked
		plugin map[string]any
	}{
		{"none: ours alone", imageOpts(), map[string]string{"metricProviderPlugins": ours, "initContainers": KargoPluginVolume,
			"volumes": KargoPluginVolume, "volumeMounts": KargoPluginVolume}, nil},
		{"the platform's kept beside ours", imageOpts(valuesFile(platformRolloutsValues)), map[string]string{
			"metricProviderPlugins": "argoproj-labs/sample-prometheus," + ours, "initContainers": "download-tools," + KargoPluginVolume,
			"volumes": "my-certs," + KargoPluginVolume, "volumeMounts": "my-certs," + KargoPluginVolume}, nil},
		{"https writes the plugin list only", httpsOpts("kargo-shop", "shop", valuesFile(platformRolloutsValues)), map[string]string{
			"metricProviderPlugins": "argoproj-labs/sample-prometheus," + ours}, nil},
		{"empty values (helm get values of a release without any)", httpsOpts("kargo-shop", "shop", valuesFile("null\n")), map[string]string{
			"metricProviderPlugins": ours}, nil},
		{"a second Project adds its pair, in place", httpsOpts("kargo-web", "web", valuesFile(`controller:
  metricProviderPlugins:
  - name: `+ours+`
    location: https://example.com/v1/p
    sha256: `+strings.Repeat("ab", 32)+`
    args: [`+pair("kargo-shop", "shop")+`, --kubeconfig=/k]
  - name: argoproj-labs/sample-prometheus
    location: https://example.com/prometheus
`)), map[string]string{"metricProviderPlugins": ours + ",argoproj-labs/sample-prometheus"},
			map[string]any{"name": ours, "location": "https://example.com/v2/p", "sha256": strings.Repeat("cd", 32),
				"args": []any{pair("kargo-shop", "shop"), "--kubeconfig=/k", pair("kargo-web", "web")}}},
		{"the same Project again changes nothing", httpsOpts("kargo-shop", "shop", valuesFile(`controller:
  metricProviderPlugins:
  - {name: `+ours+`, location: "https://example.com/v2/p", args: [`+pair("kargo-shop", "shop")+`]}
`)), map[string]string{"metricProviderPlugins": ours},
			map[string]any{"name": ours, "location": "https://example.com/v2/p", "sha256": strings.Repeat("cd", 32), "args": []any{pair("kargo-shop", "shop")}}},
		{"a file:// location drops the old download's sha256", imageOpts(valuesFile(`controller:
  metricProviderPlugins:
  - {name: ` + ours + `, location: "https://example.com/v1/p", sha256: ` + strings.Repeat("ab", 32) + `}
`)), map[string]string{"metricProviderPlugins": ours, "initContainers": KargoPluginVolume, "volumes": KargoPluginVolume, "volumeMounts": KargoPluginVolume},
			map[string]any{"name": ours, "location": "file:///analysis-health/p", "args": []any{pair("kargo-shop", "shop")}}},
		{"our init container, volume and mount of an older image, replaced in place", imageOpts(valuesFile(`controller:
  initContainers:
  - {name: ` + KargoPluginVolume + `, image: old, command: [` + PluginImageBinary + `, --copy-to, /old/p]}
  - {name: download-tools, image: alpine}
  volumes:
  - {name: ` + KargoPluginVolume + `, emptyDir: {}}
  volumeMounts:
  - {name: ` + KargoPluginVolume + `, mountPath: /old}
`)), map[string]string{"metricProviderPlugins": ours, "initContainers": KargoPluginVolume + ",download-tools", "volumes": KargoPluginVolume, "volumeMounts": KargoPluginVolume}, nil},
		{"an https location drops our old init container, volume and mount, keeping the platform's", httpsOpts("kargo-shop", "shop", valuesFile(`controller:
  initContainers:
  - {name: download-tools, image: alpine}
  - {name: `+KargoPluginVolume+`, image: old, command: [`+PluginImageBinary+`, --copy-to, /old/p]}
  volumes:
  - {name: `+KargoPluginVolume+`, emptyDir: {}}
  volumeMounts:
  - {name: `+KargoPluginVolume+`, mountPath: /old}
  - {name: my-certs, mountPath: /etc/ssl/certs}
`)), map[string]string{"metricProviderPlugins": ours, "initContainers": "download-tools", "volumes": "", "volumeMounts": "my-certs"}, nil},
		// helm -f order: a later file's list replaces an earlier one's whole, maps merge
		{"files in helm's order", httpsOpts("kargo-shop", "shop", valuesFile(platformRolloutsValues),
			File{Path: "later.yaml", Data: []byte("controller:\n  metricProviderPlugins:\n  - {name: acme/other, location: https://example.com/o}\n")}),
			map[string]string{"metricProviderPlugins": "acme/other," + ours}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := GenerateKargo(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var raw []byte
			for _, f := range files {
				if f.Path == KargoValuesFile {
					raw = f.Data
				}
			}
			var values struct {
				Controller map[string]any `json:"controller"`
			}
			if err := yaml.UnmarshalStrict(raw, &values); err != nil {
				t.Fatal(err)
			}
			if got := names(t, values.Controller); !reflect.DeepEqual(got, tc.lists) {
				t.Errorf("lists %v, want %v\n%s", got, tc.lists, raw)
			}
			if tc.plugin != nil {
				for _, p := range values.Controller["metricProviderPlugins"].([]any) {
					if p.(map[string]any)["name"] == ours && !reflect.DeepEqual(p, tc.plugin) {
						t.Errorf("our plugin item %v, want %v", p, tc.plugin)
					}
				}
			}
			// the header names the files and layers them in the same order before ours
			var flags []string
			for _, f := range tc.opts.RolloutsValues {
				flags = append(flags, "-f "+f.Path)
			}
			if tc.opts.RolloutsValues != nil && !strings.Contains(string(raw), "-n argo-rollouts "+strings.Join(flags, " ")+" -f "+KargoValuesFile+"\n") {
				t.Errorf("the header's helm command does not layer %v before %s:\n%s", flags, KargoValuesFile, raw)
			}
			if tc.opts.RolloutsValues == nil && !strings.Contains(string(raw), "these lists hold analysis-health's entries alone") {
				t.Errorf("the header does not say the lists replace the release's:\n%s", raw)
			}
		})
	}
}

// TestKargoValuesRefused: values that cannot be merged safely are refused, naming the flag, the file and
// the entry, rather than written over someone else's entry.
func TestKargoValuesRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   KargoOptions
		values string
		want   string
	}{
		{"someone else's volume named like ours", imageOpts(), "controller:\n  volumes:\n  - {name: " + KargoPluginVolume + ", configMap: {name: x}}\n",
			"--rollouts-values rollouts-values.yaml: controller.volumes[0] is named " + KargoPluginVolume + " but is not the emptyDir volume analysis-health writes"},
		{"someone else's init container named like ours", imageOpts(), "controller:\n  initContainers:\n  - {name: " + KargoPluginVolume + ", image: busybox, command: [sh]}\n",
			"controller.initContainers[0] is named " + KargoPluginVolume + " but is not the init container analysis-health writes"},
		{"our plugin twice", httpsOpts("kargo-shop", "shop"), "controller:\n  metricProviderPlugins:\n  - {name: " + KargoPluginName + ", location: https://a}\n  - {name: " + KargoPluginName + ", location: https://b}\n",
			"controller.metricProviderPlugins names " + KargoPluginName + " twice"},
		{"another mount where ours goes", imageOpts(), "controller:\n  volumeMounts:\n  - {name: tools, mountPath: /analysis-health}\n",
			"controller.volumeMounts[0] (tools) is mounted at /analysis-health, where the plugin's volume goes"},
		{"our args not a list", httpsOpts("kargo-shop", "shop"), "controller:\n  metricProviderPlugins:\n  - {name: " + KargoPluginName + ", location: https://a, args: --x}\n",
			"the args of " + KargoPluginName + " in controller.metricProviderPlugins are a string, not a list"},
		{"a list that is a map", httpsOpts("kargo-shop", "shop"), "controller:\n  metricProviderPlugins: {name: x}\n", "controller.metricProviderPlugins is a map, not a list"},
		{"an entry without a name", httpsOpts("kargo-shop", "shop"), "controller:\n  metricProviderPlugins:\n  - location: https://a\n", "controller.metricProviderPlugins[0] has no name"},
		{"controller not a map", httpsOpts("kargo-shop", "shop"), "controller: []\n", "controller is a list, not a map"},
		{"no ConfigMap", httpsOpts("kargo-shop", "shop"), "controller:\n  createConfigmap: false\n", "controller.createConfigmap is false"},
		{"helm's table output", httpsOpts("kargo-shop", "shop"), "USER-SUPPLIED VALUES:\ncontroller: {}\n", "this is helm get values' table output"},
		{"not YAML", httpsOpts("kargo-shop", "shop"), "controller: [\n", "--rollouts-values rollouts-values.yaml: not YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.RolloutsValues = []File{valuesFile(tc.values)}
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
			if _, err := GenerateKargo(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("GenerateKargo: %v, want %q", err, tc.want)
			}
		})
	}
}
