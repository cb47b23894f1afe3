// Package field reads decoded Kubernetes objects (maps from JSON or YAML) the way our Lua scripts do: a
// field of the wrong type reads as absent, and a scalar reads as its text. verdict and analysisruns
// judge the same objects as the scripts, so they share this one reading.
package field

import (
	"encoding/json"
	"strconv"
)

// Map is v as an object, or nil.
func Map(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// List is v as a list, or nil.
func List(v any) []any {
	l, _ := v.([]any)
	return l
}

// Str reads a scalar as text, as the scripts' str does: decoded JSON and YAML give strings, numbers and
// bools; anything else is "".
func Str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// Text renders a scalar as a fixture spells it and anything else as compact JSON: how the tests compare
// a field the controller wrote with a recorded one.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}
