package remote

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// MaxResponse bounds what the plugin reads of one answer of a remote cluster: the whole body of a get or
// a list page. A list page of the plugin's 500 runs of a few KiB each, or one object at etcd's default
// limit of 1.5 MiB, is far below it.
const MaxResponse = 32 << 20

// MaxEvent bounds each event of a watch: one object, which the API server takes only up to 3 MiB (its
// request limit). A space's three watches may each be reading one at once, so this, not MaxResponse,
// is what a hostile watch can make the plugin hold.
const MaxEvent = 8 << 20

// ErrResponseTooLarge is the error of a remote answer over MaxResponse, or a watch event over MaxEvent.
var ErrResponseTooLarge = fmt.Errorf("the remote cluster's answer is larger than %d MiB (a watch event: %d MiB): refused", MaxResponse>>20, MaxEvent>>20)

// ErrRedirect is the error of a remote answer that redirects: the plugin never follows one.
var ErrRedirect = errors.New("its server answered with a redirect, which the plugin never follows (the kubeconfig's credentials go to its server alone)")

// limitResponses bounds every answer of a remote cluster and refuses a redirect. client-go reads the
// whole body of a get or a list (k8s.io/client-go/rest/request.go transformResponse, io.ReadAll), so
// that is bounded whole; a watch (watch=true) is a stream of events without end, bounded per event.
// A 3xx is an error here, below the http.Client, so the client has nothing to follow.
func limitResponses(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || resp == nil {
			return resp, err
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			if resp.Body != nil {
				resp.Body.Close()
			}
			return nil, &RedirectError{Status: resp.StatusCode}
		}
		if resp.Body == nil {
			return resp, nil
		}
		if isWatch(req) {
			resp.Body = &valueLimited{r: resp.Body, max: MaxEvent}
		} else {
			resp.Body = &bodyLimited{r: resp.Body, left: MaxResponse}
		}
		return resp, nil
	})
}

// RedirectError is a refused redirect; it is ErrRedirect to errors.Is.
type RedirectError struct{ Status int }

func (e *RedirectError) Error() string { return fmt.Sprintf("HTTP %d: %v", e.Status, ErrRedirect) }

func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// isWatch says whether client-go asked for a watch: the query's watch=true (metav1.ListOptions), or the
// deprecated /watch/ path.
func isWatch(req *http.Request) bool {
	if w, err := strconv.ParseBool(req.URL.Query().Get("watch")); err == nil && w {
		return true
	}
	return strings.Contains(req.URL.Path, "/watch/")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// bodyLimited fails once more than left bytes arrive: a get or a list page is one answer, whatever
// number of JSON values the server puts in it.
type bodyLimited struct {
	r    io.ReadCloser
	left int
}

func (l *bodyLimited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrResponseTooLarge
	}
	// one byte past the bound tells an answer of exactly MaxResponse from a longer one
	if len(p) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if l.left -= n; l.left < 0 {
		return n, ErrResponseTooLarge
	}
	return n, err
}

func (l *bodyLimited) Close() error { return l.r.Close() }

// valueLimited fails once more than max bytes arrive without a top-level JSON value ending: a watch's
// events run on, each bounded. It follows only strings and brackets: enough to find where a value ends,
// whatever the server's line breaks.
type valueLimited struct {
	r        io.ReadCloser
	max, n   int
	depth    int
	inString bool
	escaped  bool
}

func (l *valueLimited) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, ErrResponseTooLarge
	}
	if room := l.max + 1 - l.n; len(p) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		l.n++
		switch {
		case l.inString && l.escaped:
			l.escaped = false
		case l.inString && b == '\\':
			l.escaped = true
		case l.inString && b == '"':
			l.inString = false
		case l.inString:
		case b == '"':
			l.inString = true
		case b == '{' || b == '[':
			l.depth++
		case (b == '}' || b == ']') && l.depth > 0:
			if l.depth--; l.depth == 0 {
				l.n = 0
			}
		}
	}
	if l.n > l.max {
		return n, ErrResponseTooLarge
	}
	return n, err
}

func (l *valueLimited) Close() error { return l.r.Close() }
