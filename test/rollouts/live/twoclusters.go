// The topology Kargo users run: Kargo's control plane and a workload cluster (RunLiveTwoClusters).

package live

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	rolloutsconfig "github.com/argoproj/argo-rollouts/utils/config"
	goplugin "github.com/hashicorp/go-plugin"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/harness"
	"github.com/analysis-health/analysis-health/test/rollouts/installs"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

const (
	// workloadSecret is the kubeconfig Secret of every Project namespace (generate --kubeconfig-secret);
	// workloadName the workload cluster's name in Argo CD.
	workloadSecret = "workload"
	workloadName   = "workload"
	// readerSA is the ServiceAccount of the generated rbac.yaml.
	readerSA = "analysis-health-rollout-reader"
)

// TwoClusterScenarios are the live scenarios the two-cluster suite runs: a passed canary, a failed one,
// the background analysis still running at promotion, a rollback during analysis, a first deployment and
// an inconclusive run resumed. What each declares is LiveScenarios', as in one cluster.
var TwoClusterScenarios = []string{
	"canary-step-successful",
	"canary-step-failed",
	"canary-background-promoted-while-running",
	"canary-rollback-during-analysis",
	"first-deployment",
	"canary-step-inconclusive-resumed",
}

// rotationScenario is the scenario whose verification has its token revoked and renewed: its Freight's
// verification runs while the background analysis still does, so the plugin reads the workload cluster
// on several measurements.
const rotationScenario = "canary-background-promoted-while-running"

// workloadCluster is the workload cluster as the control plane knows it: registered with Argo CD, and
// granted to each Project's verification by the docs' multi-cluster steps.
type workloadCluster struct {
	c      *cluster.Cluster
	admin  *cluster.Clients
	server string
	cli    string
	// rbac is each Project's generated rbac.yaml, to re-apply at a renewal
	rbac map[string][]byte
}

func newWorkloadCluster(c *cluster.Cluster, cli string) (*workloadCluster, error) {
	if c.ServingCA == "" {
		return nil, fmt.Errorf("the workload cluster has no serving certificate of 127.0.0.1 (start it with a DataDir)")
	}
	admin, err := cluster.NewClients(c.Config)
	if err != nil {
		return nil, err
	}
	return &workloadCluster{c: c, admin: admin, server: c.Config.Host, cli: cli, rbac: map[string][]byte{}}, nil
}

// register adds the workload cluster to Argo CD as `argocd cluster add` does (argocd-live cluster-add:
// Argo CD's clusterauth and db, a cluster Secret in Argo CD's namespace).
func (wc *workloadCluster) register(a *installs.ArgoCD) error {
	out, err := exec.Command(a.Bin, "cluster-add", "-kubeconfig", a.Cluster.Kubeconfig, "-namespace", cluster.ArgoCDNamespace,
		"-cluster-kubeconfig", wc.c.Kubeconfig, "-name", workloadName, "-server", wc.server, "-ca-file", wc.c.ServingCA).CombinedOutput()
	if err != nil {
		return fmt.Errorf("argocd-live cluster-add: %v\n%s", err, out)
	}
	return nil
}

// grant is docs/kargo.md "Multi-cluster" for one Project: the generated rbac.yaml on the workload
// cluster, and the Secret `analysis-health kubeconfig` prints, applied in the Project namespace.
func (wc *workloadCluster) grant(w *harness.World, rbacFile, project string) error {
	raw, err := os.ReadFile(rbacFile)
	if err != nil {
		return err
	}
	wc.rbac[project] = raw
	if err := cluster.ApplyManifests(wc.admin.Dynamic, raw); err != nil {
		return fmt.Errorf("rbac.yaml on the workload cluster: %w", err)
	}
	return wc.writeSecret(w, project)
}

