// Package cluster starts the proofs' real API server (the program of test/kube-apiserver-v1.34) on
// 127.0.0.1 with the Rollouts CRDs, and gives the clients that act on it: the controllers' own, and the
// recorder's, guarded so that it cannot write what only a controller writes (an AnalysisRun's or an
// Experiment's status, an Application's status).
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-rollouts/rollout"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// Cluster is the API server program of ../apiserver (etcd, kube-apiserver v1.34.5 and Kubernetes'
// ReplicaSet controller, plus a Pod-readiness loop standing in for the kubelet) running as a subprocess
// on 127.0.0.1, with the Rollouts CRDs of the Rollouts module this package is built against installed.
type Cluster struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Scanner
	mu     sync.Mutex
	dir    string
	Log    string // the program's stderr

	// Config reaches the API server with full rights. The controllers use clients made from it as they
	// are; the recorder's own clients go through a guard (see guardTransport).
	Config *rest.Config
	// Kubeconfig is the path of the file holding Config, for processes of their own (a plugin).
	Kubeconfig string
	// ServingCA is the certificate the API server serves (and its own authority), which names 127.0.0.1:
	// with ClusterOptions.DataDir only ("" otherwise: the loopback certificate names no address another
	// process reaches it by). AuditLog is ClusterOptions.AuditLog.
	ServingCA, AuditLog string
}

// PID is the API server program's process (etcd with it), whose CPU and memory the load reports.
func (c *Cluster) PID() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// ClusterOptions are flags of the API server program (../apiserver): RBAC authorization, the audit log
// file, and a data directory that a later StartClusterWith on the same directory restarts from.
type ClusterOptions struct {
	RBAC     bool
	AuditLog string
	DataDir  string
}

func (o ClusterOptions) args() []string {
	var args []string
	if o.RBAC {
		args = append(args, "-rbac")
	}
	if o.AuditLog != "" {
		args = append(args, "-audit-log", o.AuditLog)
	}
	if o.DataDir != "" {
		args = append(args, "-data-dir", o.DataDir)
	}
	return args
}

// StartCluster starts the API server program. The binary is $E2E_APISERVER if set (the Makefile builds
// it once for both recorder modules), else it is built from ../apiserver into a temporary directory.
func StartCluster() (*Cluster, error) { return StartClusterWith(ClusterOptions{}) }

