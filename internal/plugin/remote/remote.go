// Package remote is the plugin's client of a remote cluster: the one https server a kubeconfig Secret
// names. The kubeconfig is written by whoever can write a Secret in an AnalysisRun's namespace, and the
// plugin runs in the Argo Rollouts controller's container, with its identity, files and network position,
// for every team the controller serves. So the kubeconfig is read as data (Config), and the server's
// answers are held to bounds (limit.go): no more than MaxResponse bytes of a get or a list page, or of one
// watch event; no redirect followed, so the kubeconfig's credentials go to its server and nowhere else.
package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// To client-go a kubeconfig is partly a program: users[].user.exec and auth-provider run commands,
// tokenFile and the certificate paths read the container's files (the controller's own token among them),
// proxy-url and insecure-skip-tls-verify send credentials where the cluster entry does not say. So it is
// decoded with clientcmd.Load (which reads no file and runs nothing), checked field by field against the
// few a remote cluster needs, and the rest.Config built from those fields alone. No
// clientcmd.ClientConfig is made from it: that is what would consult files, the environment and plugins.

// Options are a client's request bounds.
type Options struct {
	// Timeout bounds each request; 0: none (watches, which last minutes).
	Timeout time.Duration
	// QPS and Burst: client-go's rate limit of the client.
	QPS   float32
	Burst int
}

// NewClient builds a client from kubeconfig bytes. Nothing in them runs, reads a file or connects before
// they are accepted (Config); a response over MaxResponse is refused and no redirect is followed.
func NewClient(kubeconfig []byte, o Options) (dynamic.Interface, error) {
	cfg, err := Config(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = o.Timeout
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	// client-go adds the bearer token in a RoundTripper (transport.NewBearerAuthWithRefreshRoundTripper,
	// k8s.io/client-go/transport/round_trippers.go), below the http.Client: Go's stripping of
	// Authorization on a redirect to another host never sees it, and a redirect would carry the token.
	// limitResponses already turns a 3xx into an error before the client could follow it; this is the
	// second lock, on the copy (HTTPClientFor may return http.DefaultClient, which is not ours to change).
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return ErrRedirect }
	// the same http.Client serves gets, lists and watches (dynamic.NewForConfigAndClient)
	dc, err := dynamic.NewForConfigAndClient(cfg, &c)
	if err != nil {
		return nil, err
	}
	return objectsOnly{dc}, nil
}

