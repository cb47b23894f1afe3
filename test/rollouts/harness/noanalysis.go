package harness

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

// NoAnalysisScenario is played once, with a verification at release and the two in Kargo's order for
// each policy (--no-analysis of `generate --format kargo`), all measuring through the plugin at once.
type NoAnalysisScenario struct {
	Name    string
	Summary string
	// Case is what the scenario is, by construction, as the plugin must name it in its message.
	Case string
	// Outcomes are the declared outcome of every verification, by policy.
	Outcomes map[string]string
	// Play leaves the revision to verify released and recording (S.Release, S.DeployRecorded).
	Play func(s *S)
}

// liveScenario is sc as the live suite plays it (Kargo's order, our generated verification with the
// default policy, successful): the revision is promoted, no analysis of it runs, and the verification
// ends Successful once it is fully promoted.
func (sc NoAnalysisScenario) liveScenario() Scenario {
	return Scenario{Name: sc.Name, Strategy: "canary", Summary: sc.Summary, Outcome: OutcomePromoted,
		Verification: "Successful", Kargo: "Successful", Play: sc.Play}
}

// DeployRecorded creates the objects as Argo CD's first sync of a Stage would, and starts recording at
// once: the first revision is the one delivered.
func (s *S) DeployRecorded(ro *v1alpha1.Rollout) {
	var objs []runtime.Object
	for _, t := range Templates(s.World.Metrics()) {
		objs = append(objs, t)
	}
	for _, svc := range Services(ro) {
		objs = append(objs, svc)
	}
	objs = append(objs, ro)
	event := "Argo CD syncs the Stage's first Freight: it creates the Rollout, image " + ro.Spec.Template.Spec.Containers[0].Image
	if d := s.World.opts.Delivery; d != nil {
		sd, ok := d.(StageDelivery)
		if !ok {
			s.Fail("%v: the first Freight as the release needs a StageDelivery", ErrNoDelivery)
		}
		s.deployed = ro.DeepCopy()
		s.Must(sd.DeployRelease(s.World, objs, event))
	} else {
		s.Must(s.World.Create(objs...))
		s.World.Event("%s", event)
	}
	s.Must(s.World.StartRecording())
}

// DeliverEarlier delivers a change of the Rollout before the release, unrecorded: a Freight the Stage
// ran before the one the scenario is about.
func (s *S) DeliverEarlier(event string, mutate func(*v1alpha1.Rollout)) {
	d := s.World.opts.Delivery
	if d == nil {
		s.Must(s.World.UpdateSpec(event, mutate))
		return
	}
	sd, ok := d.(StageDelivery)
	if !ok {
		s.Fail("%v: an earlier Freight needs a StageDelivery", ErrNoDelivery)
	}
	mutate(s.deployed)
	s.Must(sd.Deliver(s.World, mutate, event))
}
