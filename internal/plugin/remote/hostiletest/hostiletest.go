// Package hostiletest is a hostile API server for tests: one TLS server that answers as a Kubernetes API
// server would (a Rollout, empty lists, watches that stay open) until it is told to misbehave (Mode). It
// stands in for the https server a kubeconfig Secret names, which anyone who can write a Secret in an
// AnalysisRun's namespace chooses, in tests of package remote and of the plugin that uses it.
package hostiletest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Mode is a misbehaviour.
type Mode string

// The misbehaviours. Those of a direct read apply to every request; those named Watch… only to watches
// (watch=true), the gets and lists being answered well.
const (
	// Well answers a Rollout shop/checkout, lists without items and watches that stay open, silent.
	Well Mode = "well-behaved"
	// SlowBody sends the headers of a Rollout, then a byte every 100 ms, without end.
	SlowBody Mode = "slow body"
	// EndlessBody sends one JSON value without end.
	EndlessBody Mode = "endless body"
	// ManyValues sends {}{}{}… without end: each value is small, the answer is not.
	ManyValues Mode = "many values {}{}{}…"
	// GzipBomb sends a gzip body of a few hundred KiB that inflates to 256 MiB of one JSON value.
	GzipBomb Mode = "gzip bomb"
	// InvalidJSON sends a body that is not JSON, naming a planted marker.
	InvalidJSON Mode = "invalid JSON"
	// Redirect answers 302 to the second listener (Elsewhere), a metadata service's path.
	Redirect Mode = "redirect to another host"
	// NameMismatch: the kubeconfig names the server by a name its certificate does not hold.
	NameMismatch Mode = "TLS name mismatch"
	// TooManyRequests answers every request 429 with Retry-After: 1.
	TooManyRequests Mode = "429 storm"
	// EndlessPages answers every list page with a continue token.
	EndlessPages Mode = "list pages without end"
	// WatchBeforeHeaders closes a watch's connection before any header.
	WatchBeforeHeaders Mode = "watch fails before headers"
	// WatchAfterHeaders sends a watch's headers, then closes.
	WatchAfterHeaders Mode = "watch fails after headers"
	// WatchMidEvent sends half an event, then closes.
	WatchMidEvent Mode = "watch fails mid-event"
	// WatchHeld500 holds each watch request for Hold, then answers 500.
	WatchHeld500 Mode = "watch held, then 500"
	// WatchEndlessEvent sends one watch event without end.
	WatchEndlessEvent Mode = "watch event without end"
)

// Planted is in every text the server makes up: a measurement or a log line that holds it quotes the
// server.
const Planted = "PLANTED-BY-THE-HOSTILE-SERVER"

// Server is the hostile server and the listener it redirects to.
type Server struct {
	*httptest.Server
	// Elsewhere is where Redirect points: a second listener that counts every request reaching it.
	Elsewhere *httptest.Server
	// Hold is how long WatchHeld500 holds a watch (default 1 s).
	Hold time.Duration

	mode atomic.Value
	// Requests counts requests (by kind: Lists, Watches); Written, the body bytes the handlers wrote,
	// which is what the client read give or take the sockets' buffers.
	Requests, Lists, Watches, Written atomic.Int64
	// ElsewhereHits counts requests that reached Elsewhere, ElsewhereTokens those with an Authorization.
	ElsewhereHits, ElsewhereTokens atomic.Int64

	stop     chan struct{}
	stopOnce sync.Once
	bomb     []byte
	bombOnce sync.Once
}

// New starts the server in Well mode; it stops at the test's end.
func New(t testing.TB) *Server {
	s := &Server{Hold: time.Second, stop: make(chan struct{})}
	s.mode.Store(Well)
	s.Elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ElsewhereHits.Add(1)
		if r.Header.Get("Authorization") != "" {
			s.ElsewhereTokens.Add(1)
		}
		fmt.Fprint(w, `{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","metadata":{"name":"checkout","namespace":"shop"}}`)
	}))
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close ends the held answers, then both listeners.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.Server.CloseClientConnections()
	s.Server.Close()
	s.Elsewhere.Close()
}

// Set changes the misbehaviour from the next request on. The gzip bomb is made here, not while a
// client waits.
func (s *Server) Set(m Mode) {
	if m == GzipBomb {
		s.gzipBomb()
	}
	s.mode.Store(m)
}

// Mode is the current misbehaviour.
func (s *Server) Mode() Mode { return s.mode.Load().(Mode) }

