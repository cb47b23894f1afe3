// Package reliabilitydoc renders docs/reliability.md from the committed output of a reliability run: the
// report test/rollouts/reliability TestReliability writes under -update (test/testdata/reliability/<version>.json) and
// the output of the fuzz targets (testdata/fuzz.txt), both written by `make reliability`. The report is
// decoded strictly, so a field the recorder adds or renames fails here instead of vanishing from the page.
package reliabilitydoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Report is the run's output, as test/rollouts/reliability relReport writes it.
type Report struct {
	Machine          Machine     `json:"machine"`
	Controller       string      `json:"controller"`
	Scenario         string      `json:"scenario"`
	LeastPrivilege   Privilege   `json:"leastPrivilege"`
	KubeconfigSecret Secret      `json:"kubeconfigSecret"`
	Oversized        []Oversized `json:"oversized"`
	Faults           []Fault     `json:"faults"`
	Loads            []Load      `json:"loads"`
}

type Machine struct {
	CPU     string `json:"cpu"`
	Cores   int    `json:"cores"`
	MemGiB  int    `json:"memGiB"`
	Kernel  string `json:"kernel"`
	Started string `json:"started"`
}

type Step struct {
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	Pinned  string `json:"pinned,omitempty"`
}

type Fault struct {
	Fault     string   `json:"fault"`
	Expected  string   `json:"expected"`
	Written   []Step   `json:"written"`
	Unwritten []string `json:"unwritten,omitempty"`
	Observed  []string `json:"observed"`
	Final     string   `json:"final"`
}

type Privilege struct {
	Scenario string   `json:"scenario"`
	Used     []string `json:"used"`
	Full     Step     `json:"full"`
	Removed  []struct {
		Grant  string `json:"grant"`
		Step   Step   `json:"measurement"`
		Logged string `json:"logged,omitempty"`
	} `json:"removed"`
}

type Secret struct {
	Measurements int      `json:"measurements"`
	Local        []string `json:"local"`
	Remote       []string `json:"remote"`
}

type Oversized struct {
	Case       string `json:"case"`
	Bytes      int    `json:"bytes"`
	Phase      string `json:"phase"`
	LatencyMS  int64  `json:"latencyMs"`
	ValueBytes int    `json:"valueBytes"`
}

type Quantiles struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// Controller is the analysis controller's client rate limit (--qps, --burst) and --analysis-threads.
type Controller struct {
	QPS     int `json:"qps"`
	Burst   int `json:"burst"`
	Threads int `json:"analysisThreads"`
}

func (c Controller) String() string {
	return fmt.Sprintf("--qps %d --burst %d, %d threads", c.QPS, c.Burst, c.Threads)
}

type Load struct {
	Controller      Controller         `json:"controller"`
	Provider        string             `json:"provider"`
	Rollouts        int                `json:"rollouts"`
	Namespaces      int                `json:"namespaces"`
	Verified        int                `json:"verified,omitempty"` // when a verification names fewer than all
	SetupSeconds    int                `json:"setupSeconds"`
	WindowSeconds   int                `json:"windowSeconds"`
	Measurements    int                `json:"measurements"`
	Errors          int                `json:"errors"`
	FewestPerRun    int                `json:"fewestPerRun"`
	ExpectedRun     int                `json:"expectedPerRun"`
	LatencyMS       Quantiles          `json:"latencyMs"`
	LateMS          Quantiles          `json:"lateMs"`
	OverTimeout     int                `json:"overApiTimeout"`
	LateByPoll      int                `json:"lateByMoreThanPollInterval"`
	Requests        map[string]float64 `json:"requestsPerMeasurement"`
	RequestsTotal   float64            `json:"apiRequestsPerMeasurement"`
	UnselectedList  int                `json:"listsWithoutSelector"`
	MetricsRequests float64            `json:"metricsRequestsPerMeasurement,omitempty"`
	PluginPeakRSS   int64              `json:"pluginPeakRssBytes,omitempty"`
	PluginRSS       int64              `json:"pluginRssBytes,omitempty"`
	PluginCPU       float64            `json:"pluginCpuCores,omitempty"`
	ControllerRSS   int64              `json:"controllerRssBytes"`
	ControllerCPU   float64            `json:"controllerCpuCores"`
	APIServerRSS    int64              `json:"apiServerRssBytes,omitempty"`
	APIServerCPU    float64            `json:"apiServerCpuCores,omitempty"`
	LoadAvg         string             `json:"loadAvg"`
	StoppedBy       string             `json:"stoppedBy,omitempty"`
}

// PerSecond is the measurements a second of the window.
func (l Load) PerSecond() float64 { return float64(l.Measurements) / float64(max(l.WindowSeconds, 1)) }

// ReadReport decodes a run's report strictly.
func ReadReport(path string) (Report, error) {
	var r Report
	raw, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Fuzzed is one fuzz target's run.
type Fuzzed struct {
	Package, Target, Time string
	Execs, Interesting    string
	Passed                bool
}

var (
	fuzzHeader = regexp.MustCompile(`^=== fuzz (\S+) (\S+) (\S+)$`)
	fuzzLine   = regexp.MustCompile(`^fuzz: elapsed: (\S+), execs: (\d+) \((\d+)/sec\), new interesting: (\d+) \(total: (\d+)\)`)
)

// ReadFuzz reads the output of the fuzz targets, each after a "=== fuzz <package> <target> <fuzztime>"
// line (the Makefile's).
func ReadFuzz(path string) ([]Fuzzed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Fuzzed
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := fuzzHeader.FindStringSubmatch(line); m != nil {
			out = append(out, Fuzzed{Package: m[1], Target: m[2], Time: m[3]})
			continue
		}
		if len(out) == 0 {
			continue
		}
		cur := &out[len(out)-1]
		if m := fuzzLine.FindStringSubmatch(line); m != nil {
			cur.Time, cur.Execs, cur.Interesting = m[1], m[2], m[5]
		}
		if strings.HasPrefix(line, "ok ") {
			cur.Passed = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no fuzz target's output", path)
	}
	for _, z := range out {
		if z.Execs == "" {
			return nil, fmt.Errorf("%s: %s %s reported no executions", path, z.Package, z.Target)
		}
	}
	return out, sc.Err()
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

func sortedKeys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

func check(ok bool) string {
	if ok {
		return "held"
	}
	return "**not held**"
}

// Version is the Argo Rollouts version the report's controller ran ("v1.8.5"), from its description.
func (r Report) Version() string {
	f := strings.Fields(r.Controller)
	if len(f) < 2 {
		return r.Controller
	}
	return strings.TrimSuffix(f[1], ",")
}
