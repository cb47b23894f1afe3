package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// The CLI stays free of Kubernetes' client (cmd/rollouts-plugin-metric-analysis-health
// TestAnalysisHealthStaysLight), so kubeconfig-secret reads the workload cluster's kubeconfig and makes
// its one request, a TokenRequest, itself: the kubeconfig's server, certificate authority, TLS server
// name, and a user with a token, a token file or a client certificate, as kubectl uses them. A user
// that authenticates with a program (exec, auth-provider: cloud clusters) is refused with the two
// commands that do the same with kubectl.

// kubeconfigFile is the part of a kubeconfig (clientcmd/api/v1) the TokenRequest needs.
type kubeconfigFile struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData string `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token                 string          `json:"token"`
			TokenFile             string          `json:"tokenFile"`
			ClientCertificate     string          `json:"client-certificate"`
			ClientCertificateData string          `json:"client-certificate-data"`
			ClientKey             string          `json:"client-key"`
			ClientKeyData         string          `json:"client-key-data"`
			Exec                  json.RawMessage `json:"exec"`
			AuthProvider          json.RawMessage `json:"auth-provider"`
			Username              string          `json:"username"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	dir string
}

// workloadCluster is the resolved cluster and user of a kubeconfig's context.
type workloadCluster struct {
	Server, ServerName string
	CA                 []byte
	Insecure           bool
	Token              string
	Cert, Key          []byte
}

// kubeconfigPaths are the files kubectl would read: --kubeconfig, else $KUBECONFIG's list, else
// ~/.kube/config.
func kubeconfigPaths(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		var out []string
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".kube", "config")}
}

