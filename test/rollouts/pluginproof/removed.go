package pluginproof

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	goplugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// RunPluginRemoved measures what docs/install.md says of removing the plugin while a template still names
// it: the Stage's verification run, from the generated template, judged by the real analysis controller
// whose argo-rollouts-config no longer lists the plugin. Every measurement is Error, naming the plugin, and
// the run ends Error once the metric's errors exceed the default consecutiveErrorLimit; it is never
// Successful, so Kargo's verification fails.
func RunPluginRemoved(t *testing.T, env *harness.Env, cat harness.Catalogue) {
	bins := kargoverify.PreparePlugin(t)
	defer goplugin.CleanupClients()
	t.Setenv("KUBECONFIG", env.Cluster.Kubeconfig)
	t.Chdir(t.TempDir())
	sc, ok := cat.Named("canary-step-successful")
	if !ok {
		t.Fatal("no scenario canary-step-successful")
	}
	opts := sc.Options
	// The plugin's entry removed; the ConfigMap stays, as after `helm upgrade` without our values.
	opts.RolloutsConfig = map[string]string{}
	opts.Epoch = time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	var run string
	var phases []string
	opts.AfterTick = func(w *harness.World) error {
		if !w.Recording {
			return nil
		}
		if run == "" {
			ar, err := bins.VerificationRun(w.Namespace, "removed", kargoverify.FreightImage(w.Rollout()))
			if err != nil {
				return err
			}
			run = ar.Name
			return w.Create(ar)
		}
		ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), run, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p := string(ar.Status.Phase); len(phases) == 0 || phases[len(phases)-1] != p {
			phases = append(phases, p)
		}
		return nil
	}
	w, err := env.NewWorld(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = harness.Play(w, func(s *harness.S) {
		sc.Play(s)
		// Errors are retried every DefaultErrorRetryInterval (10 s) of the controllers' clock.
		s.Until("the verification run completes", 60, func(*v1alpha1.Rollout) bool {
			return len(phases) > 0 && v1alpha1.AnalysisPhase(phases[len(phases)-1]).Completed()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := w.Recorder.Argo.ArgoprojV1alpha1().AnalysisRuns(w.Namespace).Get(context.Background(), run, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Status.Phase != v1alpha1.AnalysisPhaseError {
		t.Errorf("the verification run ended %s (%s), want Error", ar.Status.Phase, strings.Join(phases, " → "))
	}
	if len(ar.Status.MetricResults) != 1 {
		t.Fatalf("metric results %+v", ar.Status.MetricResults)
	}
	mr := ar.Status.MetricResults[0]
	want := int(defaults.DefaultConsecutiveErrorLimit) + 1
	if int(mr.Error) != want || int(mr.ConsecutiveError) != want || len(mr.Measurements) != want || mr.Successful != 0 {
		t.Errorf("%d measurements, %d errors (%d consecutive), %d successful; want %d errors (the default consecutiveErrorLimit %d, exceeded)",
			len(mr.Measurements), mr.Error, mr.ConsecutiveError, mr.Successful, want, defaults.DefaultConsecutiveErrorLimit)
	}
	for _, m := range mr.Measurements {
		if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, kargoverify.PluginName) {
			t.Errorf("measurement %s %q, want an Error naming %s", m.Phase, m.Message, kargoverify.PluginName)
		}
	}
	msg := ""
	if len(mr.Measurements) > 0 {
		msg = mr.Measurements[len(mr.Measurements)-1].Message
	}
	t.Logf("plugin removed from argo-rollouts-config: the verification run went %s; %d measurements, all Error: %q; run message %q",
		strings.Join(phases, " → "), len(mr.Measurements), msg, ar.Status.Message)
	// docs/install.md quotes the run's message as measured here.
	doc, err := os.ReadFile(filepath.Join(cluster.RepoRoot(), "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	if quoted := strings.ReplaceAll(ar.Status.Message, `\"`, `"`); !strings.Contains(string(doc), quoted) {
		t.Errorf("docs/install.md does not quote the measured message of the run:\n%s", quoted)
	}
}
