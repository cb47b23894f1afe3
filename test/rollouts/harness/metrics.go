package harness

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Answer is one scripted reply of the metrics server to one measurement.
type Answer struct {
	Value  float64       // the measured value (JSON {"value": v}, or a one-sample Prometheus vector)
	Status int           // HTTP status; 0 is 200
	Delay  time.Duration // answer this late (longer than the metric's timeout: the provider gives up)
}

// OK, Bad and so on build answers; the templates succeed at >= 0.95 and fail below 0.8.
func OK(v float64) Answer       { return Answer{Value: v} }
func HTTPError(code int) Answer { return Answer{Status: code} }
func Slow(d time.Duration) Answer {
	return Answer{Value: 0.99, Delay: d}
}

// MetricsServer answers the `web` and `prometheus` metric providers of the analysis controller on
// 127.0.0.1, from per-metric scripts: each request takes the next answer of its metric (the last one
// repeats), whichever run it comes from. Down closes the listener, so measurements fail with
// "connection refused"; Up opens it again on the same port.
type MetricsServer struct {
	mu      sync.Mutex
	addr    string
	ln      net.Listener
	srv     *http.Server
	scripts map[string][]Answer
	served  map[string]int
	// requests counts every request, answered or not, by endpoint and run: the plugin proof shows it
	// never adds one to any run.
	requests map[Endpoint]int
}

// Endpoint is what a request names: the metric (the web metric, or the Prometheus series) and the run
// (Templates' revision and use args, as the URL's query or the query's label matchers carry them). The
// attempts of one analysis (a retry's run …-1.1 after …-1) share a run key.
type Endpoint struct {
	Metric string
	Run    string // "<revision>/<use>"; "" for a URL or query that carries no run
}

// The parts of Templates' URLs and queries that name the run; the analysis controller resolves them
// from the run's args (utils/analysis factory.go ResolveMetricArgs).
const (
	webRunQuery     = "?" + argRevision + "={{args." + argRevision + "}}&" + argUse + "={{args." + argUse + "}}"
	promRunMatchers = "{" + argRevision + `="{{args.` + argRevision + `}}",` + argUse + `="{{args.` + argUse + `}}"}`
)

var promRun = regexp.MustCompile(`^([^{]*)\{` + argRevision + `="([^"]*)",` + argUse + `="([^"]*)"\}$`)

func runKey(revision, use string) string {
	if revision == "" && use == "" {
		return ""
	}
	return revision + "/" + use
}

// WebEndpoint is the endpoint of a web metric's URL (a request's, or a run's resolved metric).
func WebEndpoint(u *url.URL) Endpoint {
	q := u.Query()
	return Endpoint{Metric: strings.TrimPrefix(u.Path, "/web/"), Run: runKey(q.Get(argRevision), q.Get(argUse))}
}

// PrometheusEndpoint is the endpoint of a Prometheus query.
func PrometheusEndpoint(query string) Endpoint {
	if m := promRun.FindStringSubmatch(query); m != nil {
		return Endpoint{Metric: m[1], Run: runKey(m[2], m[3])}
	}
	return Endpoint{Metric: query}
}

// Host is the recorded stand-in for the server's address: timelines must not depend on the port.
const Host = "metrics.shop.svc"

func NewMetricsServer() (*MetricsServer, error) {
	m := &MetricsServer{scripts: map[string][]Answer{}, served: map[string]int{}, requests: map[Endpoint]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m.addr = ln.Addr().String()
	m.serve(ln)
	return m, nil
}

func (m *MetricsServer) serve(ln net.Listener) {
	m.ln = ln
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
}

// Addr is host:port.
func (m *MetricsServer) Addr() string { return m.addr }

// URL of the web endpoint of a metric.
func (m *MetricsServer) URL(metric string) string { return "http://" + m.addr + "/web/" + metric }

// PrometheusAddress is the address a prometheus provider queries (Prometheus' HTTP API under it).
func (m *MetricsServer) PrometheusAddress() string { return "http://" + m.addr + "/prometheus" }

// Script replaces the answers of a metric and restarts its count.
func (m *MetricsServer) Script(metric string, answers ...Answer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[metric] = answers
	m.served[metric] = 0
}

// Reset forgets every script (between scenarios).
func (m *MetricsServer) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts = map[string][]Answer{}
	m.served = map[string]int{}
	m.requests = map[Endpoint]int{}
}

// Requests are the requests received so far, by endpoint and run.
func (m *MetricsServer) Requests() map[Endpoint]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[Endpoint]int{}
	for k, v := range m.requests {
		out[k] = v
	}
	return out
}

func (m *MetricsServer) next(metric string) (Answer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scripts[metric]
	if len(s) == 0 {
		return Answer{}, false
	}
	i := m.served[metric]
	m.served[metric]++
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i], true
}

// Down stops accepting connections.
func (m *MetricsServer) Down() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln == nil {
		return nil
	}
	err := m.srv.Close()
	m.ln = nil
	return err
}

// Up listens again on the same address.
func (m *MetricsServer) Up() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln != nil {
		return nil
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", m.addr); err == nil {
			m.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Close stops the server for good.
func (m *MetricsServer) Close() { _ = m.Down() }

func (m *MetricsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e Endpoint
	prom := false
	switch {
	case strings.HasPrefix(r.URL.Path, "/web/"):
		e = WebEndpoint(r.URL)
	case r.URL.Path == "/prometheus/api/v1/query":
		// the query names the scripted series
		_ = r.ParseForm()
		e, prom = PrometheusEndpoint(r.Form.Get("query")), true
	}
	metric := e.Metric
	m.mu.Lock()
	m.requests[e]++
	m.mu.Unlock()
	if metric == "" {
		http.NotFound(w, r)
		return
	}
	a, ok := m.next(metric)
	if !ok {
		http.Error(w, fmt.Sprintf("no script for metric %q", metric), http.StatusNotFound)
		return
	}
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		http.Error(w, http.StatusText(a.Status), a.Status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !prom {
		_ = json.NewEncoder(w).Encode(map[string]any{"value": a.Value})
		return
	}
	// Prometheus HTTP API, instant query, vector result
	result := []any{map[string]any{
		"metric": map[string]string{"app": Name},
		"value":  []any{1767225600, fmt.Sprint(a.Value)},
	}}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "success",
		"data":   map[string]any{"resultType": "vector", "result": result},
	})
}

// EndpointOf is the metrics server's endpoint and run a run's metric queries (MetricsServer.ServeHTTP):
// the metric resolved with the run's args (utils/analysis factory.go ResolveMetricArgs, which the analysis
// controller applies before every measurement, analysis/analysis.go).
func EndpointOf(m v1alpha1.Metric, args []v1alpha1.Argument) (Endpoint, error) {
	r, err := analysisutil.ResolveMetricArgs(m, args)
	if err != nil {
		return Endpoint{}, err
	}
	switch {
	case r.Provider.Web != nil:
		u, err := url.Parse(r.Provider.Web.URL)
		if err != nil {
			return Endpoint{}, err
		}
		return WebEndpoint(u), nil
	case r.Provider.Prometheus != nil:
		return PrometheusEndpoint(r.Provider.Prometheus.Query), nil
	}
	return Endpoint{}, fmt.Errorf("no web or prometheus provider")
}
