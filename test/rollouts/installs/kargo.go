package installs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
)

// KargoVersion is the Kargo release whose control-plane program the live suite runs (test/kargo-v1.11).
const KargoVersion = "v1.11.2"

// KargoNamespace is where Kargo itself runs (its controller's heartbeat lease; KARGO_NAMESPACE).
const KargoNamespace = "kargo"

// KargoChartCRDs is the folder of Kargo's CRDs in its vendored chart, below the vendor folder.
const KargoChartCRDs = "kargo/" + KargoVersion + "/charts/kargo/resources/crds"

// Kargo is Kargo v1.11.2's control-plane program (cmd/controlplane, built by test/kargo-v1.11) on the
// Env's cluster: its `kubernetes-webhooks-server`, registered in the API server as the chart registers it
// (templates/kubernetes-webhooks-server/webhooks.yaml) but at https://127.0.0.1 with a self-signed
// certificate, and its `controller`, with the environment the chart gives it
// (templates/controller/configmap.yaml) outside a cluster. Both are subprocesses: Kargo's module pins
// its own k8s.io/* and controller-runtime.
type Kargo struct {
	bin     string
	dir     string
	cluster *cluster.Cluster
	port    int
	caPEM   []byte
	hooks   *exec.Cmd
	ctrl    *exec.Cmd
	// Log is both programs' stderr (Kargo's own logs).
	Log string
}

// NewKargo finds the program: $E2E_KARGO if set (make e2e-live builds it once), else it is built from
// test/kargo-v1.11 into a temporary directory.
func NewKargo(c *cluster.Cluster) (*Kargo, error) {
	dir, err := os.MkdirTemp("", "e2e-kargo-")
	if err != nil {
		return nil, err
	}
	k := &Kargo{dir: dir, cluster: c, bin: os.Getenv("E2E_KARGO"), Log: filepath.Join(dir, "kargo.log")}
	if k.bin == "" {
		k.bin = filepath.Join(dir, "kargo-controlplane")
		cmd := exec.Command("go", "build", "-o", k.bin, "github.com/akuity/kargo/cmd/controlplane")
		cmd.Dir = filepath.Join(cluster.RepoRoot(), "test", "kargo-v1.11")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("build %s: %v\n%s", cmd.Dir, err, out)
		}
	}
	return k, nil
}

// env is what both programs run with: the cluster's kubeconfig for the control plane and for Argo CD
// (the same cluster; without ARGOCD_KUBECONFIG the controller looks for an in-cluster config), and a
// proxy that refuses everything but 127.0.0.1, so that nothing of Kargo reaches an outside host.
func (k *Kargo) env(extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + k.dir, "TMPDIR=" + k.dir,
		"KUBECONFIG=" + k.cluster.Kubeconfig, "KARGO_NAMESPACE=" + KargoNamespace, "LOG_LEVEL=info",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
		// the GCP credential helper probes the metadata server at start (pkg/credentials/gar: "not running
		// on GCP"); cloud.google.com/go/compute/metadata reads its address from these
		"GCE_METADATA_HOST=127.0.0.1:9", "GCE_METADATA_IP=127.0.0.1:9"}
	return append(env, extra...)
}

// Install creates Kargo's nine CRDs from the vendored chart and the kargo namespace.
func (k *Kargo) Install() error {
	dir := filepath.Join(vendorDir(), filepath.FromSlash(KargoChartCRDs))
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("Kargo's chart is not there: no CRDs in %s (run `make upstream`, which fetches it)", dir)
	}
	if err := k.cluster.InstallCRDs(files...); err != nil {
		return err
	}
	ctx := context.Background()
	kube, err := kubernetes.NewForConfig(k.cluster.Config)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KargoNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// servingCert writes a self-signed certificate for 127.0.0.1 where controller-runtime's webhook server
