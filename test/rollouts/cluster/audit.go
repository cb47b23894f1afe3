package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Request is one completed request of an API server's audit log (level Metadata, written once a request
// completes: ../../kube-apiserver-v1.34 auditPolicy), as the proofs count who read what in which cluster.
type Request struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Stage    string           `json:"stage"`
	Received metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// AuditRequests reads the completed requests of the audit log path from byte offset on (with user set,
// only that user's), and returns them with the offset the next call starts from: after the last whole
// line, since a line still being written is the next call's. The API server writes a request's line as
// it completes, so a caller that wants the requests up to now waits a moment first.
func AuditRequests(path string, offset int64, user string) ([]Request, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	var out []Request
	rd := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := rd.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, offset, nil
		}
		if err != nil {
			return nil, offset, err
		}
		offset += int64(len(line))
		// most lines are other users': skip them without decoding
		if user != "" && !bytes.Contains(line, []byte(`"`+user+`"`)) {
			continue
		}
		var r Request
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, offset, fmt.Errorf("%s: %w", path, err)
		}
		if r.Stage != "ResponseComplete" || user != "" && r.User.Username != user {
			continue
		}
		out = append(out, r)
	}
}
