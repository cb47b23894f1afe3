package field

import "testing"

func TestStr(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{"a", "a"}, {true, "true"}, {int64(-3), "-3"}, {7, "7"}, {int32(2), "2"}, {1.5, "1.5"}, {float64(3), "3"},
		{nil, ""}, {map[string]any{"a": 1}, ""}, {[]any{"a"}, ""},
	} {
		if got := Str(tc.in); got != tc.want {
			t.Errorf("Str(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMapListText(t *testing.T) {
	if Map("x") != nil || Map(map[string]any{"a": 1})["a"] != 1 {
		t.Error("Map")
	}
	if List(map[string]any{}) != nil || len(List([]any{1, 2})) != 2 {
		t.Error("List")
	}
	for in, want := range map[any]string{"s": "s", 3.0: "3", true: "true"} {
		if got := Text(in); got != want {
			t.Errorf("Text(%#v) = %q, want %q", in, got, want)
		}
	}
	if Text(nil) != "" || Text(map[string]any{"a": []any{1}}) != `{"a":[1]}` {
		t.Error("Text of nil or an object")
	}
}
