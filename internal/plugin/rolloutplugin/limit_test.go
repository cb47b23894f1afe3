package rolloutplugin

import (
	"errors"
	"io"
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
