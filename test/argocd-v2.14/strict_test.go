package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	rollouts "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/analysis-health/analysis-health/internal/install/manifest"
)

// strictTarget returns the Argo Rollouts API type a fixture must decode into.
func strictTarget(kind string) any {
	switch kind {
	case "Rollout":
		return &rollouts.Rollout{}
	case "AnalysisRun":
		return &rollouts.AnalysisRun{}
	case "Experiment":
		return &rollouts.Experiment{}
	case "AnalysisTemplate":
		return &rollouts.AnalysisTemplate{}
	case "ClusterAnalysisTemplate":
		return &rollouts.ClusterAnalysisTemplate{}
	}
	return nil
}

// Every fixture and example decodes into the real v1alpha1 type (Argo Rollouts v1.8.5) with unknown
// fields rejected, so no fixture relies on a field or a type the API does not have.
func TestFixturesDecodeStrictly(t *testing.T) {
	var objs []manifest.Object
	for _, fx := range fixtures(t) {
		o, err := manifest.Decode(fx.Path, fx.Raw)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	examples, err := filepath.Glob("../../testdata/examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples in testdata/examples: %v", err)
	}
	for _, ex := range examples {
		raw, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		o, err := manifest.Decode(ex, raw)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	for _, o := range objs {
		t.Run(o.Where(), func(t *testing.T) {
			target := strictTarget(o.Kind())
			if target == nil {
				t.Fatalf("fixture of kind %s: no Argo Rollouts type to check it against", o.Kind())
			}
			raw, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(target); err != nil {
				t.Fatalf("does not decode strictly into %T: %v", target, err)
			}
		})
	}
}
