package generator

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// notificationsSets are the notifications option combinations, by golden folder name under
// testdata/notifications/.
var notificationsSets = []struct {
	name string
	opts NotificationsOptions
}{
	{"default", NotificationsOptions{}},
	{"inconclusive-degraded", NotificationsOptions{Inconclusive: InconclusiveDegraded, Namespace: "gitops"}},
}

// Every notifications option set, compared with testdata/notifications/<set>/; every file is YAML whose
// trigger and template values read back as the engine's types (test/argocd-v3.6/notifications runs them).
func TestNotificationsGolden(t *testing.T) {
	for _, set := range notificationsSets {
		t.Run(set.name, func(t *testing.T) {
			files, err := GenerateNotifications(set.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 3 {
				t.Fatalf("%d files", len(files))
			}
			for _, f := range files {
				var v map[string]any
				if err := yaml.UnmarshalStrict(f.Data, &v); err != nil || len(v) == 0 {
					t.Errorf("%s: %v", f.Path, err)
				}
			}
			assertGoldenDir(t, filepath.Join("testdata", "notifications", set.name), files)
		})
	}
}

func TestNotificationsOptionsRejected(t *testing.T) {
	for _, tc := range []struct {
		opts NotificationsOptions
		want string
	}{
		{NotificationsOptions{Inconclusive: "Failed"}, "inconclusive status"},
		{NotificationsOptions{Namespace: "Argo_CD"}, "not a valid Kubernetes namespace"},
	} {
		if _, err := GenerateNotifications(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// The verdict pattern on the messages our scripts write (lua/*/health_test.yaml and the recorded replays
// hold them all; test/notifications checks those): a failed analysis is one, an inconclusive one only when
// asked, and what is not an analysis verdict (an abort, a progress deadline, a pause) never. (A Healthy
// Rollout "Promoted despite" a failed run is left out by the trigger's status, not by the pattern.)
func TestAnalysisVerdictPattern(t *testing.T) {
	failed := []string{
		`Step analysis run checkout-7bb9d897fd-7-2 Failed: Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1)`,
		`Background analysis run checkout-6f7c8d9b5-12 Error: Metric "error-rate" assessed Error due to consecutiveErrors (5) > consecutiveErrorLimit (4)`,
		`Pre-promotion analysis run checkout-54d7c4976f-2-pre Failed`,
		`RolloutAborted: Rollout aborted update to revision 2: Experiment analysis phase is error/failed: Metric "smoke" assessed Failed due to failed (1) > failureLimit (0)`,
		`RolloutAborted: Rollout aborted update to revision 2: Step-based analysis phase error/failed`,
		`Experiment has failed: analysis success-rate (AnalysisRun checkout-7bb9d897fd-7-1-success-rate) Failed: Metric "success-rate" assessed Failed`,
		`Experiment analysis failed: analysis success-rate Error: AnalysisTemplate verification failed`,
		`Metric "success-rate" assessed Failed due to failed (2) > failureLimit (1)`,
		`Analysis spec invalid: dryRun[0]: Rule didn't match any metric name(s)`,
	}
	inconclusive := []string{
		`Step analysis run checkout-7bb9d897fd-7-2 Inconclusive: Metric "success-rate" assessed Inconclusive due to inconclusive (1) > inconclusiveLimit (0)`,
		`Analysis was inconclusive: rollout paused (InconclusiveAnalysisRun)`,
		`Experiment analysis was inconclusive: rollout paused (InconclusiveExperiment)`,
		`Experiment was inconclusive: analysis success-rate (AnalysisRun x) Inconclusive: Metric "success-rate" assessed Inconclusive`,
	}
	never := []string{
		`RolloutAborted: Rollout aborted update to revision 2`,
		`ProgressDeadlineExceeded: ReplicaSet "checkout-54d7c4976f" has timed out progressing.`,
		`RolloutAborted: Rollout aborted update to revision 2: ReplicaSet "checkout-d75d5bf65" has timed out progressing.`,
		`Experiment has failed: Template 'canary' exceeded its progressDeadlineSeconds (600)`,
		`Step analysis run checkout-d75d5bf65-2-1 Running`,
		`Background analysis run checkout-d75d5bf65-2 Successful`,
		`CanaryPauseStep`,
		"",
	}
	for _, incon := range []bool{false, true} {
		re := regexp.MustCompile(AnalysisVerdictPattern(incon))
		for _, m := range failed {
			if !re.MatchString(m) {
				t.Errorf("inconclusive %v: %q is a failed analysis, not matched", incon, m)
			}
		}
		for _, m := range inconclusive {
			if re.MatchString(m) != incon {
				t.Errorf("inconclusive %v: %q matched %v", incon, m, !incon)
			}
		}
		for _, m := range never {
			if re.MatchString(m) {
				t.Errorf("inconclusive %v: %q is no analysis verdict, matched", incon, m)
			}
		}
	}
}
