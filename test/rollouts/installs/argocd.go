// Package installs runs Argo CD's and Kargo's own programs (test/live-argocd-v3.6, test/kargo-v1.11) on a
// cluster of package cluster, installed from their vendored charts and CRDs, for the live suite.
package installs

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/analysis-health/analysis-health/internal/upstream"
	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// The live suite: Argo CD v3.6's own application controller and repo-server (the program of
// test/live-argocd-v3.6, a subprocess: its module pins k8s.io/* v0.37.0, this one Rollouts' v0.34.5) on the
// same API server as the Rollouts controllers, delivering the scenarios' revisions from a git
// repository instead of the recorder's own writes (Delivery).

// ArgoCD is the Argo CD program on the Env's cluster.
type ArgoCD struct {
	Bin     string
	Dir     string
	Cluster *cluster.Cluster
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	// Log is the program's stderr (Argo CD's own JSON logs).
	Log string
	// PersistResourceHealth is the application controller's --persist-resource-health as the running
	// program read it from the installed argocd-cmd-params-cm.
	PersistResourceHealth bool
	// Version is the Argo CD release the program was built from (github.com/argoproj/argo-cd/v3 in its
	// build information, so test/live-argocd-v3.6's go.mod pin as compiled into Bin), for the reports.
	Version string
}

// argoCDModule is the module whose version the program's build information names.
const argoCDModule = "github.com/argoproj/argo-cd/v3"

// builtVersion reads the Argo CD version compiled into the program at bin.
func builtVersion(bin string) (string, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin, err)
	}
	for _, d := range info.Deps {
		if d.Path == argoCDModule {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s: no %s in its build information", bin, argoCDModule)
}

// NewArgoCD finds the program: $E2E_ARGOCD if set (`make e2e-live` builds it once), else it is built from
// test/live-argocd-v3.6 into a temporary directory.
func NewArgoCD(c *cluster.Cluster) (*ArgoCD, error) {
	dir, err := os.MkdirTemp("", "e2e-argocd-")
	if err != nil {
		return nil, err
	}
	a := &ArgoCD{Dir: dir, Cluster: c, Bin: os.Getenv("E2E_ARGOCD"), Log: filepath.Join(dir, "argocd.log")}
	if a.Bin == "" {
		a.Bin = filepath.Join(dir, "argocd-live")
		cmd := exec.Command("go", "build", "-o", a.Bin, ".")
		cmd.Dir = filepath.Join(cluster.RepoRoot(), "test", "live-argocd-v3.6")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.3")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s: %v\n%s", cmd.Dir, err, out)
		}
	}
	if a.Version, err = builtVersion(a.Bin); err != nil {
		return nil, err
	}
	return a, nil
}

// vendorDir is the upstream tree, as internal/upstream finds it for every proof ($ANALYSIS_HEALTH_VENDOR,
// else bin/upstream after `make upstream`, ...).
func vendorDir() string {
	d, err := upstream.VendorDir()
	if err != nil {
		return filepath.Join(cluster.RepoRoot(), filepath.FromSlash(upstream.AssembledDir))
	}
	return d
}

// Install creates Argo CD's CRDs and its argocd-cm, argocd-secret, argocd-cmd-params-cm and
// argocd-notifications-cm, rendered by Helm through the vendored argo-helm argo-cd chart with the values
// files in order (generate --format helm, generate --format notifications), or with the chart's defaults
// when there are none (Argo CD's built-in health checks only).
func (a *ArgoCD) Install(values ...string) error {
	chart := filepath.Join(vendorDir(), "argo-helm", "charts", "argo-cd")
	if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
		return fmt.Errorf("the argo-helm argo-cd chart is not there: %v (run `make upstream`)", err)
	}
	args := []string{"install", "-kubeconfig", a.Cluster.Kubeconfig, "-namespace", cluster.ArgoCDNamespace, "-chart", chart}
	for _, v := range values {
		if v != "" { // a caller's "no values of mine": the chart's defaults
			args = append(args, "-values", v)
		}
	}
	if out, err := exec.Command(a.Bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("argocd-live install: %v\n%s", err, out)
	}
	return nil
}

// Start runs the application controller and the repo-server until Stop.
func (a *ArgoCD) Start() error {
	logf, err := os.OpenFile(a.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	a.cmd = exec.Command(a.Bin, "run", "-kubeconfig", a.Cluster.Kubeconfig, "-namespace", cluster.ArgoCDNamespace, "-state", a.Dir)
	a.cmd.Stderr = logf
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := a.cmd.Start(); err != nil {
		return err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// ready <repo-server address> persist-resource-health <bool>
			if f := strings.Fields(sc.Text()); len(f) > 0 && f[0] == "ready" {
				a.PersistResourceHealth = len(f) == 4 && f[2] == "persist-resource-health" && f[3] == "true"
				ready <- nil
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
		ready <- fmt.Errorf("argocd-live exited before it was ready (log: %s)", a.Log)
	}()
	select {
	case err = <-ready:
	case <-time.After(2 * time.Minute):
		err = fmt.Errorf("argocd-live was not ready after 2 minutes (log: %s)", a.Log)
	}
	if err != nil {
		a.Stop()
	}
	return err
}

// Stop ends the program (closing its stdin).
func (a *ArgoCD) Stop() {
	if a.stdin != nil {
		_ = a.stdin.Close()
	}
	if a.cmd != nil && a.cmd.Process != nil {
		done := make(chan struct{})
		go func() { _ = a.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = a.cmd.Process.Kill()
			<-done
		}
	}
	a.cmd, a.stdin = nil, nil
}

// Close stops the program and removes its files.
func (a *ArgoCD) Close() {
	a.Stop()
	_ = os.RemoveAll(a.Dir)
}

// HealthChange is one change of the Application's status.health.status seen by the watch.
type HealthChange struct {
	Status string
	// Recorded: seen after the release started recording (StartRecording).
	Recorded bool
}
