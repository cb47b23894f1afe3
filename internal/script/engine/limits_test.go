package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Issue 44: a table returned without bound crashed the process (a 1,000,000-deep one overflows the Go
// stack in the JSON encoder). Beyond the limits every kind of script fails with a one-line error.
func TestReturnedTableLimits(t *testing.T) {
	const (
		deepMillion = `local t = {} for i = 1, 1000000 do t = {t} end return t`
		// 1 MiB of string, 200 times: 200 MiB to encode.
		wide = `local s = "x" for i = 1, 20 do s = s .. s end local t = {} for i = 1, 200 do t[i] = s end return t`
	)
	nest := func(n int) string { // n tables, the outermost returned
		return fmt.Sprintf(`local t = {} for i = 2, %d do t = {t} end return t`, n)
	}
	depthErr := fmt.Sprintf("the returned table nests deeper than %d tables", MaxReturnedDepth)
	sizeErr := "the returned table is too large to encode"
	eng := Engine{Timeout: time.Minute}
	runners := map[string]func(script string) error{
		"health": func(s string) error { _, err := eng.Execute(rollout(), s); return err },
		"action": func(s string) error { _, err := eng.RunAction(rollout(), s, nil); return err },
		"discovery": func(s string) error {
			_, err := eng.Discover(rollout(), strings.Replace(s, "return t", "return {a = t}", 1))
			return err
		},
	}
	for _, tc := range []struct {
		name, script, wantErr string
	}{
		{"1,000,000 deep", deepMillion, depthErr},
		{"one level too deep", nest(MaxReturnedDepth + 1), depthErr},
		{"200 MiB wide", wide, sizeErr},
	} {
		for what, run := range runners {
			t.Run(what+"/"+tc.name, func(t *testing.T) {
				err := run(tc.script)
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line starting %q", err, tc.wantErr)
				}
			})
		}
	}
	// At the limit, the encoder's own verdict stands (here: an action returning a table without a kind).
	if _, err := eng.RunAction(rollout(), nest(MaxReturnedDepth), nil); err == nil || strings.HasPrefix(err.Error(), depthErr) {
		t.Errorf("%d deep: %v, want gopher-json's and Argo CD's own error", MaxReturnedDepth, err)
	}
	if _, err := eng.Execute(rollout(), nest(MaxReturnedDepth)); err != nil {
		t.Errorf("%d deep health: %v", MaxReturnedDepth, err)
	}
}

// An object as large as the API server takes (a 3 MiB request), nested as real ones are, is far from
// the size limit: an action returning it unchanged gets it back.
func TestReturnedTableLimitsAdmitLargeObjects(t *testing.T) {
	obj := rollout()
	data := map[string]any{}
	leaf := strings.Repeat("y", 1000)
	for i := 0; i < 3000; i++ {
		data[fmt.Sprintf("key-%04d", i)] = map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": leaf}}}}
	}
	obj["spec"].(map[string]any)["template"] = map[string]any{"deep": map[string]any{"deeper": data}}
	out, err := Engine{Timeout: time.Minute}.RunAction(obj, `return obj`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := out[0].Object["spec"].(map[string]any)["template"]
	if !reflect.DeepEqual(got, obj["spec"].(map[string]any)["template"]) {
		t.Error("the object came back changed")
	}
}
