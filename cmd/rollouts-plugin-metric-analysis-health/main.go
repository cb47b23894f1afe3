// Command rollouts-plugin-metric-analysis-health is the Argo Rollouts metric-provider plugin
// analysis-health/rollout-analysis: the Rollouts controller starts it (argo-rollouts-config
// metricProviderPlugins) and asks it, over go-plugin's net/rpc, for measurements that carry the verdict of
// a Rollout's own analysis. See docs/kargo.md.
//
// It is a binary of its own because it needs a Kubernetes client; cmd/analysis-health stays light.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/argoproj/argo-rollouts/metricproviders/plugin/rpc"
	goPlugin "github.com/hashicorp/go-plugin"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
	"github.com/analysis-health/analysis-health/internal/plugin/watchcache"
	"github.com/analysis-health/analysis-health/internal/version"
)

func main() {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig `FILE` of the cluster the Rollouts controller runs against\n(default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	printVersion := fs.Bool("version", false, "print the version and exit")
	var pairs []rolloutplugin.NamespacePair
	fs.Func(rolloutplugin.AllowNamespacePairFlag, "RUN_NAMESPACE=ROLLOUT_NAMESPACE: AnalysisRuns in the first namespace may read Rollouts in the\nsecond with the controller's identity (repeat for more pairs; a run always reads its own namespace;\ndocs/security.md)", func(v string) error {
		pair, err := rolloutplugin.ParseNamespacePair(v)
		pairs = append(pairs, pair)
		return err
	})
	watches := fs.Bool("watch", true, "answer Running measurements from watches of rollouts, analysisruns and experiments (docs/kargo.md,\n\"Reads served from watches\"); false: read every measurement directly, three requests each, and\nkeep no informers")
	copyTo := fs.String("copy-to", "", "copy this binary to `PATH` and exit: the init container of a file:// install runs it,\nas plugin images have no shell and no cp")
	if code, done := parse(fs, os.Args[1:], os.Stdout, os.Stderr); done {
		os.Exit(code)
	}
	if *printVersion {
		fmt.Println("rollouts-plugin-metric-analysis-health", version.String())
		return
	}
	if *copyTo != "" {
		if err := copySelf(*copyTo); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if os.Getenv(rolloutplugin.Handshake.MagicCookieKey) != rolloutplugin.Handshake.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "%s is an Argo Rollouts metric-provider plugin (%s): the Rollouts controller starts it, configured in argo-rollouts-config metricProviderPlugins; see %s\n", command, rolloutplugin.Name, kargoDocs)
		os.Exit(1)
	}
	rolloutplugin.SilenceClientLogs()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	var watch *watchcache.Options
	if *watches {
		watch = &watchcache.Options{}
	}
	impl := rolloutplugin.New(rolloutplugin.Options{Kubeconfig: *kubeconfig, Log: os.Stderr, Watch: watch, AllowNamespacePairs: pairs})
	goPlugin.Serve(&goPlugin.ServeConfig{
		HandshakeConfig: rolloutplugin.Handshake,
		Plugins:         map[string]goPlugin.Plugin{rolloutplugin.PluginMapKey: &rpc.RpcMetricProviderPlugin{Impl: impl}},
	})
}

// parse reads the flags. --help (-h, -help) prints the usage on stdout and exits 0, as a request for
// help is no error; a bad flag prints the error and the usage on stderr and exits 2. done is false when
// the command goes on.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		usage(fs, stdout)
		return 0, true
	default:
		fmt.Fprintln(stderr, err)
		usage(fs, stderr)
		return 2, true
	}
}

func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, `%s is the Argo Rollouts metric-provider plugin
%s: the Rollouts controller starts it (argo-rollouts-config
metricProviderPlugins) and asks it for measurements that carry the verdict of a Rollout's own
analysis. Started by hand it only prints its version or copies itself (--copy-to). See
%s.

Usage:
  %s [--kubeconfig FILE] [--allow-namespace-pair RUN_NAMESPACE=ROLLOUT_NAMESPACE ...] [--watch=false]
  %s --version
  %s --copy-to PATH

Flags:
`, fs.Name(), rolloutplugin.Name, kargoDocs, fs.Name(), fs.Name(), fs.Name())
	// The flags as the usage lines spell them (--name); the flag package accepts both spellings.
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(help, "\n", "\n    \t"))
	})
}

// gcPercent is the garbage collector's target unless GOGC is set (go-plugin starts the plugin with the
// controller's environment, hashicorp/go-plugin client.go Start). The plugin's live heap is what its
// watches keep, and at Go's default the heap grows to twice that before a collection: memory the
// controller's container pays for, in a process that allocates mostly garbage (each measurement's
// decoded objects and Lua sandboxes). With the watch cache's deflated projections, half the headroom
// keeps the plugin under a quarter of the controller's memory at 2,000 and 10,000 Rollouts
// (docs/reliability.md, "Load"); with both the plugin's CPU at 2,000 went from 0.16 to 0.23 cores.
const gcPercent = 50

// command is the plugin's name, whatever path the controller starts it by (plugin-bin/<namespace>/<name>).
const command = "rollouts-plugin-metric-analysis-health"

// kargoDocs is where the plugin is documented.
const kargoDocs = "https://github.com/analysis-health/analysis-health/blob/main/docs/kargo.md"

// copySelf writes this executable to dst, executable, through a temporary file in dst's folder renamed
// into place, so that the controller never finds a partial binary at its file:// location.
func copySelf(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--copy-to: cannot find this binary: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("--copy-to: %w", err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return fmt.Errorf("--copy-to %s: %w", dst, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return fmt.Errorf("--copy-to %s: %w", dst, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return fmt.Errorf("--copy-to %s: %w", dst, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--copy-to %s: %w", dst, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("--copy-to %s: %w", dst, err)
	}
	return nil
}
