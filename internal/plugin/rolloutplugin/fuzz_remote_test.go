package rolloutplugin_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/client-go/dynamic"

	"github.com/analysis-health/analysis-health/internal/plugin/rolloutplugin"
)

// FuzzRemoteResponse: any answer of the server a kubeconfig Secret names — any status, content type
// and body, the body repeated up to 1023 times and 40 MiB — through a measurement: never a panic, never more read than
// MaxRemoteResponse (an answer over it is an Error saying so), and a read's Error does not quote the
// server: no 16 bytes of its body are in the message, only its HTTP status.
func FuzzRemoteResponse(f *testing.F) {
	type answer struct {
		status int
		ctype  string
		body   []byte
		repeat int
	}
	var mu sync.Mutex
	var cur answer
	var written atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := cur
		mu.Unlock()
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		for i := 0; i < a.repeat; i++ {
			n, err := w.Write(a.body)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	kubeconfig := kubeconfigFor(srv.URL, srv)
	local := fakeClient(secret("kargo-shop", "workload", map[string]string{"config": kubeconfig}))
	p := rolloutplugin.New(rolloutplugin.Options{Local: func() (dynamic.Interface, error) { return local, nil }})
	// the server never holds an answer: the longest apiTimeout, so that reading 32 MiB under the race
	// detector on a loaded machine is not taken for a server that does not answer
	cfg := metric(`{"name":"checkout","namespace":"shop","kubeconfigSecret":{"name":"workload","key":"config"},"apiTimeout":"60s"}`)

	for _, s := range []struct {
		status uint16
		ctype  uint8
		body   string
		repeat uint16
	}{
		{0, 0, `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"checkout","namespace":"shop"}}`, 1},
		{200, 0, strings.Repeat(`{}`, 20<<10), 1000},
		{300, 0, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + strings.Repeat("PLANTED-REASON ", 6) + `","code":500}`, 1},
		{203, 1, `<html>PLANTED internal page of the network</html>`, 1},
		{229, 0, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"PLANTED message of the server"}`, 1},
		{102, 2, `{"kind":"Rollout","apiVersion":"argoproj.io/v1alpha1","metadata":{"name":"`, 1},
		{0, 0, strings.Repeat("a", 40<<10), 1000},
		{0, 0, `{"kind":"RolloutList","apiVersion":"argoproj.io/v1alpha1","items":[{"kind":"Rollout"}]}`, 1},
	} {
		f.Add(s.status, s.ctype, []byte(s.body), s.repeat)
	}
	ctypes := []string{"application/json", "text/plain", "", "application/vnd.kubernetes.protobuf", "application/json;stream=watch"}
	f.Fuzz(func(t *testing.T, status uint16, ctype uint8, body []byte, repeat uint16) {
		// a repeat of up to 1023: most answers stay small, so that the fuzzer runs many; a body of 40 KiB
		// (the seed's) makes one over the bound
		a := answer{status: 200 + int(status)%400, ctype: ctypes[int(ctype)%len(ctypes)], body: body, repeat: int(repeat) % 1024}
		if len(body) == 0 {
			a.repeat = 0
		} else if total := len(body) * a.repeat; total > 40<<20 {
			a.repeat = (40 << 20) / len(body)
		}
		mu.Lock()
		cur = a
		mu.Unlock()
		written.Store(0)
		m := p.Run(analysisRun(), cfg)
		if strings.Contains(m.Message, "internal error") {
			t.Fatalf("the plugin panicked: %s", m.Message)
		}
		if w := written.Load(); w > rolloutplugin.MaxRemoteResponse+8<<20 {
			t.Fatalf("the server wrote %d MiB before the plugin stopped reading", w>>20)
		}
		total := len(body) * a.repeat
		bodied := a.status != http.StatusNoContent && a.status != http.StatusNotModified && (a.status < 300 || a.status >= 400)
		if bodied && total > rolloutplugin.MaxRemoteResponse && !strings.Contains(m.Message, "larger than") {
			t.Fatalf("an answer of %d MiB: %s %q", total>>20, m.Phase, m.Message)
		}
		// a read's error names the cluster; the verdict's messages are the Rollout's own words
		if m.Phase != v1alpha1.AnalysisPhaseError || !strings.Contains(m.Message, "the cluster of the kubeconfig in Secret") {
			return
		}
		// what the plugin says in its own words may be in a body too: only the rest could be the server's
		own := strings.NewReplacer("Rollout shop/checkout", "", "the cluster of the kubeconfig in Secret kargo-shop/workload", "").Replace(m.Message)
		for i := 0; i+16 <= len(body); i++ {
			if w := body[i : i+16]; strings.Contains(own, string(w)) {
				t.Fatalf("the message quotes the server's answer %q: %q", w, m.Message)
			}
		}
	})
}
