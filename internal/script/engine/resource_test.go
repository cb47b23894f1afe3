package engine

import (
	"strings"
	"testing"
)

func object(meta map[string]any) map[string]any {
	m := map[string]any{"name": "r", "namespace": "ns"}
	for k, v := range meta {
		m[k] = v
	}
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": m}
}

const deleted = "2026-11-30T10:00:00Z"

func TestExecuteNil(t *testing.T) {
	for _, tc := range []struct {
		p      Profile
		script string
		want   *Health
	}{
		{V214, `return nil`, &Health{}},
		{V32, `local x = 1`, &Health{}},
		{V36, `return nil`, nil},
		{V36, `local x = 1`, nil},
		{V36, `return {}`, &Health{}},
		{V32, `return {status = "Healthy", deletionMessage = 42}`, &Health{Status: Healthy}},
		{V36, `return {status = "Healthy", deletionMessage = 42}`, &Health{}},
		{V32, `return {status = "Healthy", deletionMessage = "d"}`, &Health{Status: Healthy}},
		{V36, `return {status = "Healthy", deletionMessage = "d"}`, &Health{Status: Healthy, DeletionMessage: "d"}},
	} {
		got, err := Engine{Profile: tc.p}.Execute(object(nil), tc.script)
		if err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s %s: got %+v, want %+v", tc.p, tc.script, got, tc.want)
		}
	}
}

func TestResourceHealth(t *testing.T) {
	const withDeletion = `return {status = "Degraded", message = "m", deletionMessage = "going"}`
	const plain = `return {status = "Degraded", message = "m"}`
	pending := &Health{Status: Progressing, Message: "Pending deletion"}
	for _, tc := range []struct {
		name   string
		p      Profile
		meta   map[string]any
		script string
		want   *Health
		err    string
	}{
		{"v2.14 short-circuits", V214, map[string]any{"deletionTimestamp": deleted}, withDeletion, pending, ""},
		{"v2.14 short-circuits a hook too", V214, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{hookFinalizer}}, plain, pending, ""},
		{"v2.14 hides a failing script", V214, map[string]any{"deletionTimestamp": deleted}, `error("boom")`, pending, ""},
		{"v3.2 short-circuits", V32, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{"f"}}, withDeletion, pending, ""},
		{"v3.2 runs a hook's script", V32, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{hookFinalizer}}, plain, &Health{Status: Degraded, Message: "m"}, ""},
		{"v3.6 uses deletionMessage", V36, map[string]any{"deletionTimestamp": deleted}, withDeletion, &Health{Status: Degraded, Message: "going"}, ""},
		{"v3.6 pending without deletionMessage", V36, map[string]any{"deletionTimestamp": deleted}, plain, pending, ""},
		{"v3.6 names finalizers", V36, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{"a", "b"}}, `return nil`,
			&Health{Status: Progressing, Message: "Pending deletion; blocked by finalizers: a, b"}, ""},
		{"v3.6 finalizers of the wrong type", V36, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{"a", 1}}, `return {}`, pending, ""},
		{"v3.6 no script", V36, map[string]any{"deletionTimestamp": deleted}, "", pending, ""},
		{"v3.6 hook finalizer keeps the script's health", V36, map[string]any{"deletionTimestamp": deleted, "finalizers": []any{hookFinalizer}}, withDeletion,
			&Health{Status: Degraded, Message: "m", DeletionMessage: "going"}, ""},
		{"v3.6 a failing script fails while deleting", V36, map[string]any{"deletionTimestamp": deleted}, `error("boom", 0)`,
			&Health{Status: Unknown, Message: "boom"}, "failed to get resource health for ns/r: boom"},
		{"v3.2 error wrapped", V32, nil, `error("boom", 0)`, &Health{Status: Unknown, Message: "boom"}, "failed to get resource health for ns/r: boom"},
		{"unparseable timestamp is not deletion", V214, map[string]any{"deletionTimestamp": "yesterday"}, plain, &Health{Status: Degraded, Message: "m"}, ""},
		{"zero timestamp is not deletion", V32, map[string]any{"deletionTimestamp": "0001-01-01T00:00:00Z"}, plain, &Health{Status: Degraded, Message: "m"}, ""},
		{"numeric timestamp is not deletion", V36, map[string]any{"deletionTimestamp": int64(5)}, plain, &Health{Status: Degraded, Message: "m"}, ""},
		{"v3.6 nil is no health", V36, nil, `return nil`, nil, ""},
		{"v3.2 nil is empty", V32, nil, `return nil`, &Health{}, ""},
		{"no script, not deleting", V36, nil, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Engine{Profile: tc.p}.ResourceHealth(object(tc.meta), tc.script)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestResourceHealthV214ErrorUnwrapped(t *testing.T) {
	got, err := Engine{Profile: V214}.ResourceHealth(object(nil), `error("boom", 0)`)
	if err == nil || got == nil || got.Status != Unknown || got.Message != err.Error() || !strings.HasPrefix(err.Error(), "boom\nstack traceback:") {
		t.Fatalf("got %+v, %v", got, err)
	}
}
