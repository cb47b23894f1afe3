package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Request is one completed request of an API server's audit log (level Metadata), as the proofs count
// who read what in which cluster.
type Request struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Stage string `json:"stage"`
}

// AuditRequests reads the completed requests on a resource from the audit log path, from byte offset on,
// and returns them with the offset of the log's end (the next call's). The API server writes an event as
// the request completes: it waits a second for the last ones.
func AuditRequests(path string, offset int64) ([]Request, int64, error) {
	time.Sleep(time.Second)
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, offset, err
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, offset, err
	}
	// a line still being written is the next call's
	raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	var out []Request
	for _, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Request
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, offset, fmt.Errorf("%s: %w", path, err)
		}
		if r.Stage == "ResponseComplete" && r.ObjectRef.Resource != "" {
			out = append(out, r)
		}
	}
	return out, offset + int64(len(raw)), nil
}