// writeSecret runs `analysis-health kubeconfig` as the docs do (a TokenRequest for the reader with the
// workload cluster's kubeconfig, its serving CA) and applies the Secret on the control plane.
func (wc *workloadCluster) writeSecret(w *harness.World, project string) error {
	cmd := exec.Command(wc.cli, "kubeconfig", "--kubeconfig-secret", workloadSecret, "--project", project,
		"--token-from-serviceaccount", w.Namespace+"/"+readerSA, "--kubeconfig", wc.c.Kubeconfig, "--ca-file", wc.c.ServingCA, "--duration", "1h")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("analysis-health kubeconfig: %v: %s", err, stderr.String())
	}
	return cluster.ApplyManifests(w.ControlPlane().Dynamic, out)
}

// revoke deletes the reader ServiceAccount (its tokens die with it) and waits until the token in the
// Project's Secret is refused by the workload cluster (which caches a token's authentication for a few
// seconds).
func (wc *workloadCluster) revoke(w *harness.World, project string) error {
	ctx := context.Background()
	sec, err := w.ControlPlane().Kube.CoreV1().Secrets(project).Get(ctx, workloadSecret, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	if err != nil {
		return err
	}
	old, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := wc.admin.Kube.CoreV1().ServiceAccounts(w.Namespace).Delete(ctx, readerSA, metav1.DeleteOptions{}); err != nil {
		return err
	}
	rollouts := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		_, err := old.Resource(rollouts).Namespace(w.Namespace).Get(ctx, harness.Name, metav1.GetOptions{})
		if apierrors.IsUnauthorized(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the revoked token still answered after 60 s: %v", err)
		}
	}
}

// renew is the user's renewal: rbac.yaml again (the ServiceAccount anew) and the same kubeconfig command.
func (wc *workloadCluster) renew(w *harness.World, project string) error {
	if err := cluster.ApplyManifests(wc.admin.Dynamic, wc.rbac[project]); err != nil {
		return err
	}
	return wc.writeSecret(w, project)
}

// twoClusterRun is what RecordLive does besides in the two-cluster suite: the workload cluster Argo CD
// deploys to, and a hook after each tick (the rotation).
type twoClusterRun struct {
	workload  *workloadCluster
	afterTick func(w *harness.World, k *kargoDriver) error
}

// RotationResult is the token rotation case of the two-cluster report.
type RotationResult struct {
	Scenario string `json:"scenario"`
	// RevokedWhile is when the reader's ServiceAccount was deleted;
	// Measurements the verification run's measurement phases from then on (the renewed Secret is read
	// by the same plugin process, no restart), collapsed; Rejected the plugin's message with the revoked
	// token; Verification, Verified how the Freight's verification ended.
	RevokedWhile string   `json:"revokedWhile"`
	Measurements []string `json:"measurements"`
	Rejected     string   `json:"rejected"`
	// SameProcess: one plugin process (by PID) measured with the revoked and the renewed token.
	SameProcess  bool     `json:"samePluginProcess"`
	Verification string   `json:"verification"`
	Verified     bool     `json:"verified"`
	Violations   []string `json:"violations,omitempty"`
}

// rotation revokes the Project's token while the release's Promotion runs (before Kargo verifies the
// Freight), waits for the plugin's Error naming the Secret, then renews it: the plugin must never report
// Successful in between, and the same plugin process must pick up the renewed Secret.
type rotation struct {
	wc               *workloadCluster
	res              RotationResult
	revokedAt        int // the measurements already noted
	revoked, renewed bool
	ticks            int
	pids             string // the plugin's processes when revoked
}

// pluginProcesses lists this test process's children that run a plugin binary Rollouts downloaded
// (plugin-bin/...): the plugin processes of the analysis controllers.
func pluginProcesses() string {
	entries, _ := os.ReadDir("/proc")
	parent := strconv.Itoa(os.Getpid())
	var pids []string
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat: pid (comm) state ppid …; comm may hold spaces, so the fields after its ")" are counted
		_, after, _ := bytes.Cut(stat, []byte(") "))
		fields := strings.Fields(string(after))
		if argv0, _, _ := bytes.Cut(cmd, []byte{0}); bytes.Contains(argv0, []byte("/plugin-bin/")) && len(fields) > 1 && fields[1] == parent {
			pids = append(pids, e.Name())
		}
	}
	sort.Strings(pids)
	return strings.Join(pids, " ")
}

