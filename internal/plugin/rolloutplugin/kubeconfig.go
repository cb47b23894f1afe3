package rolloutplugin

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// A kubeconfig from kubeconfigSecret is written by whoever can write a Secret in the AnalysisRun's
// namespace, and the plugin runs in the Rollouts controller's container with its identity and files. To
// client-go a kubeconfig is partly a program: users[].user.exec and auth-provider run commands,
// tokenFile and the certificate paths read the container's files (the controller's own token among them),
// proxy-url and insecure-skip-tls-verify send credentials where the cluster entry does not say. So it is
// read as data: decoded with clientcmd.Load (which reads no file and runs nothing), checked field by
// field against the few a remote cluster needs, and the rest.Config built from those fields alone. No
// clientcmd.ClientConfig is made from it: that is what would consult files, the environment and plugins.

// MaxRemoteResponse bounds one JSON value of a remote cluster's answer: a get or a list page is one value,
// a watch one value per event. A list page of maxListed runs of a few KiB each, or one object at etcd's
// default limit of 1.5 MiB, is far below it; a server that answers without end is cut off there.
const MaxRemoteResponse = 32 << 20

// remoteConfig checks kubeconfig bytes and builds the rest.Config of the one cluster and user they name.
// Errors name the refused field and never quote the bytes.
func remoteConfig(kubeconfig []byte) (*rest.Config, error) {
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

// limitResponses bounds every JSON value of a response body of a remote cluster (MaxRemoteResponse).
func limitResponses(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.Body == nil {
			return resp, err
		}
		resp.Body = &valueLimited{r: resp.Body, max: MaxRemoteResponse}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// ErrResponseTooLarge is the error of a remote answer with a JSON value over MaxRemoteResponse.
var ErrResponseTooLarge = fmt.Errorf("the remote cluster's answer holds more than %d MiB in one object: refused", MaxRemoteResponse>>20)

// valueLimited fails once more than max bytes arrive without a top-level JSON value ending. It follows
// only strings and brackets: enough to find where a value ends, whatever the server's line breaks.
type valueLimited struct {
	r        io.ReadCloser
	max, n   int
	depth    int
	inString bool
	escaped  bool
}

func (l *valueLimited) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, ErrResponseTooLarge
	}
	if room := l.max + 1 - l.n; len(p) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		l.n++
		switch {
		case l.inString && l.escaped:
			l.escaped = false
		case l.inString && b == '\\':
			l.escaped = true
		case l.inString && b == '"':
			l.inString = false
		case l.inString:
		case b == '"':
			l.inString = true
		case b == '{' || b == '[':
			l.depth++
		case (b == '}' || b == ']') && l.depth > 0:
			if l.depth--; l.depth == 0 {
				l.n = 0
			}
		}
	}
	if l.n > l.max {
		return n, ErrResponseTooLarge
	}
	return n, err
}

func (l *valueLimited) Close() error { return l.r.Close() }

// kubeconfigSecrets lists what of a kubeconfig must never be printed: the whole text, and its tokens,
// passwords and keys (which client-go could echo in an error).
func kubeconfigSecrets(kubeconfig []byte) []string {
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
