package reliabilitydoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// HostileFile is the record of rolloutplugin TestHostileServer (-update), relative to this package.
const HostileFile = "../../plugin/remote/testdata/hostile.json"

// Hostile is one misbehaviour of the server a kubeconfig Secret names, as the plugin met it: the row
// internal/plugin/rolloutplugin TestHostileServer writes (-update) and this page reads.
type Hostile struct {
	Mode string `json:"mode"`
	// Path: "direct read" (a measurement's get) or "watches" (the watch cache's informers).
	Path    string `json:"path"`
	Phase   string `json:"phase,omitempty"`
	Outcome string `json:"outcome"`
	// Seconds: the measurement's time, or for the watches, until the failure was logged (0: none was).
	Seconds float64 `json:"seconds"`
	// ServedMiB: body bytes the server wrote, which bounds what the plugin read; PeakHeapMiB: the test
	// process's heap above its start (server included), sampled every 2 ms.
	ServedMiB   float64 `json:"servedMiB"`
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	// Elsewhere: requests that reached the host a redirect named.
	Elsewhere int64 `json:"elsewhere"`
	// Lists and Watches: the requests the server counted, the informers' and the measurements'.
	Lists   int64 `json:"lists"`
	Watches int64 `json:"watches"`
}

// ReadHostile decodes the record strictly, as ReadReport does.
func ReadHostile(path string) ([]Hostile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []Hostile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows, nil
}

// hostileSection renders the rows below the faults: what the plugin did when the remote server was the
// fault.
func hostileSection(p func(string, ...any), rows []Hostile) {
	p("### A hostile API server\n\n")
	p("The server a `kubeconfigSecret` names is whoever can write a Secret in the run's namespace chooses: one\n" +
		"TLS server of the test (internal/plugin/remote/hostiletest) misbehaving in each way below, against a\n" +
		"measurement's direct read (`apiTimeout` 2 s where the server holds it, 20 s elsewhere) and against the\n" +
		"watches of the watch cache (rolloutplugin TestHostileServer, in `go test`; `-update` records these rows,\n" +
		"here on a loaded 2-core machine). Served: the body bytes the server wrote, which bounds what the plugin\n" +
		"read; peak heap: the test process's heap above its start, the server's included, sampled every 2 ms;\n" +
		"elsewhere: requests that reached the host a redirect named. For the watches, the time is until the\n" +
		"failure was logged. In every row the process lived on, the token and the server's text were in no\n" +
		"measurement or log line, and the goroutines came back once the watches were idle (docs/security.md,\n" +
		"\"Attacks tried\").\n\n")
	p("| path | misbehaviour | measurement, or what the watches logged | time | served | peak heap | elsewhere | lists, watches |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		out := r.Outcome
		if r.Phase != "" {
			out = r.Phase + ": " + out
		}
		secs := "—"
		if r.Seconds > 0 || r.Path == "direct read" {
			secs = fmt.Sprintf("%.2f s", r.Seconds)
		}
		p("| %s | %s | %s | %s | %.1f MiB | %.1f MiB | %d | %d, %d |\n", r.Path, cell(r.Mode), cell(out), secs, r.ServedMiB, r.PeakHeapMiB, r.Elsewhere, r.Lists, r.Watches)
	}
	p("\n")
}
