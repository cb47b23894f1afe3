// The reliability rig's instruments and network faults: the write timer, the log tap, the TCP proxies.

package reliability

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	log "github.com/sirupsen/logrus"

	"github.com/analysis-health/analysis-health/test/rollouts/cluster"
	"github.com/analysis-health/analysis-health/test/rollouts/kargoverify"
)

// measured is one measurement the controller took and wrote: when the worker took the run (Taken), when
// it began writing the result (Written), the measurement written, and the resumeAt it was due at.
type measured struct {
	Key         string
	Taken       time.Time
	Written     time.Time
	DueAt       *time.Time
	Measurement v1alpha1.Measurement
	Count       int
}

// writeLog collects the measurements of the controller's writes of AnalysisRuns.
type writeLog struct {
	queue *timedQueue
	mu    sync.Mutex
	last  map[string]string // key -> the last measurement written, as JSON
	due   map[string]*time.Time
	all   []measured
	// interval of the runs whose metric measures on an interval (the web provider's): the next
	// measurement is due that long after the last one finished
	interval map[string]time.Duration
}

func (l *writeLog) setInterval(key string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.interval == nil {
		l.interval = map[string]time.Duration{}
	}
	l.interval[key] = d
}

func (l *writeLog) snapshot() []measured {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]measured(nil), l.all...)
}

var runPath = regexp.MustCompile(`^/apis/argoproj\.io/v1alpha1/namespaces/([^/]+)/analysisruns/([^/]+)$`)

// writeTimer notes every successful write of an AnalysisRun whose last measurement changed: a
// measurement taken.
type writeTimer struct {
	rt  http.RoundTripper
	log *writeLog
}

func (w writeTimer) RoundTrip(req *http.Request) (*http.Response, error) {
	// the controller writes a run's status as a merge patch of the status (analysis/sync.go
	// persistAnalysisRunStatus), which holds metricResults whole whenever a measurement changed
	m := runPath.FindStringSubmatch(req.URL.Path)
	if req.Method != http.MethodPatch || m == nil {
		return w.rt.RoundTrip(req)
	}
	body, err := cluster.ReadBody(req)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := w.rt.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		w.log.Note(m[1]+"/"+m[2], body, start)
	}
	return resp, err
}

func (l *writeLog) Note(key string, body []byte, now time.Time) {
	var ar v1alpha1.AnalysisRun
	if json.Unmarshal(body, &ar) != nil || len(ar.Status.MetricResults) == 0 {
		return
	}
	mr := ar.Status.MetricResults[0]
	if len(mr.Measurements) == 0 {
		return
	}
	m := mr.Measurements[len(mr.Measurements)-1]
	raw, _ := json.Marshal(struct {
		M v1alpha1.Measurement
		N int
	}{m, len(mr.Measurements)})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.due == nil {
		l.due = map[string]*time.Time{}
	}
	if l.last[key] == string(raw) {
		return
	}
	l.last[key] = string(raw)
	l.all = append(l.all, measured{Key: key, Taken: l.queue.startedAt(key), Written: now, DueAt: l.due[key], Measurement: m, Count: len(mr.Measurements)})
	if m.ResumeAt != nil {
		t := m.ResumeAt.Time
		l.due[key] = &t
	} else if d, ok := l.interval[key]; ok && m.FinishedAt != nil && m.Phase == v1alpha1.AnalysisPhaseSuccessful {
		t := m.FinishedAt.Add(d)
		l.due[key] = &t
	} else {
		// an Error or a completed measurement: the next one is due after the controller's own interval
		l.due[key] = nil
	}
}

// logTap keeps what the analysis controller logs about measurements (logrus, its logger), by run.
type logTap struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	Time    time.Time
	Run     string // namespace/name
	Level   string
	Message string
}

// tapLogs reads what the controller's loggers write, not what the standard logger's hooks see: Rollouts
// v1.10.2 logs a measurement through a logger of its own made from the standard one's output, level and
// formatter, without its hooks (utils/log WithRedactor), where v1.8.5 wrapped the standard logger's
// formatter. So the standard logger writes JSON lines to the tap, and each logger made from it does too.
func tapLogs() *logTap {
	tap := &logTap{}
	log.StandardLogger().ReplaceHooks(log.LevelHooks{})
	log.SetLevel(log.InfoLevel)
	log.SetFormatter(&log.JSONFormatter{TimestampFormat: time.RFC3339Nano})
	log.SetOutput(tap)
	return tap
}