// Config checks kubeconfig bytes and builds the rest.Config of the one cluster and user they name, with
// the response bounds and the redirect refusal installed. Errors name the refused field and never quote
// the bytes.
func Config(kubeconfig []byte) (*rest.Config, error) {
	kc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, errors.New("not a valid kubeconfig")
	}
	if len(kc.Clusters) == 0 && len(kc.AuthInfos) == 0 && len(kc.Contexts) == 0 {
		return nil, errors.New("not a valid kubeconfig: it names no cluster, user or context")
	}
	if len(kc.Clusters) != 1 || len(kc.AuthInfos) != 1 || len(kc.Contexts) != 1 {
		return nil, fmt.Errorf("the kubeconfig must hold exactly one cluster, one user and one context (it has %d, %d and %d)", len(kc.Clusters), len(kc.AuthInfos), len(kc.Contexts))
	}
	var ctxName string
	var ctx *clientcmdapi.Context
	for ctxName, ctx = range kc.Contexts {
	}
	if kc.CurrentContext != "" && kc.CurrentContext != ctxName {
		return nil, fmt.Errorf("current-context %q is not the kubeconfig's context %q", kc.CurrentContext, ctxName)
	}
	cluster, user := kc.Clusters[ctx.Cluster], kc.AuthInfos[ctx.AuthInfo]
	if cluster == nil || user == nil {
		return nil, fmt.Errorf("context %q must name the kubeconfig's cluster and user", ctxName)
	}
	var refused []string
	refuse := func(cond bool, field, why string) {
		if cond {
			refused = append(refused, field+" ("+why+")")
		}
	}
	const runs, reads, elsewhere = "runs a program in the Rollouts controller's container", "reads a file of the Rollouts controller's container", "sends the credentials elsewhere than the server"
	refuse(user.Exec != nil, "users[].user.exec", runs)
	refuse(user.AuthProvider != nil, "users[].user.auth-provider", runs)
	refuse(user.TokenFile != "", "users[].user.tokenFile", reads)
	refuse(user.ClientCertificate != "", "users[].user.client-certificate", reads)
	refuse(user.ClientKey != "", "users[].user.client-key", reads)
	refuse(cluster.CertificateAuthority != "", "clusters[].cluster.certificate-authority", reads)
	refuse(cluster.ProxyURL != "", "clusters[].cluster.proxy-url", elsewhere)
	refuse(cluster.InsecureSkipTLSVerify, "clusters[].cluster.insecure-skip-tls-verify", "sends the credentials to whoever answers")
	refuse(cluster.TLSServerName != "", "clusters[].cluster.tls-server-name", "verifies another name than the server's")
	refuse(cluster.DisableCompression, "clusters[].cluster.disable-compression", "not accepted")
	refuse(user.Impersonate != "", "users[].user.as", "impersonation")
	refuse(user.ImpersonateUID != "", "users[].user.as-uid", "impersonation")
	refuse(len(user.ImpersonateGroups) > 0, "users[].user.as-groups", "impersonation")
	refuse(len(user.ImpersonateUserExtra) > 0, "users[].user.as-user-extra", "impersonation")
	refuse(user.Username != "" || user.Password != "", "users[].user.username/password", "basic authentication is not accepted")
	u, err := url.Parse(cluster.Server)
	switch {
	case err != nil || u.Host == "":
		refused = append(refused, "clusters[].cluster.server (not an https:// URL with a host)")
	case u.Scheme != "https":
		refused = append(refused, fmt.Sprintf("clusters[].cluster.server (%s:// is not https://)", u.Scheme))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		refused = append(refused, "clusters[].cluster.server (holds user info, a query or a fragment)")
	}
	hasCert, hasKey := len(user.ClientCertificateData) > 0, len(user.ClientKeyData) > 0
	switch {
	case user.Token != "" && (hasCert || hasKey):
		refused = append(refused, "users[].user (token and client certificate: give one)")
	case hasCert != hasKey:
		refused = append(refused, "users[].user (client-certificate-data and client-key-data go together)")
	case user.Token == "" && !hasCert && len(refused) == 0:
		refused = append(refused, "users[].user (no token and no client-certificate-data: give one)")
	case hasCert:
		if _, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData); err != nil {
			refused = append(refused, "users[].user.client-certificate-data/client-key-data (not a PEM certificate and its key)")
		}
	}
	if strings.ContainsAny(user.Token, "\r\n") {
		refused = append(refused, "users[].user.token (holds a line break)")
	}
	if ca := cluster.CertificateAuthorityData; len(ca) > 0 && !x509.NewCertPool().AppendCertsFromPEM(ca) {
		refused = append(refused, "clusters[].cluster.certificate-authority-data (no PEM certificate)")
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("the kubeconfig is refused: %s; the plugin accepts one https:// cluster with certificate-authority-data (or a certificate of the system roots) and one user with token or client-certificate-data and client-key-data (docs/security.md)", strings.Join(refused, "; "))
	}
	return &rest.Config{
		Host:        cluster.Server,
		BearerToken: user.Token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cluster.CertificateAuthorityData,
			CertData: user.ClientCertificateData,
			KeyData:  user.ClientKeyData,
		},
		// A remote server's warnings are its own text: client-go would print them in the controller's log.
		WarningHandler: rest.NoWarnings{},
		WrapTransport:  limitResponses,
	}, nil
}

// Secrets lists what of a kubeconfig must never be printed: the whole text, and its tokens, passwords
// and keys (which client-go could echo in an error), longest first.
func Secrets(kubeconfig []byte) []string {
	out := []string{string(kubeconfig)}
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return out
	}
	for _, a := range cfg.AuthInfos {
		for _, s := range []string{a.Token, a.Password, string(a.ClientKeyData), string(a.ClientCertificateData)} {
			if len(s) >= 4 {
				out = append(out, s)
			}
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}
