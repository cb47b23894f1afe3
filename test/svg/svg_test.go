package svg

import (
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {-0.01, "0"}, {1, "1"}, {1.25, "1.3"}, {-1.25, "-1.3"}, {12.04, "12"}, {899.95, "900"}, {0.1 + 0.2, "0.3"},
	} {
		if got := Num(c.in); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEscape(t *testing.T) {
	if got := Escape(`a<b & "c">`); got != "a&lt;b &amp; &quot;c&quot;&gt;" {
		t.Errorf("Escape = %q", got)
	}
}

// a drawing of every element passes Check, and equal calls give equal bytes
func TestDocPassesCheck(t *testing.T) {
	draw := func() []byte {
		d := New(900, 100)
		d.Comment("a -- comment")
		d.Rect(0.5, 0.5, 899, 99, 6, Style{ID: "card", Fill: "#ffffff", Stroke: "#d0d7de", StrokeWidth: 1})
		d.Line(10, 10, 100, 10, Style{Stroke: "#000", Dash: "5 3"})
		d.Polygon(Style{Fill: "#000", Opacity: 0.5}, 1, 1, 5, 5, 1, 5)
		d.Circle(50, 50, 5, Style{Fill: "#1a7f37"})
		d.Text(16, 30, TextStyle{Size: 17, Bold: true}, "canary <step> & \"failed\"")
		d.Text(884, 60, TextStyle{Size: 12, Anchor: End}, "Running → Successful")
		d.Text(450, 90, TextStyle{Size: 12, Anchor: Middle}, "+120s")
		return d.Bytes()
	}
	a, b := draw(), draw()
	if string(a) != string(b) {
		t.Fatal("two equal drawings differ")
	}
	if err := Check(a); err != nil {
		t.Fatalf("Check: %v\n%s", err, a)
	}
	if !strings.Contains(string(a), `viewBox="0 0 900 100"`) || !strings.Contains(string(a), "a - - comment") {
		t.Errorf("unexpected document:\n%s", a)
	}
}

func TestCheckRejects(t *testing.T) {
	doc := func(inner string) string {
		return `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="100" viewBox="0 0 900 100">` + inner + `</svg>`
	}
	for _, c := range []struct {
		name, svg, want string
	}{
		{"not XML", doc(`<text x="1" y="20" font-size="12">a</tex>`), "not well-formed"},
		{"truncated", doc(`<text x="1" y="20" font-size="12">a</text>`)[:60], "not well-formed"},
		{"not svg", `<html><text x="1" y="20" font-size="12">a</text></html>`, "not svg"},
		{"no namespace", `<svg viewBox="0 0 10 10"><text x="1" y="9" font-size="12">a</text></svg>`, "not svg"},
		{"no viewBox", `<svg xmlns="http://www.w3.org/2000/svg" width="10"><text x="1" y="9" font-size="12">a</text></svg>`, "viewBox"},
		{"empty viewBox", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 0 10"><text x="1" y="9" font-size="12">a</text></svg>`, "empty"},
		{"right of the box", doc(`<text x="880" y="50" font-size="12">a long label</text>`), "not inside"},
		{"left of the box", doc(`<text x="20" y="50" font-size="12" text-anchor="end">a long label</text>`), "not inside"},
		{"centred over the edge", doc(`<text x="5" y="50" font-size="12" text-anchor="middle">label</text>`), "not inside"},
		{"above the box", doc(`<text x="10" y="5" font-size="12">a</text>`), "not inside"},
		{"below the box", doc(`<text x="10" y="99" font-size="12">g</text>`), "not inside"},
		// 900 wide, shown at 830: 11.9 px is 10.98 px
		{"too small once scaled", doc(`<text x="10" y="50" font-size="11.9">a</text>`), "smaller than 11"},
		{"no size", doc(`<text x="10" y="50">a</text>`), "font-size"},
		{"no text", doc(`<rect x="0" y="0" width="1" height="1"/>`), "no text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.svg))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v, want an error with %q", err, c.want)
			}
		})
	}
	// the same 11.9 px text in a picture narrower than the content width is not scaled
	ok := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 100"><text x="10" y="50" font-size="11">a</text></svg>`
	if err := Check([]byte(ok)); err != nil {
		t.Errorf("Check of a narrow picture: %v", err)
	}
}

func TestTextWidthErrsWide(t *testing.T) {
	// Arial's advance widths at 12 px: "Progressing" 64.0, "+120s" 33.0, "WWW" 34.0
	for s, arial := range map[string]float64{"Progressing": 64.0, "+120s": 33.0, "WWW": 34.0} {
		if got := TextWidth(s, 12, false); got < arial {
			t.Errorf("TextWidth(%q) = %.1f, narrower than Arial's %.1f", s, got, arial)
		}
	}
	if TextWidth("abc", 12, true) <= TextWidth("abc", 12, false) {
		t.Error("bold text is not wider")
	}
}
