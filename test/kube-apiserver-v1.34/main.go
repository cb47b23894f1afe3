// Command apiserver is the cluster the e2e recorders run Argo Rollouts' controllers against: etcd
// (go.etcd.io/etcd/server/v3/embed) and kube-apiserver v1.34.5 (k8s.io/kubernetes/cmd/kube-apiserver/app/
// testing StartTestServer) in one process on 127.0.0.1, with Kubernetes' own ReplicaSet controller
// (k8s.io/kubernetes/pkg/controller/replicaset) and, because there is no kubelet, a loop that marks Pods
// Ready.
//
// It writes a kubeconfig to the path given by -kubeconfig, prints "ready" on stdout and then obeys one
// command per stdin line, answering each with "ok" (or "error: ...") on stdout:
//
//	pause    block every write of the ReplicaSet controller and of the Pod loop until resume
//	resume   let them write again
//	hold NS/KEY     Pods in NS labelled rollouts-pod-template-hash=KEY, or whose first container runs
//	                image KEY, are not made Ready
//	release NS/KEY  undo hold
//
// The recorders pause the cluster while one of the Rollouts controllers reconciles, so that every
// reconcile sees a cluster that has settled, and a timeline does not depend on goroutine scheduling.
// Closing stdin stops the servers.
//
// Three flags serve the reliability suite (test/rollouts/reliability): -rbac authorizes with RBAC
// (the loopback admin is in system:masters and is allowed either way), -audit-log writes the API server's
// audit log (every request at level Metadata) to a file, and -data-dir keeps etcd's data, its URLs and the
// serving certificate in a directory, so that the program started again on it serves the same objects at
// the same certificate: a ServiceAccount token stays valid across the restart too (StartTestServer signs
// tokens with a fixed key and issuer). The loopback admin token and the port are new on every start.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/test/utils/ktesting"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "where to write the kubeconfig of the started API server")
	var o options
	flag.StringVar(&o.dataDir, "data-dir", "", "keep etcd's data and the serving certificate here, to restart on them (default: a temporary directory, removed at exit)")
	flag.BoolVar(&o.rbac, "rbac", false, "authorize requests with RBAC instead of allowing all")
	flag.StringVar(&o.auditLog, "audit-log", "", "write the audit log (every request, level Metadata, JSON lines) to this file")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "apiserver: -kubeconfig is required")
		os.Exit(2)
	}
	tb := newTB()
	code := 0
	if err := run(tb, *kubeconfig, o); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		code = 1
	}
	tb.cleanup()
	os.Exit(code)
}

type options struct {
	dataDir  string
	rbac     bool
	auditLog string
}

func run(tb *programTB, kubeconfig string, o options) error {
	ktesting.SetDefaultVerbosity(0)
	klog.SetOutput(os.Stderr)
	etcdDir, urls := tb.TempDir(), ""
	if o.dataDir != "" {
		etcdDir, urls = filepath.Join(o.dataDir, "etcd"), filepath.Join(o.dataDir, "etcd-urls")
	}
	etcdURL, stopEtcd, err := startEtcd(etcdDir, urls)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	tb.Cleanup(stopEtcd)

	storage := storagebackend.NewDefaultConfig("/e2e/registry", nil)
	storage.Transport.ServerList = []string{etcdURL}
	// ServiceAccount admission is off: no kube-controller-manager creates the namespaces' default
	// ServiceAccounts, and no kubelet would mount their tokens.
	flags := []string{"--disable-admission-plugins=ServiceAccount"}
	if o.dataDir != "" {
		cert, key, err := servingCert(o.dataDir)
		if err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
		flags = append(flags, "--tls-cert-file="+cert, "--tls-private-key-file="+key)
	}
	if o.rbac {
		flags = append(flags, "--authorization-mode=RBAC")
	}
	if o.auditLog != "" {
		policy := filepath.Join(tb.TempDir(), "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return err
		}
		flags = append(flags, "--audit-policy-file="+policy, "--audit-log-path="+o.auditLog, "--audit-log-format=json", "--audit-log-mode=blocking")
	}
	srv, err := kubeapiservertesting.StartTestServer(tb, nil, flags, storage)
	if err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	// registered after etcd's, so it runs first
	tb.Cleanup(srv.TearDownFn)
	if err := writeKubeconfig(srv.ClientConfig, kubeconfig); err != nil {
		return err
	}

	g := &gate{cond: sync.NewCond(&sync.Mutex{}), held: map[string]bool{}}
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gatedTransport{g, rt} })
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	rsc := replicaset.NewReplicaSetController(ctx, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), client, 500)
	pods := newPodLoop(client, factory.Core().V1().Pods().Informer(), g)
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	go rsc.Run(ctx, 2)
	go pods.run(ctx)

	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == "pause" && len(fields) == 1:
			g.setPaused(true)
		case fields[0] == "resume" && len(fields) == 1:
			g.setPaused(false)
			pods.kick()
		case fields[0] == "hold" && len(fields) == 2:
			g.hold(fields[1], true)
		case fields[0] == "release" && len(fields) == 2:
			g.hold(fields[1], false)
			pods.kick()
		default:
			fmt.Printf("error: unknown command %q\n", in.Text())
			continue
		}
		fmt.Println("ok")
	}
	return in.Err()
}

