package rolloutplugin_test

import (
	"io"
	"log"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/analysis-health/analysis-health/internal/gate/inspect"
	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

func newForbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "argoproj.io", Resource: "rollouts"}, "checkout",
		errString(`User "system:serviceaccount:argo-rollouts:argo-rollouts" cannot get resource "rollouts"`))
}

type errString string

func (e errString) Error() string { return string(e) }

// TestMain silences go-plugin's test-mode server, which logs through the standard logger.
func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// inspect (which the light CLI builds) reports the plugin's verification time with its poll interval.
func TestInspectKnowsThePollInterval(t *testing.T) {
	if inspect.PluginPollInterval != rolloutplugin.DefaultPollInterval {
		t.Fatalf("inspect assumes %s, the plugin polls every %s", inspect.PluginPollInterval, rolloutplugin.DefaultPollInterval)
	}
}