func (r *rotation) afterTick(w *harness.World, k *kargoDriver) error {
	if k.real == nil || k.current == nil {
		return nil
	}
	ar, err := k.VerificationRun(w)
	if err != nil {
		return err
	}
	if !r.revoked {
		// the release's Promotion runs, and Kargo has not started the Freight's verification: its first
		// measurement will carry a revoked token (a run Kargo creates is measured only on a later tick,
		// but Kargo may create it at any moment after the Promotion succeeds)
		if k.current != k.release || ar != nil {
			return fmt.Errorf("the verification started before the token could be revoked")
		}
		if err := r.wc.revoke(w, k.real.ns); err != nil {
			return err
		}
		r.pids = pluginProcesses()
		r.revoked, r.res.RevokedWhile = true, "the release's Promotion "+k.current.phase+", before Kargo's verification"
		w.Event("the reader's ServiceAccount is deleted: the token in Secret %s/%s is revoked", k.real.ns, workloadSecret)
		return nil
	}
	if ar == nil {
		return nil
	}
	var ms []string
	var last string
	for _, mr := range ar.Status.MetricResults {
		for _, m := range mr.Measurements {
			ms = append(ms, string(m.Phase))
			last = m.Message
		}
	}
	r.ticks++
	for _, p := range ms[min(r.revokedAt, len(ms)):] {
		r.res.Measurements = kargoverify.Note(r.res.Measurements, p)
		if p == "Successful" && !r.renewed {
			r.res.Violations = append(r.res.Violations, fmt.Sprintf("tick %d: Successful while the Secret holds a revoked token", w.Reconciles))
		}
	}
	r.revokedAt = len(ms)
	if r.renewed {
		return nil
	}
	if harness.Last(ms) == "Error" {
		r.res.Rejected = last
		if err := r.wc.renew(w, k.real.ns); err != nil {
			return err
		}
		r.renewed = true
		r.res.SameProcess = r.pids != "" && r.pids == pluginProcesses()
		w.Event("the user renews the Secret (analysis-health kubeconfig)")
		return nil
	}
	if r.ticks > 5 {
		return fmt.Errorf("no Error measurement in 5 ticks with a revoked token: %v (%s)", ms, last)
	}
	return nil
}

// ClusterRole is one cluster of the report and what runs there.
type ClusterRole struct {
	Name  string   `json:"name"`
	Holds []string `json:"holds"`
}

// TwoClusterResult is one scenario of the two-cluster report.
type TwoClusterResult struct {
	Scenario             string   `json:"scenario"`
	Install              string   `json:"install"`
	Kargo                string   `json:"kargo"`
	Health               []string `json:"health"`
	Promotion            string   `json:"promotion"`
	Stage                string   `json:"stage"`
	Verification         string   `json:"verification"`
	Verified             bool     `json:"verified"`
	Rollback             string   `json:"rollback,omitempty"`
	RollbackVerification string   `json:"rollbackVerification,omitempty"`
	VerificationMessage  string   `json:"verificationMessage,omitempty"`
	Violations           []string `json:"violations"`
	// AsInOneCluster: Promotion, Stage, verification, Freight verified, rollback and whether the Freight
	// was verified early (a broken rule) are what the single-cluster suite recorded for the scenario and
	// install (test/testdata/live/<version>.yaml).
	AsInOneCluster bool `json:"asInOneCluster"`
	// PluginReads are the plugin's requests in each cluster during the scenario, by resource: in the
	// workload cluster those of the reader ServiceAccount, in the control plane those of the plugin's
	// process (its user agent); ours only.
	PluginReads map[string]map[string]int `json:"pluginReads,omitempty"`
}