// loadWorkloadCluster resolves the context (empty: the current one) of the kubeconfig files; as kubectl
// merges a $KUBECONFIG list, the first file that names an entry or the current context wins, and a
// relative path in a file is relative to that file.
func loadWorkloadCluster(explicit, context string) (*workloadCluster, error) {
	var files []*kubeconfigFile
	for _, p := range kubeconfigPaths(explicit) {
		raw, err := os.ReadFile(p)
		if err != nil {
			if explicit == "" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		var f kubeconfigFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("%s is not a kubeconfig: %v", p, err)
		}
		f.dir = filepath.Dir(p)
		files = append(files, &f)
	}
	if len(files) == 0 {
		return nil, errors.New("no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config)")
	}
	name := context
	for _, f := range files {
		if name == "" {
			name = f.CurrentContext
		}
	}
	if name == "" {
		return nil, errors.New("no current context: give --context")
	}
	var clusterName, userName string
	found := false
	for _, f := range files {
		for _, c := range f.Contexts {
			if c.Name == name && !found {
				clusterName, userName, found = c.Context.Cluster, c.Context.User, true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("no context %q", name)
	}
	resolve := func(dir, p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	w := &workloadCluster{}
	clusterFound, userFound := false, false
	for _, f := range files {
		for _, c := range f.Clusters {
			if c.Name != clusterName || clusterFound {
				continue
			}
			clusterFound = true
			w.Server, w.ServerName, w.Insecure = c.Cluster.Server, c.Cluster.TLSServerName, c.Cluster.InsecureSkipTLSVerify
			var err error
			switch {
			case c.Cluster.CertificateAuthorityData != "":
				if w.CA, err = base64.StdEncoding.DecodeString(c.Cluster.CertificateAuthorityData); err != nil {
					return nil, fmt.Errorf("cluster %q: certificate-authority-data is not base64", clusterName)
				}
			case c.Cluster.CertificateAuthority != "":
				if w.CA, err = os.ReadFile(resolve(f.dir, c.Cluster.CertificateAuthority)); err != nil {
					return nil, fmt.Errorf("cluster %q: %v", clusterName, err)
				}
			}
		}
		for _, u := range f.Users {
			if u.Name != userName || userFound {
				continue
			}
			userFound = true
			a := u.User
			if len(a.Exec) > 0 && string(a.Exec) != "null" || len(a.AuthProvider) > 0 && string(a.AuthProvider) != "null" {
				return nil, fmt.Errorf("user %q authenticates with a program (exec or auth-provider), which this command does not run: mint the token with `kubectl create token NAME -n NAMESPACE --duration 168h > token` and give --token-file token", userName)
			}
			if a.Username != "" {
				return nil, fmt.Errorf("user %q authenticates with a password, which this command does not send: use kubectl create token and --token-file", userName)
			}
			w.Token = a.Token
			var err error
			if w.Token == "" && a.TokenFile != "" {
				raw, err := os.ReadFile(resolve(f.dir, a.TokenFile))
				if err != nil {
					return nil, fmt.Errorf("user %q: %v", userName, err)
				}
				w.Token = strings.TrimSpace(string(raw))
			}
			if a.ClientCertificateData != "" {
				if w.Cert, err = base64.StdEncoding.DecodeString(a.ClientCertificateData); err != nil {
					return nil, fmt.Errorf("user %q: client-certificate-data is not base64", userName)
				}
			} else if a.ClientCertificate != "" {
				if w.Cert, err = os.ReadFile(resolve(f.dir, a.ClientCertificate)); err != nil {
					return nil, fmt.Errorf("user %q: %v", userName, err)
				}
			}
			if a.ClientKeyData != "" {
				if w.Key, err = base64.StdEncoding.DecodeString(a.ClientKeyData); err != nil {
					return nil, fmt.Errorf("user %q: client-key-data is not base64", userName)
				}
			} else if a.ClientKey != "" {
				if w.Key, err = os.ReadFile(resolve(f.dir, a.ClientKey)); err != nil {
					return nil, fmt.Errorf("user %q: %v", userName, err)
				}
			}
		}
	}
	if !clusterFound {
		return nil, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not hold", name, clusterName)
	}
	if !userFound && userName != "" {
		return nil, fmt.Errorf("context %q names user %q, which the kubeconfig does not hold", name, userName)
	}
	return w, nil
}

// RequestToken mints a bound, expiring token of ServiceAccount ns/name (a TokenRequest, what kubectl
// create token does) with w's identity, and returns it with its expiry.
func (w *workloadCluster) RequestToken(ctx context.Context, ns, name string, d time.Duration) (string, time.Time, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: w.ServerName, InsecureSkipVerify: w.Insecure} //nolint:gosec // the user's own kubeconfig says so
	if len(w.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(w.CA) {
			return "", time.Time{}, errors.New("the kubeconfig's certificate authority holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	if len(w.Cert) > 0 || len(w.Key) > 0 {
		pair, err := tls.X509KeyPair(w.Cert, w.Key)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("the kubeconfig's client certificate and key: %v", err)
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	u, err := url.Parse(w.Server)
	if err != nil || u.Host == "" {
		return "", time.Time{}, fmt.Errorf("the kubeconfig's server %q is not a URL", w.Server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/namespaces/" + url.PathEscape(ns) + "/serviceaccounts/" + url.PathEscape(name) + "/token"
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"expirationSeconds": int64(d / time.Second)},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if w.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("--token-from-serviceaccount %s/%s: TokenRequest to %s: %v", ns, name, w.Server, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var answer struct {
		Message string `json:"message"`
		Status  struct {
			Token               string `json:"token"`
			ExpirationTimestamp string `json:"expirationTimestamp"`
		} `json:"status"`
	}
	_ = json.Unmarshal(raw, &answer)
	if resp.StatusCode/100 != 2 {
		msg := answer.Message
		if msg == "" {
			msg = "no Kubernetes Status in the answer"
		}
		return "", time.Time{}, fmt.Errorf("--token-from-serviceaccount %s/%s: TokenRequest to %s: %s: %s", ns, name, w.Server, resp.Status, msg)
	}
	if answer.Status.Token == "" {
		return "", time.Time{}, fmt.Errorf("--token-from-serviceaccount %s/%s: the TokenRequest's answer holds no token", ns, name)
	}
	at, _ := time.Parse(time.RFC3339, answer.Status.ExpirationTimestamp)
	if at.IsZero() {
		at = tokenExpiry(answer.Status.Token)
	}
	return answer.Status.Token, at.UTC(), nil
}