// auditPolicy records every request once, when its response is complete, with who asked for what
// (user, verb, resource, name, namespace, the request URI with its label selector) and the answer's code.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// servingCert is the API server's certificate in dir, made on the first start: a restart serves the same
// one, so a client that trusts it before the restart trusts the server after it.
func servingCert(dir string) (string, string, error) {
	cert, key := filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	if _, err := os.Stat(cert); err == nil {
		return cert, key, nil
	}
	c, k, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return "", "", err
	}
	if err := keyutil.WriteKey(key, k); err != nil {
		return "", "", err
	}
	return cert, key, certutil.WriteCert(cert, c)
}

// startEtcd starts etcd on dir. With urls (a file in the data directory) it listens where it listened
// the first time, which etcd recorded as the member's URLs in its data.
func startEtcd(dir, urls string) (string, func(), error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	client, peer, err := freeURL(), freeURL(), error(nil)
	if client == nil || peer == nil {
		return "", nil, fmt.Errorf("no free port on 127.0.0.1")
	}
	if urls != "" {
		if raw, rerr := os.ReadFile(urls); rerr == nil {
			if c, p, ok := strings.Cut(strings.TrimSpace(string(raw)), " "); ok {
				client, _ = url.Parse(c)
				peer, _ = url.Parse(p)
			}
		} else if err = os.WriteFile(urls, []byte(client.String()+" "+peer.String()+"\n"), 0o600); err != nil {
			return "", nil, err
		}
		if client == nil || peer == nil {
			return "", nil, fmt.Errorf("%s: not two URLs", urls)
		}
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return "", nil, fmt.Errorf("not ready after 60s")
	}
	return client.String(), e.Close, nil
}

func freeURL() *url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil
	}
	defer l.Close()
	return &url.URL{Scheme: "http", Host: l.Addr().String()}
}

func writeKubeconfig(c *rest.Config, path string) error {
	cluster := &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData, CertificateAuthority: c.CAFile,
		// the loopback serving certificate is issued for a fixed name, not for 127.0.0.1
		TLSServerName: c.ServerName}
	user := &clientcmdapi.AuthInfo{Token: c.BearerToken, ClientCertificateData: c.CertData, ClientKeyData: c.KeyData,
		ClientCertificate: c.CertFile, ClientKey: c.KeyFile}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = cluster
	kc.AuthInfos["e2e"] = user
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	kc.CurrentContext = "e2e"
	// written elsewhere and renamed, so a reader never sees half a file
	tmp := path + ".tmp"
	if err := clientcmd.WriteToFile(*kc, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// gate blocks the cluster's own writers while the recorder has paused it.
type gate struct {
	cond   *sync.Cond
	paused bool
	held   map[string]bool
}

func (g *gate) setPaused(p bool) {
	g.cond.L.Lock()
	g.paused = p
	g.cond.L.Unlock()
	g.cond.Broadcast()
}

func (g *gate) wait() {
	g.cond.L.Lock()
	for g.paused {
		g.cond.Wait()
	}
	g.cond.L.Unlock()
}

func (g *gate) hold(key string, h bool) {
	g.cond.L.Lock()
	defer g.cond.L.Unlock()
	if h {
		g.held[key] = true
	} else {
		delete(g.held, key)
	}
}

func (g *gate) isHeld(key string) bool {
	g.cond.L.Lock()
	defer g.cond.L.Unlock()
	return g.held[key]
}

// gatedTransport holds back every request but reads (informers keep watching while paused).
type gatedTransport struct {
	g  *gate
	rt http.RoundTripper
}

func (t gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		t.g.wait()
	}
	return t.rt.RoundTrip(r)
}