// reads it ($TMPDIR/k8s-webhook-server/serving-certs, its default CertDir) and keeps it as the CA bundle.
func (k *Kargo) servingCert() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "kargo-webhooks-server"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	certDir := filepath.Join(k.dir, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	k.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), k.caPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(certDir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (k *Kargo) start(args ...string) (*exec.Cmd, error) {
	logf, err := os.OpenFile(k.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(k.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	return cmd, nil
}

// kargoWebhooks are the chart's webhooks (templates/kubernetes-webhooks-server/webhooks.yaml) for the
// kinds the live suite creates: the mutating ones name the Freight (api.GenerateFreightID) and the
// Promotion and give a Promotion the Stage's steps, label and owner reference; the validating ones
// check them. Left out: those of kinds the suite never creates (ClusterConfig, ProjectConfig,
// PromotionTasks) and the replicated-resource one on Secrets and ConfigMaps (Kargo's shared resources,
// which the suite does not use).
var kargoWebhooks = []struct {
	mutate   bool
	kind     string
	resource []string
}{
	{true, "freight", []string{"freights"}},
	{true, "promotion", []string{"promotions"}},
	{true, "stage", []string{"stages"}},
	{true, "warehouse", []string{"warehouses"}},
	{false, "freight", []string{"freights", "freights/status"}},
	{false, "project", []string{"projects"}},
	{false, "promotion", []string{"promotions"}},
	{false, "stage", []string{"stages"}},
	{false, "warehouse", []string{"warehouses"}},
}

func (k *Kargo) register() error {
	kube, err := kubernetes.NewForConfig(k.cluster.Config)
	if err != nil {
		return err
	}
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.NamespacedScope
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kargo"}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kargo"}}
	for _, h := range kargoWebhooks {
		verb := map[bool]string{true: "mutate", false: "validate"}[h.mutate]
		url := fmt.Sprintf("https://127.0.0.1:%d/%s-kargo-akuity-io-v1alpha1-%s", k.port, verb, h.kind)
		cc := admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: k.caPEM}
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"kargo.akuity.io"}, APIVersions: []string{"v1alpha1"}, Resources: h.resource, Scope: &scope},
		}}
		name := h.kind + ".kargo.akuity.io"
		if h.mutate {
			mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{Name: name, ClientConfig: cc, Rules: rules,
				FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}})
		} else {
			validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: name, ClientConfig: cc, Rules: rules,
				FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}})
		}
	}
	ctx := context.Background()
	reg := kube.AdmissionregistrationV1()
	_ = reg.MutatingWebhookConfigurations().Delete(ctx, "kargo", metav1.DeleteOptions{})
	_ = reg.ValidatingWebhookConfigurations().Delete(ctx, "kargo", metav1.DeleteOptions{})
	if _, err := reg.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err = reg.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{})
	return err
}

// Start runs the webhooks server (and registers it once it serves) and the controller, until Stop.
func (k *Kargo) Start() error {
	if err := k.servingCert(); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	k.port = port
	if k.hooks, err = k.start("kubernetes-webhooks-server"); err != nil {
		return err
	}
	k.hooks.Env = k.env("WEBHOOK_SERVER_PORT=" + strconv.Itoa(port))
	if err := k.hooks.Start(); err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(k.caPEM)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: pool})
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			k.Stop()
			return fmt.Errorf("Kargo's webhooks server did not serve on 127.0.0.1:%d after 2 minutes: %v (log: %s)", port, err, k.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := k.register(); err != nil {
		k.Stop()
		return err
	}
	if k.ctrl, err = k.start("controller"); err != nil {
		k.Stop()
		return err
	}
	k.ctrl.Env = k.env("ARGOCD_KUBECONFIG="+k.cluster.Kubeconfig, "ARGOCD_INTEGRATION_ENABLED=true",
		"ROLLOUTS_INTEGRATION_ENABLED=true", "IS_DEFAULT_CONTROLLER=true", "ARGOCD_NAMESPACE="+cluster.ArgoCDNamespace)
	if err := k.ctrl.Start(); err != nil {
		k.Stop()
		return err
	}
	return nil
}

// Stop ends both programs.
func (k *Kargo) Stop() {
	for _, c := range []*exec.Cmd{k.ctrl, k.hooks} {
		if c == nil || c.Process == nil {
			continue
		}
		_ = c.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	k.ctrl, k.hooks = nil, nil
}

// Close stops the programs and removes their files.
func (k *Kargo) Close() {
	k.Stop()
	_ = os.RemoveAll(k.dir)
}

// LogTail is the end of Kargo's log, for a failure's message.
func (k *Kargo) LogTail() string {
	raw, _ := os.ReadFile(k.Log)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
