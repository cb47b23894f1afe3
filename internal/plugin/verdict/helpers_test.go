package verdict_test

import "encoding/json"

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// text renders a scalar as the fixtures spell it, anything else as compact JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}
