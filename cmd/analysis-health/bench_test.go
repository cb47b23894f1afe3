package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/internal/bench/bulkgen"
	"github.com/analysis-health/analysis-health/internal/cli"
)

// The bulk benchmarks (make bench-cli; docs/performance-cli.md is generated from their output).
const (
	listObjects = 10000
	chartDocs   = 5000
)

// BenchmarkBulkHealth runs the built binary, as a user would, on a 10,000-object List as kubectl get -o
// json prints it, once per output format, and on the same List as kubectl get -o yaml prints it.
// Throughput is objects per second of wall time; memory is the child's peak RSS (rusage maxrss), also as a
// multiple of the input's size. Every run's output is checked: one row per object, in input order.
func BenchmarkBulkHealth(b *testing.B) {
	bin := buildBinary(b)
	raw, err := bulkgen.List(listObjects)
	if err != nil {
		b.Fatal(err)
	}
	yamlRaw, err := sigsyaml.JSONToYAML(raw)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	inputs := map[string]string{"json": filepath.Join(dir, "list.json"), "yaml": filepath.Join(dir, "list.yaml")}
	sizes := map[string]int{"json": len(raw), "yaml": len(yamlRaw)}
	if err := os.WriteFile(inputs["json"], raw, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(inputs["yaml"], yamlRaw, 0o644); err != nil {
		b.Fatal(err)
	}
	raw, yamlRaw = nil, nil
	// Linux starts a child's maxrss at its parent's peak RSS (exec inherits the high-water mark of the
	// memory it replaces, and Go starts children with the parent's memory shared): give back what
	// generating the input took, reset this process's peak (/proc/self/clear_refs, 5), and report the
	// peak left as the measurement's floor.
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS, peak-RSS-MB includes this process's: %v", err)
	}
	floor := selfPeakRSS(b)
	for _, run := range []struct{ input, format string }{{"json", "table"}, {"json", "json"}, {"json", "yaml"}, {"yaml", "table"}} {
		b.Run("input="+run.input+"/output="+run.format, func(b *testing.B) {
			size := sizes[run.input]
			var wall, cpu time.Duration
			var peak int64
			var load float64
			for i := 0; i < b.N; i++ {
				load += loadAverage(b)
				var out, errOut bytes.Buffer
				cmd := exec.Command(bin, "health", "-f", inputs[run.input], "-o", run.format)
				cmd.Stdout, cmd.Stderr = &out, &errOut
				start := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %s", err, errOut.String())
				}
				wall += time.Since(start)
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				peak = max(peak, ru.Maxrss*1024) // kilobytes on Linux
				if err := checkRows(run.format, out.Bytes(), listObjects); err != nil {
					b.Fatal(err)
				}
			}
			objects := float64(listObjects * b.N)
			b.ReportMetric(objects/wall.Seconds(), "objects/s")
			b.ReportMetric(objects/cpu.Seconds(), "objects/cpu-s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
			b.ReportMetric(float64(size)/(1<<20), "input-MB")
			b.ReportMetric(float64(peak)/float64(size), "RSS/input")
			b.ReportMetric(float64(floor)/(1<<20), "parent-peak-RSS-MB")
			b.ReportMetric(float64(listObjects), "objects")
			b.ReportMetric(load/float64(b.N), "load-avg")
		})
	}
}

// memoryChartDocs is the stream of BenchmarkBulkMemory: about 40 MB, the size of the big inputs users
// reported (issue 35: a 50 MB file).
const memoryChartDocs = 50000

