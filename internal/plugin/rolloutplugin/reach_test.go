package rolloutplugin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestReachWordsQuoteNoServerText: a connection refused for its certificate is said in the plugin's words,
// never with the names the server's certificate holds (text a hostile server chose), on the errors Go's
// TLS client really returns.
func TestReachWordsQuoteNoServerText(t *testing.T) {
	const chosen = "words-the-server-chose.example"
	// a certificate of the loopback address (ip) or not, with names the server chose
	cert := func(t *testing.T, notAfter time.Time, ip bool, dns ...string) (tls.Certificate, *x509.CertPool) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
			DNSNames: dns, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if ip {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(parsed)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
	}
	get := func(t *testing.T, server *httptest.Server, roots *x509.CertPool, scheme string) error {
		u := strings.Replace(server.URL, "http://", scheme+"://", 1)
		u = strings.Replace(u, "https://", scheme+"://", 1)
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: no error", u)
		}
		var ue *url.Error
		if e, ok := err.(*url.Error); ok {
			ue = e
		}
		if ue == nil {
			t.Fatalf("%T %v is not a *url.Error", err, err)
		}
		return ue.Err
	}
	tlsServer := func(t *testing.T, c tls.Certificate) *httptest.Server {
		s := httptest.NewUnstartedServer(http.NotFoundHandler())
		s.TLS = &tls.Config{Certificates: []tls.Certificate{c}}
		s.StartTLS()
		t.Cleanup(s.Close)
		return s
	}
	for _, tc := range []struct {
		name string
		err  func(t *testing.T) error
		want string
	}{
		{"names other than the address", func(t *testing.T) error {
			c, pool := cert(t, time.Now().Add(time.Hour), false, chosen, "*."+chosen)
			return get(t, tlsServer(t, c), pool, "https")
		}, "not valid for the server name in the kubeconfig"},
		{"an issuer not in the kubeconfig", func(t *testing.T) error {
			c, _ := cert(t, time.Now().Add(time.Hour), true, chosen)
			return get(t, tlsServer(t, c), x509.NewCertPool(), "https")
		}, "not signed by the kubeconfig's certificate-authority-data"},
		{"expired", func(t *testing.T) error {
			c, pool := cert(t, time.Now().Add(-time.Hour), true, chosen)
			return get(t, tlsServer(t, c), pool, "https")
		}, "has expired or is not yet valid"},
		{"not TLS", func(t *testing.T) error {
			s := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(s.Close)
			return get(t, s, nil, "https")
		}, "server gave HTTP response to HTTPS client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			got := reachWords(err)
			if !strings.Contains(got, tc.want) || strings.Contains(got, chosen) {
				t.Errorf("Go's %q\nsaid as %q: want %q and no %q", err, got, tc.want, chosen)
			}
		})
	}
}