// Kubeconfig is a kubeconfig of the server with token, trusting its certificate; in NameMismatch, it
// names the server "localhost", which the test certificate does not hold (it holds example.com and the
// loopback addresses).
func (s *Server) Kubeconfig(token string) string {
	server := s.URL
	if s.Mode() == NameMismatch {
		server = strings.Replace(server, "127.0.0.1", "localhost", 1)
	}
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}))
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server, ca, token)
}

const rollout = `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"checkout","namespace":"shop","resourceVersion":"1"},"spec":{},"status":{}}`

// listKind is the kind of a list of the path's resource (…/namespaces/NS/RESOURCE).
func listKind(path string) string {
	res := path[strings.LastIndex(path, "/")+1:]
	switch res {
	case "rollouts":
		return "RolloutList"
	case "analysisruns":
		return "AnalysisRunList"
	case "experiments":
		return "ExperimentList"
	}
	return "List"
}

func (s *Server) write(w http.ResponseWriter, b []byte) error {
	n, err := w.Write(b)
	s.Written.Add(int64(n))
	return err
}

// sleep waits d, or until the request or the server ends; false if they did.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.stop:
	}
	return false
}

// endless writes chunk until the client stops reading.
func (s *Server) endless(w http.ResponseWriter, r *http.Request, chunk []byte) {
	for r.Context().Err() == nil {
		if s.write(w, chunk) != nil {
			return
		}
		select {
		case <-s.stop:
			return
		default:
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	watch := r.URL.Query().Get("watch") == "true"
	list := !watch && !strings.HasSuffix(r.URL.Path, "/checkout")
	switch {
	case watch:
		s.Watches.Add(1)
	case list:
		s.Lists.Add(1)
	}
	mode := s.Mode()
	if watch {
		s.serveWatch(w, r, mode)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch mode {
	case SlowBody:
		w.WriteHeader(http.StatusOK)
		body := []byte(rollout)
		for i := 0; ; i = (i + 1) % len(body) {
			if s.write(w, body[i:i+1]) != nil {
				return
			}
			w.(http.Flusher).Flush()
			if !s.sleep(r, 100*time.Millisecond) {
				return
			}
		}
	case EndlessBody:
		s.write(w, []byte(`{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","padding":"`))
		s.endless(w, r, bytes.Repeat([]byte("a"), 64<<10))
		return
	case ManyValues:
		s.endless(w, r, bytes.Repeat([]byte("{}"), 32<<10))
		return
	case GzipBomb:
		w.Header().Set("Content-Encoding", "gzip")
		s.write(w, s.gzipBomb())
		return
	case InvalidJSON:
		s.write(w, []byte(`{"kind":"Rollout","`+Planted+`":`))
		return
	case Redirect:
		http.Redirect(w, r, s.Elsewhere.URL+"/latest/meta-data/iam/security-credentials/", http.StatusFound)
		return
	case TooManyRequests:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		s.write(w, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"`+Planted+`"}`))
		return
	}
	if !list {
		s.write(w, []byte(rollout))
		return
	}
	next := ""
	if mode == EndlessPages {
		next = fmt.Sprintf("page-%d", s.Lists.Load())
	}
	s.write(w, []byte(fmt.Sprintf(`{"apiVersion":"argoproj.io/v1alpha1","kind":%q,"metadata":{"resourceVersion":"1","continue":%q},"items":[]}`, listKind(r.URL.Path), next)))
}

func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, mode Mode) {
	switch mode {
	case WatchBeforeHeaders:
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
		return
	case WatchHeld500:
		if s.sleep(r, s.Hold) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			s.write(w, []byte(Planted))
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	switch mode {
	case WatchAfterHeaders:
		return
	case WatchMidEvent:
		s.write(w, []byte(`{"type":"MODIFIED","object":{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"`+Planted))
		return
	case WatchEndlessEvent:
		s.write(w, []byte(`{"type":"MODIFIED","object":{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","padding":"`))
		s.endless(w, r, bytes.Repeat([]byte("a"), 64<<10))
		return
	}
	s.sleep(r, time.Hour)
}

// gzipBomb is 256 MiB of one JSON value, gzipped, made once.
func (s *Server) gzipBomb() []byte {
	s.bombOnce.Do(func() {
		var b bytes.Buffer
		z, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		z.Write([]byte(`{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","padding":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 256; i++ {
			z.Write(chunk)
		}
		z.Write([]byte(`"}`))
		z.Close()
		s.bomb = b.Bytes()
	})
	return s.bomb
}