// BenchmarkBulkMemory runs the built binary's three verbs that read manifests, each on the big inputs it
// is meant for, and reports each one's peak RSS as a multiple of its input: health and inspect on the
// 10,000-object JSON List, and inspect, hooks --post-renderer and health on a 50,000-document chart
// stream. inspect and health stream their input (one document or List item at a time, with per-object
// summaries); hooks must give every document back byte for byte after the barrier, so it holds the input
// by design. Every run must exit 0 and print something a test could check: inspect one row per Rollout,
// hooks the whole input and the barrier, health a row per Rollout at least.
func BenchmarkBulkMemory(b *testing.B) {
	bin := buildBinary(b)
	list, err := bulkgen.List(listObjects)
	if err != nil {
		b.Fatal(err)
	}
	chart, err := bulkgen.Chart(filepath.Join("..", "..", "testdata", "charts"), memoryChartDocs)
	if err != nil {
		b.Fatal(err)
	}
	listRollouts, err := countRollouts(list)
	if err != nil {
		b.Fatal(err)
	}
	chartRollouts, err := countRollouts(chart)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	inputs := map[string]string{"list": filepath.Join(dir, "list.json"), "chart": filepath.Join(dir, "chart.yaml")}
	sizes := map[string]int{"list": len(list), "chart": len(chart)}
	rollouts := map[string]int{"list": listRollouts, "chart": chartRollouts}
	if err := os.WriteFile(inputs["list"], list, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(inputs["chart"], chart, 0o644); err != nil {
		b.Fatal(err)
	}
	list, chart = nil, nil
	debug.FreeOSMemory() // see BenchmarkBulkHealth: a child's maxrss starts at its parent's peak
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS, peak-RSS-MB includes this process's: %v", err)
	}
	floor := selfPeakRSS(b)
	for _, run := range []struct{ verb, input string }{{"health", "list"}, {"inspect", "list"}, {"health", "chart"}, {"inspect", "chart"}, {"hooks", "chart"}} {
		b.Run("verb="+run.verb+"/input="+run.input, func(b *testing.B) {
			args := []string{run.verb, "-f", inputs[run.input]}
			switch run.verb {
			case "hooks":
				args = []string{"hooks", "--post-renderer", "-f", inputs[run.input]}
			case "inspect":
				args = append(args, "-o", "json") // counted exactly by checkVerbOutput
			}
			var wall time.Duration
			var peak int64
			for i := 0; i < b.N; i++ {
				var out, errOut bytes.Buffer
				cmd := exec.Command(bin, args...)
				cmd.Stdout, cmd.Stderr = &out, &errOut
				start := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %v: %s", args, err, errOut.String())
				}
				wall += time.Since(start)
				peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss*1024)
				if err := checkVerbOutput(run.verb, out.Bytes(), sizes[run.input], rollouts[run.input]); err != nil {
					b.Fatalf("%v: %v", args, err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
			b.ReportMetric(float64(sizes[run.input])/(1<<20), "input-MB")
			b.ReportMetric(float64(peak)/float64(sizes[run.input]), "RSS/input")
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s")
			b.ReportMetric(float64(rollouts[run.input]), "rollouts")
			b.ReportMetric(float64(floor)/(1<<20), "parent-peak-RSS-MB")
		})
	}
}

// countRollouts counts the Rollouts of a stream or List, decoded as any reader would.
func countRollouts(raw []byte) (int, error) {
	n := 0
	err := eachDocument(raw, func(doc []byte) error {
		var obj struct {
			Kind  string `json:"kind"`
			Items []struct {
				Kind string `json:"kind"`
			} `json:"items"`
		}
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil {
			return err
		}
		if obj.Kind == "Rollout" {
			n++
		}
		for _, it := range obj.Items {
			if it.Kind == "Rollout" {
				n++
			}
		}
		return nil
	})
	return n, err
}

// checkVerbOutput holds each verb's output to what it must contain, so that a run that read nothing does
// not pass as a cheap one.
func checkVerbOutput(verb string, out []byte, inputSize, rollouts int) error {
	switch verb {
	case "inspect":
		var rep struct {
			Rollouts []json.RawMessage `json:"rollouts"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return err
		}
		if len(rep.Rollouts) != rollouts {
			return fmt.Errorf("%d Rollouts reported, want %d", len(rep.Rollouts), rollouts)
		}
	case "hooks":
		if len(out) < inputSize || !bytes.Contains(out, []byte("analysis-health")) {
			return fmt.Errorf("%d bytes out of %d in, or no barrier", len(out), inputSize)
		}
	default:
		if bytes.Count(out, []byte("\n")) < rollouts {
			return fmt.Errorf("%d rows, want at least one per Rollout (%d)", bytes.Count(out, []byte("\n")), rollouts)
		}
	}
	return nil
}

// checkRows checks that out has one row per object, in input order (bulkgen numbers every name).
func checkRows(format string, out []byte, n int) error {
	var names []string
	switch format {
	case "json":
		var rows []cli.HealthRow
		if err := json.Unmarshal(out, &rows); err != nil {
			return err
		}
		for _, r := range rows {
			names = append(names, r.Name)
		}
	case "yaml":
		var rows []cli.HealthRow
		if err := sigsyaml.Unmarshal(out, &rows); err != nil {
			return err
		}
		for _, r := range rows {
			names = append(names, r.Name)
		}
	default:
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 3 && f[0] != "KIND" {
				names = append(names, f[2])
			}
		}
	}
	if len(names) != n {
		return fmt.Errorf("-o %s: %d rows, want %d", format, len(names), n)
	}
	for i, name := range names {
		if !strings.HasSuffix(name, fmt.Sprintf("-%05d", i)) {
			return fmt.Errorf("-o %s: row %d is %s: not in input order", format, i, name)
		}
	}
	return nil
}

// BenchmarkBulkStream measures inspect and hooks --post-renderer on a 5,000-document rendered chart side by
// side with a bare decode of the same stream (apimachinery's YAMLReader split, sigs.k8s.io/yaml decode of
// every document, one after the other: what any tool reading the stream pays). Each op runs all three;
// the ratios are of CPU time (the process's user+system time over the phase), the cost measure that does
// not depend on how many cores the machine lends; wall-time ratios are reported too.
func BenchmarkBulkStream(b *testing.B) {
	raw, err := bulkgen.Chart(filepath.Join("..", "..", "testdata", "charts"), chartDocs)
	if err != nil {
		b.Fatal(err)
	}
	input := filepath.Join(b.TempDir(), "chart.yaml")
	if err := os.WriteFile(input, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	docs := 0
	phases := []struct {
		name string
		run  func() error
	}{
		{"decode", func() error {
			n, err := bareDecode(raw)
			docs = n
			return err
		}},
		{"inspect", func() error { return runCLI("inspect", "-f", input) }},
		{"hooks", func() error { return runCLI("hooks", "--post-renderer", "-f", input) }},
	}
	wall := make([]time.Duration, len(phases))
	cpu := make([]time.Duration, len(phases))
	for i := 0; i < b.N; i++ {
		for p, ph := range phases {
			runtime.GC()
			c0, w0 := processCPU(), time.Now()
			if err := ph.run(); err != nil {
				b.Fatalf("%s: %v", ph.name, err)
			}
			wall[p] += time.Since(w0)
			cpu[p] += processCPU() - c0
		}
	}
	if docs < chartDocs {
		b.Fatalf("%d documents, want at least %d", docs, chartDocs)
	}
	b.ReportMetric(float64(docs), "documents")
	b.ReportMetric(float64(len(raw))/(1<<20), "input-MB")
	for p, ph := range phases {
		b.ReportMetric(cpu[p].Seconds()*1000/float64(b.N), ph.name+"-cpu-ms")
		b.ReportMetric(wall[p].Seconds()*1000/float64(b.N), ph.name+"-wall-ms")
		if p > 0 {
			b.ReportMetric(cpu[p].Seconds()/cpu[0].Seconds(), ph.name+"/decode-cpu")
			b.ReportMetric(wall[p].Seconds()/wall[0].Seconds(), ph.name+"/decode-wall")
		}
	}
}

func bareDecode(raw []byte) (int, error) {
	n := 0
	err := eachDocument(raw, func(doc []byte) error {
		var obj map[string]any
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil {
			return err
		}
		if obj != nil {
			n++
		}
		return nil
	})
	return n, err
}

// eachDocument splits raw where apimachinery's YAMLReader does and calls fn on each document in turn.
func eachDocument(raw []byte, fn func(doc []byte) error) error {
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
}

func runCLI(args ...string) error {
	var errOut bytes.Buffer
	if code := cli.Run(args, &cli.Options{Out: io.Discard, ErrOut: &errOut}); code != 0 {
		return fmt.Errorf("%v: exit %d: %s", args, code, errOut.String())
	}
	return nil
}

// selfPeakRSS is this process's peak resident memory (VmHWM in /proc/self/status).
func selfPeakRSS(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(v, &kb); err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// loadAverage is the machine's 1-minute load average: the benchmarks share the machine, and wall-clock
// figures mean little without it.
func loadAverage(b *testing.B) float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Fatal(err)
	}
	var l float64
	if _, err := fmt.Sscan(string(raw), &l); err != nil {
		b.Fatal(err)
	}
	return l
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildBinary builds this command, as users run it.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "analysis-health")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