// StartClusterWith starts the API server program with options; on a DataDir that held a cluster, the
// CRDs are there already.
func StartClusterWith(o ClusterOptions) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "e2e-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, Log: filepath.Join(dir, "apiserver.log")}
	bin := os.Getenv("E2E_APISERVER")
	if bin == "" {
		if bin, err = buildAPIServer(dir); err != nil {
			return nil, err
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	logf, err := os.Create(c.Log)
	if err != nil {
		return nil, err
	}
	c.cmd = exec.Command(bin, append([]string{"-kubeconfig", kubeconfig}, o.args()...)...)
	c.cmd.Stderr = logf
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.stdout = bufio.NewScanner(out)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	ready := make(chan error, 1)
	go func() {
		for c.stdout.Scan() {
			if c.stdout.Text() == "ready" {
				ready <- nil
				return
			}
		}
		ready <- fmt.Errorf("the API server program exited before it was ready (log: %s)", c.Log)
	}()
	select {
	case err = <-ready:
	case <-time.After(3 * time.Minute):
		err = fmt.Errorf("the API server program was not ready after 3 minutes (log: %s)", c.Log)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Kubeconfig, c.AuditLog = kubeconfig, o.AuditLog
	if o.DataDir != "" {
		c.ServingCA = filepath.Join(o.DataDir, "serving.crt")
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		c.Close()
		return nil, err
	}
	c.Config.QPS, c.Config.Burst = 1000, 1000
	if err := c.installCRDs(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sourceDir is the directory of this file, from which ../apiserver and the module cache are found
// (go test does not build with -trimpath).
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func buildAPIServer(dir string) (string, error) {
	bin := filepath.Join(dir, "apiserver")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(RepoRoot(), "test", "kube-apiserver-v1.34")
	cmd.Env = os.Environ()
	if os.Getenv("GOTOOLCHAIN") == "" || os.Getenv("GOTOOLCHAIN") == "local" {
		// the same toolchain as the v1.10.2 recorder, so the two share one build of k8s.io/kubernetes
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN=go1.27.3")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", cmd.Dir, err, out)
	}
	return bin, nil
}

// Command sends one line to the program and waits for its answer.
func (c *Cluster) Command(line string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := fmt.Fprintln(c.stdin, line); err != nil {
		return err
	}
	if !c.stdout.Scan() {
		return fmt.Errorf("the API server program exited (log: %s)", c.Log)
	}
	if ans := c.stdout.Text(); ans != "ok" {
		return fmt.Errorf("%s: %s", line, ans)
	}
	return nil
}

// Close stops the program (closing its stdin) and removes its files.
func (c *Cluster) Close() {
	if c.stdin != nil {
		_ = c.stdin.Close()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(c.dir)
}

// RolloutsModuleDir is the directory of the argo-rollouts module this package is built against, found
// from the source file of one of its functions.
func RolloutsModuleDir() string {
	file, _ := runtimeFuncFile(rollout.NewController)
	// .../argo-rollouts@vX.Y.Z/rollout/controller.go
	return filepath.Dir(filepath.Dir(file))
}

func runtimeFuncFile(f any) (string, int) {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).FileLine(reflect.ValueOf(f).Pointer())
}

var crdFiles = []string{"rollout-crd.yaml", "analysis-run-crd.yaml", "analysis-template-crd.yaml",
	"cluster-analysis-template-crd.yaml", "experiment-crd.yaml"}

// installCRDs creates the Rollouts CRDs shipped in the module (manifests/crds) and waits until they
// are Established, so objects are validated against the same schemas the controller was released with.
func (c *Cluster) installCRDs() error {
	paths := make([]string, len(crdFiles))
	for i, f := range crdFiles {
		paths[i] = filepath.Join(RolloutsModuleDir(), "manifests", "crds", f)
	}
	return c.InstallCRDs(paths...)
}

// InstallCRDs creates the CRDs of the given files (decoded strictly; one already there is kept) and waits
// until each is Established, so that objects of its kinds can be created at once.
func (c *Cluster) InstallCRDs(paths ...string) error {
	client, err := apiextclient.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var names []string
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", path, err)
		}
		names = append(names, crd.Name)
	}
	deadline := time.Now().Add(time.Minute)
	for _, name := range names {
		for {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after a minute", name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// Clients are the typed clients of one party (the controllers, or the recorder).
type Clients struct {
	Kube    kubernetes.Interface
	Argo    versioned.Interface
	Dynamic dynamic.Interface
}

func NewClients(cfg *rest.Config) (*Clients, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	argo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kube, Argo: argo, Dynamic: dyn}, nil
}

// ErrAnalysisStatusWrite is what the recorder's clients return for a write of an AnalysisRun's or an
// Experiment's status: only the Rollouts controllers may write those.
var ErrAnalysisStatusWrite = errors.New("the recorder may not write an AnalysisRun's or an Experiment's status")

// analysisWrite matches the API paths through which an AnalysisRun's or Experiment's status can change:
// an update or patch of the object itself (the Rollouts CRDs declare no status subresource for either
// kind, manifests/crds/*-crd.yaml `subresources: {}`, so that is how the controllers write status), and
// the status subresource path, in case a later CRD adds one. analysisCreate matches their collections:
// a create may carry a status as well, for the same reason.
var (
	analysisWrite  = regexp.MustCompile(`/apis/argoproj\.io/v1alpha1/namespaces/[^/]+/(analysisruns|experiments)/[^/]+(/status)?$`)
	analysisCreate = regexp.MustCompile(`/apis/argoproj\.io/v1alpha1/namespaces/[^/]+/(analysisruns|experiments)$`)
	// Argo CD's Application CRD declares no status subresource either: the application controller
	// writes status with an update or patch of the object, so a write of the object may carry status.
	applicationWrite  = regexp.MustCompile(`/apis/argoproj\.io/v1alpha1/namespaces/[^/]+/applications/[^/]+(/status)?$`)
	applicationCreate = regexp.MustCompile(`/apis/argoproj\.io/v1alpha1/namespaces/[^/]+/applications$`)
	rolloutStatus     = regexp.MustCompile(`/apis/argoproj\.io/v1alpha1/namespaces/[^/]+/rollouts/[^/]+/status$`)
)

// ErrApplicationStatusWrite is what the recorder's clients return for a write of an Application's status,
// or, in a live World, of a Rollout's: only Argo CD and the Rollouts controllers write those.
var ErrApplicationStatusWrite = errors.New("the recorder may not write an Application's status, nor a live Rollout's")

// UserAction is the one write of an AnalysisRun or Experiment that a user makes: the merge patch of our
// terminate actions (lua/argoproj.io/{AnalysisRun,Experiment}/actions/terminate), which is what Argo CD
// sends for an action that changes spec.terminate (server/application RunResourceAction: a merge patch of
// the action's result against the live object).
const UserAction = `{"spec":{"terminate":true}}`

// guardTransport refuses the recorder's writes of AnalysisRuns' and Experiments' status, and counts them
// so a scenario that tried fails even if it ignored the error. Allowed: creating one without a status (a
// Verification run), and the terminate action's patch.
type guardTransport struct {
	rt      http.RoundTripper
	refused *int
	mu      *sync.Mutex
	// live: the World's revisions come from Argo CD (Options.Delivery), its Rollout's status from the
	// controllers alone
	live bool
}

func (g guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := g.applicationGuard(r); err != nil {
		g.mu.Lock()
		*g.refused++
		g.mu.Unlock()
		return nil, err
	}
	refuse := false
	switch {
	case r.Method == http.MethodPost && analysisCreate.MatchString(r.URL.Path):
		body, err := ReadBody(r)
		if err != nil {
			return nil, err
		}
		var obj struct {
			Status map[string]any `json:"status"`
		}
		// a typed client serialises an empty status as zero values ({"phase":""}): only a value counts
		refuse = json.Unmarshal(body, &obj) != nil || carriesValue(map[string]any(obj.Status))
	case r.Method == http.MethodPatch && analysisWrite.MatchString(r.URL.Path) && !strings.HasSuffix(r.URL.Path, "/status"):
		body, err := ReadBody(r)
		if err != nil {
			return nil, err
		}
		refuse = r.Header.Get("Content-Type") != string(types.MergePatchType) || !jsonEqual(body, UserAction)
	case r.Method == http.MethodPut || r.Method == http.MethodPatch || r.Method == http.MethodPost:
		refuse = analysisWrite.MatchString(r.URL.Path)
	}
	if refuse {
		g.mu.Lock()
		*g.refused++
		g.mu.Unlock()
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrAnalysisStatusWrite)
	}
	return g.rt.RoundTrip(r)
}

// applicationGuard refuses writes that could change an Application's status (an update, a create with a
// status, a patch naming status) and, in a live World, any write of a Rollout's status subresource (the
// user actions that patch it go through Argo CD in reality, which the live suite does not run).
// Allowed: creating an Application, and merge patches of its metadata, spec and operation.
func (g guardTransport) applicationGuard(r *http.Request) error {
	refuse := false
	switch {
	case r.Method == http.MethodPost && applicationCreate.MatchString(r.URL.Path),
		r.Method == http.MethodPatch && applicationWrite.MatchString(r.URL.Path) && !strings.HasSuffix(r.URL.Path, "/status"):
		body, err := ReadBody(r)
		if err != nil {
			return err
		}
		var obj map[string]any
		refuse = json.Unmarshal(body, &obj) != nil || carriesValue(obj["status"]) ||
			(r.Method == http.MethodPatch && r.Header.Get("Content-Type") != string(types.MergePatchType))
	case r.Method == http.MethodPut || r.Method == http.MethodPatch:
		refuse = applicationWrite.MatchString(r.URL.Path) || (g.live && rolloutStatus.MatchString(r.URL.Path))
	}
	if refuse {
		return fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrApplicationStatusWrite)
	}
	return nil
}

// carriesValue reports whether v holds anything but zero values.
func carriesValue(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if carriesValue(e) {
				return true
			}
		}
		return false
	case []any:
		return len(x) > 0
	case string:
		return x != ""
	case bool:
		return x
	case float64:
		return x != 0
	}
	return v != nil
}

// ReadBody reads a request's body and puts it back for the next transport.
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return body, nil
}

func jsonEqual(raw []byte, want string) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// GuardedConfig is cfg with guardTransport.
func GuardedConfig(cfg *rest.Config, refused *int, mu *sync.Mutex, live bool) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return guardTransport{rt: rt, refused: refused, mu: mu, live: live}
	})
	return cfg
}

// RepoRoot is the main module, two levels above this package.
func RepoRoot() string { return filepath.Join(sourceDir(), "..", "..", "..") }

// TestdataDir is the proofs' one folder of recorded data (test/testdata).
func TestdataDir() string { return filepath.Join(RepoRoot(), "test", "testdata") }

// ArgoCDNamespace is where Argo CD runs and its Applications live.
const ArgoCDNamespace = "argocd"

// ApplicationGVR is Argo CD's Application resource (its CRD, manifests/crds/application-crd.yaml, declares
// no status subresource: the controller writes status with an update or patch of the object).
var ApplicationGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
