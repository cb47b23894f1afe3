// Package pluginproof proves the analysis-health metric plugin in the real analysis controller: every
// scenario of the catalogue played with Kargo-shaped verification runs measuring through it, judged frame
// by frame against the Rollout's own analysis (RunPluginVerification), the no-analysis cases under each
// policy, and a verification after the plugin's removal (RunPluginRemoved).
package pluginproof

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// PluginResult is one scenario's outcome.
type PluginResult struct {
	Scenario string `json:"scenario"`
	// Verdict is the analysis verdict (Scenario.Verdict): what the Rollout's own runs ended in.
	Verdict       string            `json:"verdict"`
	Verifications map[string]string `json:"verifications"`
	// Expected is what the scenario declares: the verification at release, and Kargo's.
	Expected map[string]string `json:"expected"`
	// Requests is what the scenario's metric server received; Measurements what the Rollout's own runs
	// record (count + error of every metric result); Duplicates the requests to a metric for a run beyond
	// the run's measurements of it; Unreached the measurements that reached no endpoint (connection refused).
	Requests     int `json:"requests"`
	Measurements int `json:"measurements"`
	Duplicates   int `json:"duplicates"`
	Unreached    int `json:"unreached"`
}

// RunPluginVerification plays every scenario with the three verification runs and checks, frame by
// frame: a verification is never Successful before every analysis of the revision passed, it is Failed
// (and never Successful) from the frame after any analysis of the revision failed, and the metric server
// answers no request beyond the Rollout's own measurements. Then it plays the no-analysis scenarios
// (plugin_noanalysis.go) with the three verifications under each noAnalysis policy. With update it rewrites the report
// (../testdata/plugin/<version>.yaml); without, the committed report must equal what is measured.
func RunPluginVerification(t *testing.T, env *harness.Env, cat harness.Catalogue, update bool) {
	bins := kargoverify.PreparePlugin(t)
	// The controller starts the plugin as a managed go-plugin client and, outside its Run, never stops it:
	// without this the plugin process outlives the test.
	defer goplugin.CleanupClients()
	t.Setenv("KUBECONFIG", env.Cluster.Kubeconfig)
	config := map[string]string{"metricProviderPlugins": "- name: " + kargoverify.PluginName + "\n  location: file://" + bins.Plugin + "\n"}
	var results []PluginResult
	for _, sc := range cat.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			// DownloadPlugins writes plugin-bin/ below the working directory, for every World; the
			// controller keeps the plugin process it started for the first one (client.go
			// startPluginSystem), which is the same binary.
			t.Chdir(t.TempDir())
			r, err := playWithVerification(env, sc, bins, config)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		})
	}
	var noAnalysis []NoAnalysisResult
	for _, sc := range cat.NoAnalysis {
		t.Run("no-analysis/"+sc.Name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			r, err := playNoAnalysis(env, sc, bins, config)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range r.Policies {
				t.Logf("%s, noAnalysis %s: %v; %s", sc.Name, p.Policy, p.Verifications, p.Message)
			}
			noAnalysis = append(noAnalysis, r)
		})
	}
	if t.Failed() {
		return
	}
	raw, err := yaml.Marshal(map[string]any{"controller": harness.ControllerVersion(), "scenarios": results, "noAnalysis": noAnalysis})
	if err != nil {
		t.Fatal(err)
	}
	raw = append([]byte("# Written by test/rollouts/pluginproof RunPluginVerification from the real analysis controller; do not edit.\n"), raw...)
	path := filepath.Join(cluster.TestdataDir(), "plugin", harness.RolloutsVersion()+".yaml")
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("%s differs from what the analysis controller does now; regenerate with -update and review the diff", path)
	}
}
