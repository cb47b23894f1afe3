package rolloutplugin

import (
	"flag"
	"io"

	"k8s.io/klog/v2"

	"github.com/analysis-health/analysis-health/internal/plugin/remote"
)

// The client of a remote cluster, the kubeconfig's checks and the bounds on its server's answers are
// package remote's; these names are kept for the callers that knew them here.

// MaxRemoteResponse bounds a remote cluster's answer to a get or a list page, whole (a watch event: remote.MaxEvent).
const MaxRemoteResponse = remote.MaxResponse

// ErrResponseTooLarge is the error of a remote answer over MaxRemoteResponse.
var ErrResponseTooLarge = remote.ErrResponseTooLarge

// kubeconfigSecrets lists what of a kubeconfig must never be printed (remote.Secrets).
func kubeconfigSecrets(kubeconfig []byte) []string { return remote.Secrets(kubeconfig) }

// SilenceClientLogs turns off client-go's own log (klog), which the plugin's process would print on
// stderr into the controller's log: it quotes request URLs (the namespace and name of a config, which an
// AnalysisRun may take from a Secret) and remote servers' answers. The plugin logs each failure itself,
// redacted (Options.Log). The command calls it once at start.
func SilenceClientLogs() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	// errors go to stderr too unless the threshold is above them
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		_ = fs.Set(k, v)
	}
	klog.SetOutput(io.Discard)
}