// podLoop stands in for the kubelet: it marks every Pod Running and Ready, unless its pod-template hash
// is held. Pods are never scheduled (spec.nodeName stays empty), so the API server deletes them at once
// when the ReplicaSet controller scales down.
type podLoop struct {
	client   kubernetes.Interface
	informer cache.SharedIndexInformer
	g        *gate
	wake     chan struct{}
}

func newPodLoop(client kubernetes.Interface, inf cache.SharedIndexInformer, g *gate) *podLoop {
	p := &podLoop{client: client, informer: inf, g: g, wake: make(chan struct{}, 1)}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.kick() },
		UpdateFunc: func(any, any) { p.kick() },
	})
	return p
}

func (p *podLoop) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *podLoop) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-time.After(time.Second):
		}
		for _, obj := range p.informer.GetStore().List() {
			pod := obj.(*corev1.Pod)
			if pod.DeletionTimestamp != nil || ready(pod) || p.held(pod) {
				continue
			}
			pod = pod.DeepCopy()
			now := metav1.Now()
			pod.Status.Phase = corev1.PodRunning
			pod.Status.StartTime = &now
			pod.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			}
			// a conflict or a vanished Pod is retried on the next pass from the informer's newer copy
			_, _ = p.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		}
	}
}

// held: the Pod's pod-template hash or its first container's image is held.
func (p *podLoop) held(pod *corev1.Pod) bool {
	if p.g.isHeld(pod.Namespace + "/" + pod.Labels["rollouts-pod-template-hash"]) {
		return true
	}
	return len(pod.Spec.Containers) > 0 && p.g.isHeld(pod.Namespace+"/"+pod.Spec.Containers[0].Image)
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// programTB is the ktesting.TB StartTestServer needs, for a program instead of a test: temp dirs and
// cleanups, failures reported on stderr.
type programTB struct {
	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	failed   bool
}

func newTB() *programTB { return &programTB{} }

func (t *programTB) cleanup() {
	t.mu.Lock()
	fns := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	for _, d := range t.dirs {
		_ = os.RemoveAll(d)
	}
}

func (t *programTB) Cleanup(f func())  { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *programTB) Error(args ...any) { t.Log(args...); t.Fail() }
func (t *programTB) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.Fail()
}
func (t *programTB) Fail()          { t.mu.Lock(); t.failed = true; t.mu.Unlock() }
func (t *programTB) FailNow()       { t.Fail(); t.cleanup(); os.Exit(1) }
func (t *programTB) Failed() bool   { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
func (t *programTB) Fatal(a ...any) { t.Log(a...); t.FailNow() }
func (t *programTB) Fatalf(format string, args ...any) {
	t.Logf(format, args...)
	t.FailNow()
}
func (t *programTB) Helper()                 {}
func (t *programTB) Log(args ...any)         { fmt.Fprintln(os.Stderr, args...) }
func (t *programTB) Logf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (t *programTB) Name() string            { return "e2e-apiserver" }
func (t *programTB) Setenv(k, v string)      { _ = os.Setenv(k, v) }
func (t *programTB) Skip(args ...any)        { t.Log(args...); t.SkipNow() }
func (t *programTB) SkipNow()                { t.FailNow() }
func (t *programTB) Skipf(f string, a ...any) {
	t.Logf(f, a...)
	t.SkipNow()
}
func (t *programTB) Skipped() bool { return false }
func (t *programTB) TempDir() string {
	d, err := os.MkdirTemp("", "e2e-apiserver-")
	if err != nil {
		t.Fatal(err)
	}
	t.mu.Lock()
	t.dirs = append(t.dirs, d)
	t.mu.Unlock()
	return d
}