// Write takes one entry (logrus writes each in one call) and keeps it if it is about a measurement.
func (l *logTap) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"msg":"Measurement`)) {
		return len(p), nil
	}
	var e struct {
		Time        time.Time `json:"time"`
		Level       string    `json:"level"`
		Msg         string    `json:"msg"`
		Namespace   string    `json:"namespace"`
		AnalysisRun string    `json:"analysisrun"`
	}
	if err := json.Unmarshal(p, &e); err != nil {
		return len(p), nil
	}
	l.mu.Lock()
	l.entries = append(l.entries, logEntry{Time: e.Time, Run: e.Namespace + "/" + e.AnalysisRun, Level: e.Level, Message: e.Msg})
	l.mu.Unlock()
	return len(p), nil
}

func (l *logTap) of(run string, from, to time.Time) []logEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logEntry
	for _, e := range l.entries {
		if e.Run == run && !e.Time.Before(from) && !e.Time.After(to) {
			out = append(out, e)
		}
	}
	return out
}

// faultProxy forwards TCP connections to the API server. down closes its listener (a client gets
// "connection refused", as from a stopped server) and every connection; slow delays every chunk the
// server sends by d.
type faultProxy struct {
	mu       sync.Mutex
	ln       net.Listener
	address  string
	upstream string
	delay    time.Duration
	conns    map[net.Conn]bool
}

func newFaultProxy(upstream string) (*faultProxy, error) {
	p := &faultProxy{upstream: upstream, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.address = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

func (p *faultProxy) addr() string { return p.address }

func (p *faultProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *faultProxy) forward(c net.Conn) {
	p.mu.Lock()
	up, delay := p.upstream, p.delay
	p.conns[c] = true
	p.mu.Unlock()
	u, err := net.Dial("tcp", up)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	p.conns[u] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); p.drop(u) }()
	buf := make([]byte, 32*1024)
	for {
		n, err := u.Read(buf)
		if n > 0 {
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.drop(c)
	p.drop(u)
}

func (p *faultProxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *faultProxy) down() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
}

// up listens again on the same address, forwarding to upstream.
func (p *faultProxy) up(upstream string) error {
	p.mu.Lock()
	p.upstream = upstream
	p.mu.Unlock()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.address); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// slow delays what the server sends on connections opened from now on; existing ones are closed, so the
// client's next request opens a slow one.
func (p *faultProxy) slow(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

func (p *faultProxy) close() { p.down() }

// restartCluster stops the API server program, keeps it stopped for down, and starts it again on the same
// data directory; the proxies refuse connections meanwhile and then forward to the new server.
func (r *rig) restartCluster(down time.Duration) (stopped, ready time.Time, err error) {
	r.ctrlPx.down()
	r.pluginPx.down()
	r.cluster.Close()
	r.cluster = nil
	stopped = time.Now()
	time.Sleep(down)
	if r.cluster, err = cluster.StartClusterWith(r.opts); err != nil {
		return stopped, ready, err
	}
	ready = time.Now()
	if r.admin, err = cluster.NewClients(r.cluster.Config); err != nil {
		return stopped, ready, err
	}
	up := strings.TrimPrefix(r.cluster.Config.Host, "https://")
	if err := r.ctrlPx.up(up); err != nil {
		return stopped, ready, err
	}
	return stopped, ready, r.pluginPx.up(up)
}

// lineLog keeps the lines written to it that the plugin wrote (they carry its provider name), with the
// time they arrived.
type lineLog struct {
	mu    sync.Mutex
	part  []byte
	lines []logLine
}

type logLine struct {
	Time time.Time
	Text string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := strings.IndexByte(string(l.part), '\n')
		if i < 0 {
			break
		}
		line := string(l.part[:i])
		l.part = l.part[i+1:]
		if j := strings.Index(line, kargoverify.PluginName+": "); j >= 0 {
			l.lines = append(l.lines, logLine{Time: time.Now(), Text: line[j:]})
		}
	}
	return len(p), nil
}

// since is the plugin's lines since from that contain every one of parts.
func (l *lineLog) since(from time.Time, parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, x := range l.lines {
		if x.Time.Before(from) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(x.Text, p) {
				continue next
			}
		}
		out = append(out, x.Text)
	}
	return out
}

// wait waits up to timeout for a line since from holding every one of parts.
func (l *lineLog) wait(from time.Time, timeout time.Duration, parts ...string) []string {
	deadline := time.Now().Add(timeout)
	for {
		if got := l.since(from, parts...); len(got) > 0 || time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}
