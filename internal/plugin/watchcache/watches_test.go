package watchcache

import (
	"bufio"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// serverEnv makes the test binary the API server of BenchmarkWatches (serveLists), in a process of its
// own so that the benchmark's heap and goroutines are the client's alone.
const serverEnv = "WATCHCACHE_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		serveLists()
		return
	}
	os.Exit(m.Run())
}

// serveLists answers every list of argoproj.io with an empty list and holds every watch open, over
// HTTP/2 and TLS as an API server does (one connection, a stream a watch); it prints its URL and
// certificate and serves until its input closes.
func serveLists() {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, `{"apiVersion":"argoproj.io/v1alpha1","kind":"List","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	fmt.Printf("%s\n%s", srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	os.Stdout.Close()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// listServer starts serveLists in a process of its own and returns a client of it.
func listServer(tb testing.TB) dynamic.Interface {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	rd := bufio.NewReader(out)
	url, err := rd.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	var cert strings.Builder
	for {
		line, err := rd.ReadString('\n')
		cert.WriteString(line)
		if err != nil || strings.HasPrefix(line, "-----END") {
			break
		}
	}
	c, err := dynamic.NewForConfig(&rest.Config{Host: strings.TrimSpace(url), QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte(cert.String())}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// footprint is the heap after a collection and the goroutine stacks.
func footprint() (bytes uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse, runtime.NumGoroutine()
}

// BenchmarkWatches reports what the watches themselves cost the plugin (B/namespace, goroutines/namespace)
// when 100 namespaces are verified, with nothing in them to keep: watched each on its own (three
// informers a namespace) and all at once (three informers for the cluster). Over HTTP/2 and TLS from a
// server in another process, as the plugin watches an API server.
func BenchmarkWatches(b *testing.B) {
	const namespaces = 100
	for _, c := range []struct {
		name string
		all  bool
	}{{"each-namespace", false}, {"every-namespace", true}} {
		b.Run(c.name, func(b *testing.B) {
			client := listServer(b)
			cl := Cluster{ID: "bench", Where: "the bench server", Client: func() (dynamic.Interface, error) { return client, nil }, AllNamespaces: c.all}
			for i := 0; i < b.N; i++ {
				wc := New(Options{})
				bytes0, g0 := footprint()
				for n := 0; n < namespaces; n++ {
					live(b, wc, cl, fmt.Sprintf("team-%03d", n))
				}
				bytes1, g1 := footprint()
				b.ReportMetric(float64(int64(bytes1)-int64(bytes0))/namespaces, "B/namespace")
				b.ReportMetric(float64(g1-g0)/namespaces, "goroutines/namespace")
				wc.Close()
			}
		})
	}
}
