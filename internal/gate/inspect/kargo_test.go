package inspect

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// A template whose analysis takes at least minutes (count measurements one minute apart).
func longTemplate(name string, count int) string {
	return `
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: ` + name + `, namespace: shop}
spec:
  metrics: [{name: m, interval: 1m, count: ` + strconv.Itoa(count) + `, provider: {web: {url: http://x}}}]
`
}

// The Kargo timing checks, one per row of docs/hooks.md "Kargo timing".
func TestKargoTiming(t *testing.T) {
	bluegreen := func(extra string, count int) string {
		return rollout(`    blueGreen:
      activeService: a
      prePromotionAnalysis: {templates: [{templateName: pre}]}
`+extra) + longTemplate("pre", count)
	}
	for _, tc := range []struct {
		name     string
		manifest string
		opts     Options
		problems []string
		want     KargoTiming
	}{
		{name: "blue-green analysis within the progress deadline",
			manifest: bluegreen("", 6),
			want: KargoTiming{ProgressDeadline: "10m0s", RetryTimeout: "8m0s", TimeoutFiresBy: "13m0s", ArgoCDSyncTimeoutSeconds: 480,
				ArgoCDWaitTimeout: "8m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "5m10s"},
			opts: Options{KargoTimeout: 10 * time.Minute}},
		{name: "blue-green analysis longer than progressDeadlineSeconds",
			manifest: strings.Replace(bluegreen("", 12), "  strategy:\n", "  progressDeadlineSeconds: 300\n  strategy:\n", 1),
			opts:     Options{KargoTimeout: time.Hour},
			problems: []string{"warning: spec.strategy.blueGreen.prePromotionAnalysis takes at least 11m0s, longer than progressDeadlineSeconds (5m0s), which keeps running during blue-green analysis: the Rollout turns Degraded (ProgressDeadlineExceeded)"},
			want: KargoTiming{ProgressDeadline: "5m0s", RetryTimeout: "17m0s", TimeoutFiresBy: "22m0s", ArgoCDSyncTimeoutSeconds: 1020,
				ArgoCDWaitTimeout: "17m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "11m10s"}},
		{name: "progressDeadlineAbort aborts",
			manifest: strings.Replace(bluegreen("", 12), "  strategy:\n", "  progressDeadlineAbort: true\n  strategy:\n", 1),
			opts:     Options{KargoTimeout: time.Hour},
			problems: []string{"warning: spec.strategy.blueGreen.prePromotionAnalysis takes at least 11m0s, longer than progressDeadlineSeconds (10m0s), which keeps running during blue-green analysis: progressDeadlineAbort aborts the update"},
			want: KargoTiming{ProgressDeadline: "10m0s", ProgressDeadlineAbort: true, RetryTimeout: "17m0s", TimeoutFiresBy: "22m0s", ArgoCDSyncTimeoutSeconds: 1020,
				ArgoCDWaitTimeout: "17m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "11m10s"}},
		{name: "canary step analysis does not run the progress deadline",
			manifest: strings.Replace(rollout(`    canary:
      steps:
      - analysis: {templates: [{templateName: pre}]}
`), "  strategy:\n", "  progressDeadlineSeconds: 60\n  strategy:\n", 1) + longTemplate("pre", 12),
			opts: Options{KargoTimeout: time.Hour},
			want: KargoTiming{ProgressDeadline: "1m0s", RetryTimeout: "17m0s", TimeoutFiresBy: "22m0s", ArgoCDSyncTimeoutSeconds: 1020,
				ArgoCDWaitTimeout: "17m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "11m10s"}},
		{name: "estimate within Kargo's reconcile interval after the timeout",
			manifest: bluegreen("", 7),
			problems: []string{"warning: estimated minimum 6m0s lies within Kargo's reconcile interval (5m0s) after the step timeout 5m0s",
				"warning: estimated minimum 6m0s from sync to full promotion exceeds Kargo's argocd-update timeout 5m0s"},
			want: KargoTiming{ProgressDeadline: "10m0s", RetryTimeout: "9m0s", TimeoutFiresBy: "14m0s", ArgoCDSyncTimeoutSeconds: 540,
				ArgoCDWaitTimeout: "9m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "6m10s"}},
		{name: "Argo CD sync timeout shorter than the estimate",
			manifest: bluegreen("", 6),
			opts:     Options{KargoTimeout: time.Hour, ArgoCDSyncTimeout: 2 * time.Minute},
			problems: []string{"warning: Argo CD's controller.sync.timeout.seconds (2m0s) is shorter than the estimated minimum 5m0s: behind a PostSync barrier Argo CD terminates the sync before the Rollout can be promoted; set it to 480"},
			want: KargoTiming{ProgressDeadline: "10m0s", RetryTimeout: "8m0s", TimeoutFiresBy: "13m0s", ArgoCDSyncTimeoutSeconds: 480,
				ArgoCDWaitTimeout: "8m0s", VerificationWithOurScripts: "10s", VerificationAtMost: "5m10s"}},
		{name: "indefinite pause: no timeouts to recommend",
			manifest: bluegreen("      autoPromotionEnabled: false\n", 2),
			problems: []string{"warning: spec.strategy.blueGreen.autoPromotionEnabled"},
			want:     KargoTiming{ProgressDeadline: "10m0s", VerificationWithOurScripts: "10s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := manifest.Decode("test.yaml", []byte(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Inspect(objs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Problems) != len(tc.problems) {
				t.Fatalf("problems %+v, want %q", r.Problems, tc.problems)
			}
			for i, p := range r.Problems {
				if got := p.Severity + ": " + p.Message; !strings.HasPrefix(got, tc.problems[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got, tc.problems[i])
				}
			}
			if got := r.Rollouts[0].Kargo; got == nil || *got != tc.want {
				t.Errorf("kargo timing %+v, want %+v", got, tc.want)
			}
		})
	}
}
