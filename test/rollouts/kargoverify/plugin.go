// Package kargoverify is a Kargo verification of our plugin as the proofs run it: the plugin and CLI
// binaries, the verification AnalysisRun built as Kargo builds it from our generated template
// (VerificationRun), a verification followed through a scenario (Verification), and the analysis state
// of the verified revision it is judged against (GroundTruth). The plugin proof, the reliability rig and
// the live suite share it.
package kargoverify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
)

// The proof of the analysis-health/rollout-analysis metric-provider plugin (cmd/rollouts-plugin-metric-
// analysis-health, docs/kargo.md) in the real analysis controller: the World loads the built plugin
// binary through argo-rollouts-config (a file:// location, utils/config InitializeConfig and
// utils/plugin DownloadPlugins, as the controller's main does), and while each scenario plays, Kargo-shaped
// Verification AnalysisRuns measure the Rollout's analysis through it:
//
//   - "at release": created as soon as Argo CD applied the new revision, the earliest a verification can
//     start (a Stage whose health were Healthy at once);
//   - "Kargo, built-in health": created at the first frame at which the Stage is Healthy with Argo CD's
//     built-in Rollout health script (Kargo starts verification only then, kargo.md §2.2);
//   - "Kargo, our health": likewise with analysis-health's scripts.
//
// Kargo's builder (pkg/rollouts/analysis_run_builder.go) is reproduced from what it puts in the run: the
// metrics and args of our generated template flattened inline, the Stage's args filled in, its labels
// and annotation. The run is in the Rollout's namespace, because the World's controllers watch only that
// namespace; Kargo puts it in the Project namespace, which the plugin does not depend on.

// Kargo's labels and annotation on a verification run (kargo.md §2.6).
const (
	kargoFreightLabel    = "kargo.akuity.io/freight-collection"
	kargoPromotionAnnot  = "kargo.akuity.io/promotion"
	PluginName           = "analysis-health/rollout-analysis"
	VerificationAtStart  = "at release"
	VerificationBuiltin  = "Kargo, built-in health"
	VerificationOurs     = "Kargo, our health"
	NotStarted           = "not started"
	builtinRolloutScript = "resource_customizations/argoproj.io/Rollout/health.lua"
)

// PluginBinaries are the two binaries of the main module the proof runs: the plugin, and the CLI
// (whose health verb evaluates our scripts, or Argo CD's built-in one through an argocd-cm, in the same
// engine the plugin uses).
type PluginBinaries struct {
	Plugin, CLI, BuiltinCM string
	Noop                   string // the reliability load's do-nothing plugin, when a load runs it
}

func PreparePlugin(t *testing.T) PluginBinaries {
	t.Helper()
	dir := t.TempDir()
	var b PluginBinaries
	var err error
	if b.Plugin, err = harness.BuildMain(dir, "E2E_PLUGIN", "./cmd/rollouts-plugin-metric-analysis-health"); err != nil {
		t.Fatal(err)
	}
	if b.CLI, err = harness.BuildMain(dir, "E2E_ANALYSIS_HEALTH", "./cmd/analysis-health"); err != nil {
		t.Fatal(err)
	}
	// Argo CD's built-in Rollout script, from the Argo CD v2.14 module the replay proves against (found from
	// the source's place: the callers may have changed the working directory).
	cmd := exec.Command("go", "list", "-mod=mod", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v2")
	cmd.Dir, cmd.Env = filepath.Join(cluster.RepoRoot(), "test", "argocd-v2.14"), append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m github.com/argoproj/argo-cd/v2 in test/argocd-v2.14: %v", err)
	}
	script, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), builtinRolloutScript))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd"},
		"data": map[string]string{
			"resource.customizations.health.argoproj.io_Rollout":      string(script),
			"resource.customizations.useOpenLibs.argoproj.io_Rollout": "true",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.BuiltinCM = filepath.Join(dir, "argocd-cm-builtin.yaml")
	if err := os.WriteFile(b.BuiltinCM, cm, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// Health is the Rollout's Argo CD health by our scripts (argocdCM empty) or by the argocd-cm's.
func (b PluginBinaries) Health(ro *v1alpha1.Rollout, argocdCM string) (string, error) {
	ro = ro.DeepCopy()
	ro.APIVersion, ro.Kind = "argoproj.io/v1alpha1", "Rollout"
	raw, err := json.Marshal(ro)
	if err != nil {
		return "", err
	}
	args := []string{"health", "-f", "-", "-o", "json"}
	if argocdCM != "" {
		// --open-libs: the argocd-cm is this test's own, with Argo CD's built-in script and useOpenLibs.
		args = append(args, "--argocd-cm", argocdCM, "--open-libs")
	}
	cmd := exec.Command(b.CLI, args...)
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("analysis-health health: %v: %s", err, stderr.String())
	}
	var rows []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) != 1 {
		return "", fmt.Errorf("analysis-health health: %q (%v)", out, err)
	}
	return rows[0].Status, nil
}

