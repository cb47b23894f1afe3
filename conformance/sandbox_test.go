package conformance

import (
	"fmt"
	"testing"

	argolua "github.com/argoproj/argo-cd/v2/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/analysis-health/analysis-health/conformance/probe"
	"github.com/analysis-health/analysis-health/engine"
)

func TestSandboxMatchesArgoCD(t *testing.T) {
	for _, openLibs := range []bool{false, true} {
		for _, tc := range probe.Cases {
			t.Run(fmt.Sprintf("openLibs=%v/%s", openLibs, tc.Name), func(t *testing.T) {
				want, wantErr := argolua.VM{UseOpenLibs: openLibs}.ExecuteHealthLua(&unstructured.Unstructured{Object: probe.Object()}, tc.Script)
				got, gotErr := engine.Engine{Profile: engine.V214, OpenLibs: openLibs}.Health(probe.Object(), tc.Script)
				if probe.ErrText(wantErr) != probe.ErrText(gotErr) {
					t.Fatalf("error:\n argo-cd: %s\n engine:  %s", probe.ErrText(wantErr), probe.ErrText(gotErr))
				}
				if wantErr != nil {
					return
				}
				if string(want.Status) != got.Status || want.Message != got.Message {
					t.Errorf("argo-cd %+v, engine %+v", *want, got)
				}
			})
		}
	}
}
