package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestValueLimited: the bound is per top-level JSON value, so a watch's stream of small events runs on
// past it, while one value over it fails whatever its line breaks or the brackets inside its strings.
func TestValueLimited(t *testing.T) {
	event := `{"type":"MODIFIED","object":{"kind":"AnalysisRun","message":"a } in a \" string ]"}}` + "\n"
	for _, tc := range []struct {
		name, body string
		fail       bool
	}{
		{"a stream of small values past the bound", strings.Repeat(event, 100), false},
		{"one value over the bound", `{"items":[` + strings.Repeat(`"aaaaaaaa",`, 20) + `"a"]}`, true},
		{"over the bound on many lines", `{"items":[` + strings.Repeat("\"a\",\n", 40) + `"a"]}`, true},
		{"a string that hides its closing brackets", `{"a":"` + strings.Repeat(`}]`, 100) + `"}`, true},
		{"white space without end", strings.Repeat(" \n", 200), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &valueLimited{r: io.NopCloser(strings.NewReader(tc.body)), max: len(event) + 10}
			got, err := io.ReadAll(l)
			if fail := errors.Is(err, ErrResponseTooLarge); fail != tc.fail || (err != nil && !fail) {
				t.Fatalf("err %v, want refused %v", err, tc.fail)
			}
			if !tc.fail && string(got) != tc.body {
				t.Error("the stream was changed")
			}
			if len(got) > len(event)+11 && tc.fail {
				t.Errorf("read %d bytes of a refused value", len(got))
			}
		})
	}
}

// TestBodyLimited: a get's or a list page's answer is bounded whole, however many JSON values it holds
// ({}{}{}… made one measurement hold 2.6 GB while the bound was per value, issue 57); an answer of
// exactly the bound is read whole.
func TestBodyLimited(t *testing.T) {
	const max = 64
	for _, tc := range []struct {
		name, body string
		fail       bool
	}{
		{"exactly the bound", strings.Repeat("a", max), false},
		{"many small values past the bound", strings.Repeat("{}", max), true},
		{"one byte past the bound", strings.Repeat("a", max+1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(&bodyLimited{r: io.NopCloser(strings.NewReader(tc.body)), left: max})
			if fail := errors.Is(err, ErrResponseTooLarge); fail != tc.fail || (err != nil && !fail) {
				t.Fatalf("err %v, want refused %v", err, tc.fail)
			}
			if len(got) > max+1 {
				t.Errorf("read %d bytes, bound %d", len(got), max)
			}
		})
	}
}

// TestLimitByRequest: a watch's answer is bounded per event, every other answer whole; a 3xx is an
// error, its body closed, before any client could follow it.
func TestLimitByRequest(t *testing.T) {
	for _, tc := range []struct {
		url    string
		status int
		body   any
		err    error
	}{
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts?watch=true", 200, &valueLimited{}, nil},
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts?watch=1", 200, &valueLimited{}, nil},
		{"https://h/apis/argoproj.io/v1alpha1/watch/namespaces/shop/rollouts", 200, &valueLimited{}, nil},
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts?watch=false", 200, &bodyLimited{}, nil},
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/checkout", 200, &bodyLimited{}, nil},
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/checkout", 302, nil, ErrRedirect},
		{"https://h/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts?watch=true", 307, nil, ErrRedirect},
	} {
		closed := false
		rt := limitResponses(roundTripperFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: tc.status, Body: closer{func() { closed = true }}}, nil
		}))
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		resp, err := rt.RoundTrip(req)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s %d: err %v, want %v", tc.url, tc.status, err, tc.err)
			continue
		}
		if err != nil {
			if resp != nil || !closed || !strings.Contains(err.Error(), fmt.Sprint(tc.status)) {
				t.Errorf("%s %d: response %v, body closed %v, err %q", tc.url, tc.status, resp, closed, err)
			}
			continue
		}
		if got, want := reflect.TypeOf(resp.Body), reflect.TypeOf(tc.body); got != want {
			t.Errorf("%s: body %v, want %v", tc.url, got, want)
		}
	}
}

type closer struct{ f func() }

func (closer) Read([]byte) (int, error) { return 0, io.EOF }
func (c closer) Close() error           { c.f(); return nil }

// TestInTime: an error once the request's context is done is the context's error too, so that a server
// too slow for the deadline is not described by what the cut answer looked like.
func TestInTime(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	cut := errors.New("unexpected end of JSON input")
	for _, tc := range []struct {
		ctx      context.Context
		err      error
		canceled bool
	}{
		{context.Background(), cut, false},
		{done, cut, true},
		{done, nil, false},
		{done, context.Canceled, true},
	} {
		got := inTime(tc.ctx, tc.err)
		if errors.Is(got, context.Canceled) != tc.canceled || !errors.Is(got, tc.err) {
			t.Errorf("inTime(%v, %v) = %v", tc.ctx.Err(), tc.err, got)
		}
	}
}