// VerificationRun is what Kargo's AnalysisRunBuilder makes of our generated template and Stage snippet;
// generateArgs are further flags of `generate --format kargo` (--no-analysis).
func (b PluginBinaries) VerificationRun(ns, stage, freightImage string, generateArgs ...string) (*v1alpha1.AnalysisRun, error) {
	dir, err := os.MkdirTemp("", "kargo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kargo")
	flags := []string{"generate", "--format", "kargo", "--project", ns, "--rollout", harness.Name, "--namespace", ns,
		"--plugin-location", "file://" + b.Plugin, "--image-repo", harness.ImageRepo, "--rollouts-values", "none", "--out", out}
	cmd := exec.Command(b.CLI, append(flags, generateArgs...)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("analysis-health generate --format kargo: %v: %s", err, msg)
	}
	var tmpl v1alpha1.AnalysisTemplate
	if err := readStrict(filepath.Join(out, "analysis-template.yaml"), &tmpl); err != nil {
		return nil, err
	}
	var snippet struct {
		Spec struct {
			Verification struct {
				AnalysisTemplates []struct{ Name, Kind string }  `json:"analysisTemplates"`
				Args              []struct{ Name, Value string } `json:"args"`
			} `json:"verification"`
		} `json:"spec"`
	}
	if err := readStrict(filepath.Join(out, "stage-verification.yaml"), &snippet); err != nil {
		return nil, err
	}
	// mergeArgs: the template declares the args; the Stage's values, evaluated as Kargo expressions
	// (pkg/rollouts/analysis_run_builder.go), fill them.
	args := tmpl.Spec.Args
	for _, sa := range snippet.Spec.Verification.Args {
		value, err := kargoExpression(sa.Value, freightImage)
		if err != nil {
			return nil, fmt.Errorf("stage arg %q: %v", sa.Name, err)
		}
		found := false
		for i := range args {
			if args[i].Name == sa.Name {
				args[i].Value, found = harness.Ptr(value), true
			}
		}
		if !found {
			return nil, fmt.Errorf("the Stage passes %q, which the template does not declare", sa.Name)
		}
	}
	for _, a := range args {
		if a.Value == nil && a.ValueFrom == nil {
			return nil, fmt.Errorf("unresolved argument %q", a.Name)
		}
	}
	freight := fmt.Sprintf("%x", time.Now().UnixNano())[:7]
	return &v1alpha1.AnalysisRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:        strings.ToLower(fmt.Sprintf("%s.01J%023d.%s", stage, time.Now().UnixNano()%1e15, freight)),
			Namespace:   ns,
			Labels:      map[string]string{harness.KargoStageLabel: stage, kargoFreightLabel: freight + "0123456789abcdef"},
			Annotations: map[string]string{kargoPromotionAnnot: stage + "." + freight},
		},
		Spec: v1alpha1.AnalysisRunSpec{Metrics: tmpl.Spec.Metrics, DryRun: tmpl.Spec.DryRun,
			MeasurementRetention: tmpl.Spec.MeasurementRetention, Args: args},
	}, nil
}

// kargoExpression evaluates the one Kargo expression our Stage snippet uses, the Freight's image
// (${{ imageFrom("REPO").RepoURL }}:${{ imageFrom("REPO").Tag }}; Kargo v1.11.2
// pkg/expressions/function/functions.go ImageFromFreight), for a Freight holding freightImage. Anything
// else holding an expression is an error: the model knows no other.
func kargoExpression(value, freightImage string) (string, error) {
	repo, tag, _ := strings.Cut(freightImage, ":")
	for _, field := range []struct{ name, v string }{{"RepoURL", repo}, {"Tag", tag}} {
		value = strings.ReplaceAll(value, `${{ imageFrom("`+harness.ImageRepo+`").`+field.name+` }}`, field.v)
	}
	if strings.Contains(value, "${{") {
		return "", fmt.Errorf("the model of Kargo cannot evaluate %q", value)
	}
	return value, nil
}

// FreightImage is the Freight's image as Argo CD synced it into the Rollout.
func FreightImage(ro *v1alpha1.Rollout) string {
	if c := ro.Spec.Template.Spec.Containers; len(c) > 0 && c[0].Image != "" {
		return c[0].Image
	}
	return harness.ImageV2 // a workloadRef Rollout: the Deployment holds the released image
}

func readStrict(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