// TwoClusterReport is test/testdata/live/two-clusters-<version>.yaml (docs/kargo.md "Multi-cluster").
type TwoClusterReport struct {
	ArgoCD        string             `json:"argocd"`
	Rollouts      string             `json:"rollouts"`
	Kargo         string             `json:"kargo"`
	Clusters      []ClusterRole      `json:"clusters"`
	Scenarios     []TwoClusterResult `json:"scenarios"`
	BuiltinBroken int                `json:"builtinBroken"`
	TokenRotation *RotationResult    `json:"tokenRotation"`
}

// stable leaves out what varies with the machine's speed (as LiveReport.stable): messages, the built-ins'
// violations, how many requests the plugin made (kept: which resources it read in which cluster).
func (r TwoClusterReport) stable() TwoClusterReport {
	out := r
	out.Scenarios, out.BuiltinBroken = nil, 0
	for _, s := range r.Scenarios {
		s.VerificationMessage = ""
		if s.Install != "ours" {
			s.Violations = nil
		}
		reads := map[string]map[string]int{}
		for c, m := range s.PluginReads {
			reads[c] = map[string]int{}
			for res, n := range m {
				reads[c][res] = min(n, 1)
			}
		}
		s.PluginReads = reads
		out.Scenarios = append(out.Scenarios, s)
	}
	if r.TokenRotation != nil {
		tr := *r.TokenRotation
		tr.Rejected = ""
		out.TokenRotation = &tr
	}
	return out
}

// auditCursor reads a cluster's audit log from where it last stopped.
type auditCursor struct {
	path   string
	offset int64
}

func (a *auditCursor) next() ([]cluster.Request, error) {
	time.Sleep(time.Second) // the API server writes a request's line as it completes
	reqs, off, err := cluster.AuditRequests(a.path, a.offset, "")
	a.offset = off
	return reqs, err
}

// pluginReads counts the plugin's requests since the cursors' last reads (one scenario's): in the workload
// cluster, those of a reader ServiceAccount (the scenario's namespace's); in the control plane, those of the plugin's process (client-go's
// default user agent begins with the executable's name, the file Rollouts downloaded the plugin to).
func pluginReads(wl, cp *auditCursor, agent string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{"workload": {}, "controlPlane": {}}
	wreqs, err := wl.next()
	if err != nil {
		return nil, err
	}
	for _, r := range wreqs {
		if r.ObjectRef.Resource != "" && strings.HasPrefix(r.User.Username, "system:serviceaccount:") && strings.HasSuffix(r.User.Username, ":"+readerSA) {
			out["workload"][r.ObjectRef.Resource]++
		}
	}
	creqs, err := cp.next()
	if err != nil {
		return nil, err
	}
	for _, r := range creqs {
		if r.ObjectRef.Resource != "" && strings.HasPrefix(r.UserAgent, agent+"/") {
			out["controlPlane"][r.ObjectRef.Resource]++
		}
	}
	return out, nil
}

