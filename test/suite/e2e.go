package suite

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/analysis-health/analysis-health/internal/script/engine"
	"github.com/analysis-health/analysis-health/test/kargo"
	"github.com/analysis-health/analysis-health/test/kargo/stage"
	"github.com/analysis-health/analysis-health/test/timeline"
)

// The end-to-end replay of e2e/ (Argo CD v2.14, main module) through another release: the same committed
// Rollouts v1.8.5 and v1.10.2 controller timelines, the same analysis verdicts (test/timeline) and Kargo
// rules (test/kargo) as e2e; only the calls into Argo CD are the release's.

// appHealth aggregates the Application's health over its managed resources. The controller's
// setApplicationHealth is unexported and only reachable through CompareAppState (a live-state cache and
// repo plumbing), so this follows its loop: start Healthy, take each managed resource's GetResourceHealth
// with the argocd-cm overrides, keep the worse (isWorse: the release's health.IsWorse). The only managed
// resource is the Rollout: gitops-engine drops objects with ownerReferences (the AnalysisRuns) from the
// managed set, as e2e's TestAnalysisRunsAreNotManaged shows on v2.14 and gitops-engine/v3 pkg/cache
// GetManagedLiveObjs still does.
func appHealth(managed []*engine.Health, isWorse func(current, next string) bool) string {
	app := engine.Healthy
	for _, hs := range managed {
		if hs != nil && isWorse(app, hs.Status) {
			app = hs.Status
		}
	}
	return app
}

// E2EReplay replays every recorded frame through the release's util/settings overrides and
// GetResourceHealth, with our argocd-cm and with the built-in scripts, and holds our scripts to Kargo's
// rules and to the Rollout health Argo CD v2.14 gives (test/testdata/argocd-v2.14-rollout-health.yaml,
// kept current by e2e TestRolloutHealthGolden).
func E2EReplay(t *testing.T, r Release, isWorse func(current, next string) bool) {
	installs := map[string]Settings{"ours": Load(t, r, HealthData(t)), "built-in": Load(t, r, nil)}
	e2eDir := RepoFile(t, "test")
	v214, err := timeline.ReadRolloutHealth(filepath.Join(e2eDir, timeline.RolloutHealthFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range timeline.Versions {
		timelines, err := timeline.Load(filepath.Join(e2eDir, timeline.Dir), version)
		if err != nil {
			t.Fatal(err)
		}
		if len(timelines) < 30 {
			t.Fatalf("%s: %d timelines, want at least 30", version, len(timelines))
		}
		frames, builtinProblems := 0, 0
		for _, tl := range timelines {
			vs := tl.AllVerdicts()
			apps := map[string][]string{}
			stages := map[string]*stage.Stage{}
			var oursRollout []string
			for name, argo := range installs {
				stages[name] = stage.New()
				for i := range tl.Frames {
					hs, err := argo.ResourceHealth(tl.Frames[i].RolloutObject().Object)
					if err != nil {
						t.Fatalf("%s/%s frame %d, %s: GetResourceHealth: %v", version, tl.Name, i, name, err)
					}
					app := appHealth([]*engine.Health{hs}, isWorse)
					apps[name] = append(apps[name], app)
					stages[name].Assess(app)
					if name == "ours" {
						if hs == nil {
							hs = &engine.Health{}
						}
						oursRollout = append(oursRollout, timeline.FrameHealth(hs.Status, hs.Message))
					}
				}
			}
			frames += len(tl.Frames)
			// no sync runs here, so no barrier rule (e2e's barrier_test.go)
			builtinProblems += len(kargo.Problems(tl, vs, stages["built-in"], nil))
			t.Run(version+"/"+tl.Name, func(t *testing.T) {
				if got, want := kargo.Problems(tl, vs, stages["ours"], nil), kargo.KnownLimits[version+"/"+tl.Name]; !reflect.DeepEqual(got, want) {
					t.Errorf("with our scripts on %s, Kargo disagrees with the analysis verdict:\n  got:  %q\n  want: %q", r.Version(), got, want)
				}
				want, ok := v214[version][tl.Name]
				if !ok {
					t.Fatalf("no Argo CD v2.14 health for this timeline (run make e2e UPDATE=1)")
				}
				if len(want) != len(oursRollout) {
					t.Fatalf("%d frames, v2.14 golden has %d", len(oursRollout), len(want))
				}
				for i := range want {
					if oursRollout[i] != want[i] {
						t.Errorf("frame %d: Rollout health on %s %q, on v2.14 %q", i, r.Version(), oursRollout[i], want[i])
					}
				}
				for i, st := range apps["ours"] {
					// Kargo would call an Unknown or Missing Application Unhealthy
					if st == "Unknown" || st == "Missing" {
						t.Errorf("frame %d: Application %s with our scripts", i, st)
					}
				}
				last := len(tl.Frames) - 1
				if got, want := apps["ours"][last], tl.WantFinalAppHealth(); got != want {
					t.Errorf("final Application health %s, want %s for a timeline that ends %s", got, want, tl.Outcome)
				}
			})
		}
		// the rules must be able to fail: the built-in script, which ignores the analysis, has to break them
		if builtinProblems == 0 {
			t.Errorf("%s: the built-in script passes every Kargo rule on %s; the checks cannot tell a script that ignores analysis", version, r.Version())
		}
		t.Logf("%s: %d scenarios, %d frames; built-in scripts break the Kargo rules %d times", version, len(timelines), frames, builtinProblems)
	}
}