// RunLiveTwoClusters runs TwoClusterScenarios in the topology Kargo users run: the control plane (Kargo
// v1.11.2's controller and webhooks, Argo CD's application controller and repo-server, the Rollouts
// analysis controller with the plugin, the Kargo Projects and their verification runs) and a workload
// cluster with RBAC (the Rollout, its own Rollouts controllers and runs, the generated rbac.yaml), each
// an API server program of its own on 127.0.0.1. Argo CD deploys through a cluster Secret, and the plugin
// reads the workload cluster only through each Project's kubeconfig Secret, written by `analysis-health
// kubeconfig`. With ours, then with the built-ins and no verification (as RunLive), then the token
// rotation; with update it writes the report, without it compares it (but for what stable leaves out).
func RunLiveTwoClusters(t *testing.T, cat harness.Catalogue, update bool) {
	if os.Getenv("E2E_LIVE_KARGO") == "0" {
		t.Skip("the two-cluster suite is about Kargo's own controller, which E2E_LIVE_KARGO=0 leaves out")
	}
	dir := t.TempDir()
	wlData := filepath.Join(dir, "workload")
	if err := os.MkdirAll(wlData, 0o755); err != nil {
		t.Fatal(err)
	}
	wl := &auditCursor{path: filepath.Join(dir, "workload-audit.log")}
	cp := &auditCursor{path: filepath.Join(dir, "control-plane-audit.log")}
	start := time.Now()
	env, err := harness.NewTwoClusterEnv(cluster.ClusterOptions{RBAC: true, AuditLog: wl.path, DataDir: wlData}, cluster.ClusterOptions{AuditLog: cp.path})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	t.Logf("two API servers up in %s", time.Since(start).Round(time.Second))
	bins := kargoverify.PreparePlugin(t)
	defer goplugin.CleanupClients()
	// the plugin's own cluster is the control plane's Rollouts controller's
	t.Setenv("KUBECONFIG", env.ControlPlane.Kubeconfig)
	config := map[string]string{"metricProviderPlugins": "- name: " + kargoverify.PluginName + "\n  location: file://" + bins.Plugin + "\n"}
	_, agent, err := rolloutsconfig.GetPluginDirectoryAndFilename(kargoverify.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := newWorkloadCluster(env.Cluster, bins.CLI)
	if err != nil {
		t.Fatal(err)
	}
	a, err := StartLive(env.ControlPlane, true, wc)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	kargo := startKargoIfAsked(t, env.ControlPlane)
	defer kargo.Close()
	report := TwoClusterReport{ArgoCD: a.Version, Rollouts: harness.RolloutsVersion(), Kargo: "kargo " + installs.KargoVersion,
		Clusters: []ClusterRole{
			{Name: "controlPlane", Holds: []string{"Kargo " + installs.KargoVersion + " controller and webhooks", "Argo CD " + a.Version + " application controller and repo-server",
				"Rollouts " + harness.RolloutsVersion() + " analysis controller with the plugin", "Kargo Projects: Stages, Freight, Promotions, verification AnalysisRuns, the kubeconfig Secret"}},
			{Name: "workload", Holds: []string{"the Rollout and its AnalysisRuns", "Rollouts " + harness.RolloutsVersion() + " rollout, analysis and experiment controllers",
				"rbac.yaml (the plugin's ServiceAccount, Role, RoleBinding)", "argocd-manager (Argo CD's cluster Secret)"}},
		}}
	single := oneCluster(t)
	wants := map[string]LiveScenario{}
	for _, d := range declared(cat) {
		wants[d.Name] = d
	}
	record := func(t *testing.T, name string, ours bool, two *twoClusterRun) (*LiveResult, harness.Scenario) {
		sc, ok := cat.Named(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		t.Chdir(t.TempDir())                 // DownloadPlugins writes plugin-bin/ below the working directory
		if _, err := wl.next(); err != nil { // the reads before are not this scenario's
			t.Fatal(err)
		}
		if _, err := cp.next(); err != nil {
			t.Fatal(err)
		}
		res, err := RecordLive(env, a, kargo, sc, bins, config, ours, two)
		if err != nil {
			t.Fatal(err)
		}
		return res, sc
	}
	result := func(t *testing.T, res *LiveResult, install string, violations []string) TwoClusterResult {
		r := TwoClusterResult{Scenario: res.Scenario, Install: install, Kargo: res.Kargo, Health: res.Health, Promotion: res.Promotion,
			Stage: res.finalStage(), Verification: res.finalVerification(), Verified: res.Verified, Rollback: res.Rollback,
			VerificationMessage: res.VerificationMessage, Violations: violations}
		if len(res.RollbackVerification) > 0 {
			r.RollbackVerification = harness.Last(res.RollbackVerification)
		}
		if r.Violations == nil {
			r.Violations = []string{}
		}
		one, ok := single[install+"/"+res.Scenario]
		if !ok {
			t.Errorf("the single-cluster report has no %s run of %s", install, res.Scenario)
		} else if diff := asInOneCluster(r, one); diff != "" {
			t.Errorf("%s, %s: %s", res.Scenario, install, diff)
		} else {
			r.AsInOneCluster = true
		}
		return r
	}
	for _, name := range TwoClusterScenarios {
		want := wants[name]
		t.Run(name, func(t *testing.T) {
			res, sc := record(t, name, true, &twoClusterRun{workload: wc})
			reads, err := pluginReads(wl, cp, agent)
			if err != nil {
				t.Fatal(err)
			}
			r := result(t, res, "ours", brokenRules(sc, res))
			r.PluginReads = reads
			report.Scenarios = append(report.Scenarios, r)
			t.Logf("health %v; Promotion %s; Stage %s; verification %s, verified %v; plugin reads %v; %q", r.Health, r.Promotion, r.Stage, r.Verification, r.Verified, reads, r.VerificationMessage)
			for _, v := range r.Violations {
				t.Error(v)
			}
			checkDeclared(t, want, res)
			checkReads(t, r)
		})
	}
	// the rotation, with ours
	t.Run("token-rotation", func(t *testing.T) {
		rot := &rotation{wc: wc, res: RotationResult{Scenario: rotationScenario}}
		res, sc := record(t, rotationScenario, true, &twoClusterRun{workload: wc, afterTick: rot.afterTick})
		rot.res.Verification, rot.res.Verified = res.finalVerification(), res.Verified
		rot.res.Violations = append(rot.res.Violations, brokenRules(sc, res)...)
		report.TokenRotation = &rot.res
		t.Logf("rotation: %+v", rot.res)
		if !rot.renewed {
			t.Fatalf("the token was never revoked and renewed: %+v", rot.res)
		}
		for _, v := range rot.res.Violations {
			t.Error(v)
		}
		for _, part := range []string{"the token in Secret " + "kargo-", "/" + workloadSecret + ` key "kubeconfig" was rejected by its cluster (HTTP 401`, "renew it with `analysis-health kubeconfig --kubeconfig-secret " + workloadSecret} {
			if !strings.Contains(rot.res.Rejected, part) {
				t.Errorf("the measurement with the revoked token %q does not say %q", rot.res.Rejected, part)
			}
		}
		if now := pluginProcesses(); !rot.res.SameProcess || now != rot.pids {
			t.Errorf("the plugin's processes: %q when revoked, %q now: the renewed Secret must be read without a restart", rot.pids, now)
		}
		if rot.res.Verification != "Successful" || !rot.res.Verified {
			t.Errorf("after the renewal: verification %s, verified %v; want Successful, true", rot.res.Verification, rot.res.Verified)
		}
	})
	// without analysis-health: the built-in health checks and no verification, as in RunLive
	a.Stop()
	if err := a.Install(); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	for _, name := range TwoClusterScenarios {
		t.Run("built-in/"+name, func(t *testing.T) {
			res, sc := record(t, name, false, &twoClusterRun{workload: wc})
			b := brokenRules(sc, res)
			report.BuiltinBroken += len(b)
			report.Scenarios = append(report.Scenarios, result(t, res, "built-in", b))
			t.Logf("built-in: health %v, Promotion %s, Stage %v, verification %v, verified %v; rules broken %v", res.Health, res.Promotion, res.Stage, res.Verification, res.Verified, b)
		})
	}
	if t.Failed() {
		return
	}
	if report.BuiltinBroken == 0 {
		t.Errorf("Argo CD's built-in health checks and a Stage without verification broke no rule in %d scenarios across two clusters", len(TwoClusterScenarios))
	}
	writeOrCompare(t, filepath.Join(cluster.TestdataDir(), "live", "two-clusters-"+harness.RolloutsVersion()+".yaml"),
		"Written by test/rollouts/live RunLiveTwoClusters (make e2e-live UPDATE=1): Kargo's control plane and a workload cluster", report.sortedForReport(), TwoClusterReport.stable, update)
}

// earlyVerified: among a scenario's broken rules, the Freight verified before its analysis passed.
func earlyVerified(violations []string) bool {
	for _, v := range violations {
		if strings.Contains(v, "Freight verified before every analysis") {
			return true
		}
	}
	return false
}

// oneCluster is the single-cluster suite's committed report, by install and scenario.
func oneCluster(t *testing.T) map[string]LiveResult {
	t.Helper()
	path := filepath.Join(cluster.TestdataDir(), "live", harness.RolloutsVersion()+".yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep LiveReport
	if err := yaml.UnmarshalStrict(raw, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]LiveResult{}
	for _, s := range rep.Scenarios {
		out[s.Install+"/"+s.Scenario] = s
	}
	return out
}

// asInOneCluster compares a two-cluster result with the single-cluster one, and says how they differ.
func asInOneCluster(r TwoClusterResult, one LiveResult) string {
	oneRollback := ""
	if len(one.RollbackVerification) > 0 {
		oneRollback = harness.Last(one.RollbackVerification)
	}
	a := fmt.Sprintf("Promotion %s, Stage %s, verification %s, verified %v, rollback %q %q, verified early %v",
		r.Promotion, r.Stage, r.Verification, r.Verified, r.Rollback, r.RollbackVerification, earlyVerified(r.Violations))
	b := fmt.Sprintf("Promotion %s, Stage %s, verification %s, verified %v, rollback %q %q, verified early %v",
		one.Promotion, one.finalStage(), one.finalVerification(), one.Verified, one.Rollback, oneRollback, earlyVerified(one.Violations))
	if a == b {
		return ""
	}
	return fmt.Sprintf("two clusters: %s; one cluster: %s", a, b)
}

// checkDeclared holds a scenario to what LiveScenarios declares of it, as RunLive does.
func checkDeclared(t *testing.T, want LiveScenario, res *LiveResult) {
	t.Helper()
	if got, w := strings.Join(res.Health, " "), strings.Join(want.Health, " "); got != w {
		t.Errorf("live Application health %v, the scenario declares %v", res.Health, want.Health)
	}
	if res.Promotion != want.Promotion || res.finalStage() != want.Stage || res.finalVerification() != want.Verification || res.Verified != want.Verified {
		t.Errorf("Promotion %s, Stage %s, verification %s, verified %v; the scenario declares %s, %s, %s, %v",
			res.Promotion, res.finalStage(), res.finalVerification(), res.Verified, want.Promotion, want.Stage, want.Verification, want.Verified)
	}
	if res.Rollback != want.Rollback || harness.Last(res.RollbackVerification) != want.RollbackVerification {
		t.Errorf("rollback Promotion %q, its verification %v; the scenario declares %q, %q", res.Rollback, res.RollbackVerification, want.Rollback, want.RollbackVerification)
	}
}

// checkReads: a verification that ran read the Rollout and its runs from the workload cluster only, and
// from the control plane nothing but its Secret.
func checkReads(t *testing.T, r TwoClusterResult) {
	t.Helper()
	for res, n := range r.PluginReads["controlPlane"] {
		if res != "secrets" {
			t.Errorf("the plugin made %d requests on %s in the control plane", n, res)
		}
	}
	started := r.Verification != kargoverify.NotStarted || (r.RollbackVerification != "" && r.RollbackVerification != kargoverify.NotStarted)
	if !started {
		return
	}
	for _, res := range []string{"rollouts", "analysisruns"} {
		if r.PluginReads["workload"][res] == 0 {
			t.Errorf("a verification ran, and the plugin read no %s in the workload cluster: %v", res, r.PluginReads)
		}
	}
	if r.PluginReads["controlPlane"]["secrets"] == 0 {
		t.Errorf("a verification ran, and the plugin never read its kubeconfig Secret: %v", r.PluginReads)
	}
}

// sortedForReport puts ours first and gives every scenario of ours both clusters' reads, even none.
func (r TwoClusterReport) sortedForReport() TwoClusterReport {
	for i := range r.Scenarios {
		for c := range r.Scenarios[i].PluginReads {
			if len(r.Scenarios[i].PluginReads[c]) == 0 {
				r.Scenarios[i].PluginReads[c] = map[string]int{}
			}
		}
	}
	sort.SliceStable(r.Scenarios, func(i, j int) bool {
		return r.Scenarios[i].Install == "ours" && r.Scenarios[j].Install != "ours"
	})
	return r
}
