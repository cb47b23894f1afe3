// Package svg writes the few SVG elements the e2e timelines are drawn with, and checks a drawing as a
// reader would meet it (Check).
//
// It is our own rather than a library (github.com/ajstarks/svgo is the usual one) for three reasons: the
// pictures are golden files, so every byte must follow from the input, which means numbers rounded and
// formatted one way and attributes in one order, which svgo leaves to fmt's %v and to the caller; the
// timelines need a handful of elements (rect, line, polygon, text) and one measurement a library would not
// give either (how wide a label is, to keep it inside its bar and inside the picture); and the main module
// gains no dependency for documentation pictures. It uses the standard library only.
package svg

import (
	"fmt"
	"strconv"
	"strings"
)

// Font is the font every text is set in: the sans-serif families GitHub's readers have, in their order
// of likelihood; TextWidth's metrics are those of Helvetica/Arial with a margin for DejaVu Sans.
const Font = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"

// Doc is one drawing, written element by element in the order the calls are made.
type Doc struct {
	W, H float64
	b    strings.Builder
}

// New starts a drawing of w×h user units (the viewBox; the picture's natural size in CSS pixels).
func New(w, h float64) *Doc {
	return &Doc{W: w, H: h}
}

// Num formats a coordinate: rounded to a tenth, without trailing zeros, "-0" as "0", so that equal
// inputs give equal bytes.
func Num(v float64) string {
	r := float64(int64(v*10+sign(v)*0.5)) / 10
	if r == 0 {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// Escape makes s safe as XML character data and attribute value.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Style is how a shape is painted; empty fields are left out (SVG's defaults: black fill, no stroke).
type Style struct {
	ID          string // an id, for a reader that looks an element up (a check of the rendered picture)
	Fill        string
	Stroke      string
	StrokeWidth float64
	Dash        string // stroke-dasharray
	Opacity     float64
}

func (s Style) attrs() string {
	var b strings.Builder
	if s.ID != "" {
		fmt.Fprintf(&b, ` id="%s"`, Escape(s.ID))
	}
	if s.Fill != "" {
		fmt.Fprintf(&b, ` fill="%s"`, s.Fill)
	}
	if s.Stroke != "" {
		fmt.Fprintf(&b, ` stroke="%s"`, s.Stroke)
		if s.StrokeWidth > 0 {
			fmt.Fprintf(&b, ` stroke-width="%s"`, Num(s.StrokeWidth))
		}
	}
	if s.Dash != "" {
		fmt.Fprintf(&b, ` stroke-dasharray="%s"`, s.Dash)
	}
	if s.Opacity > 0 && s.Opacity < 1 {
		fmt.Fprintf(&b, ` opacity="%s"`, strconv.FormatFloat(s.Opacity, 'f', 2, 64))
	}
	return b.String()
}

// Rect draws a rectangle with corner radius rx.
func (d *Doc) Rect(x, y, w, h, rx float64, s Style) {
	fmt.Fprintf(&d.b, `<rect x="%s" y="%s" width="%s" height="%s"`, Num(x), Num(y), Num(w), Num(h))
	if rx > 0 {
		fmt.Fprintf(&d.b, ` rx="%s"`, Num(rx))
	}
	d.b.WriteString(s.attrs() + "/>\n")
}

// Line draws a straight line.
func (d *Doc) Line(x1, y1, x2, y2 float64, s Style) {
	fmt.Fprintf(&d.b, `<line x1="%s" y1="%s" x2="%s" y2="%s"%s/>`+"\n", Num(x1), Num(y1), Num(x2), Num(y2), s.attrs())
}

// Polygon draws a closed shape through the points (x0, y0, x1, y1, ...).
func (d *Doc) Polygon(s Style, pts ...float64) {
	var p []string
	for i := 0; i+1 < len(pts); i += 2 {
		p = append(p, Num(pts[i])+","+Num(pts[i+1]))
	}
	fmt.Fprintf(&d.b, `<polygon points="%s"%s/>`+"\n", strings.Join(p, " "), s.attrs())
}

// Circle draws a circle.
func (d *Doc) Circle(cx, cy, r float64, s Style) {
	fmt.Fprintf(&d.b, `<circle cx="%s" cy="%s" r="%s"%s/>`+"\n", Num(cx), Num(cy), Num(r), s.attrs())
}

// Anchor is where a text's x is: its start, middle or end.
type Anchor string

const (
	Start  Anchor = "start"
	Middle Anchor = "middle"
	End    Anchor = "end"
)

// TextStyle is how a text is set.
type TextStyle struct {
	Size   float64
	Fill   string
	Bold   bool
	Anchor Anchor
}

// Text sets one line of text with its baseline at y.
func (d *Doc) Text(x, y float64, s TextStyle, text string) {
	fmt.Fprintf(&d.b, `<text x="%s" y="%s" font-size="%s"`, Num(x), Num(y), Num(s.Size))
	if s.Anchor != "" && s.Anchor != Start {
		fmt.Fprintf(&d.b, ` text-anchor="%s"`, s.Anchor)
	}
	if s.Bold {
		d.b.WriteString(` font-weight="bold"`)
	}
	if s.Fill != "" {
		fmt.Fprintf(&d.b, ` fill="%s"`, s.Fill)
	}
	fmt.Fprintf(&d.b, ">%s</text>\n", Escape(text))
}

// Comment writes an XML comment (a note for whoever reads the file; "--" is not allowed in one).
func (d *Doc) Comment(s string) {
	fmt.Fprintf(&d.b, "<!-- %s -->\n", strings.ReplaceAll(s, "--", "- -"))
}

// Append copies o's elements after d's: a layer drawn apart (what goes under or over the rest).
func (d *Doc) Append(o *Doc) {
	d.b.WriteString(o.b.String())
}

// Bytes is the finished document: the viewBox is the drawing's size, and width and height give it its
// natural size, so a page narrower than it scales it down (TextWidth and Check's minimum size account
// for that) rather than cropping it.
func (d *Doc) Bytes() []byte {
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s">`+"\n",
		Num(d.W), Num(d.H), Num(d.W), Num(d.H), Font)
	out.WriteString(d.b.String())
	out.WriteString("</svg>\n")
	return []byte(out.String())
}

// TextWidth estimates how wide text set at size is, from Helvetica/Arial advance widths by class of
// character (in thousandths of the em) with 8 % added for DejaVu Sans, the widest of the families in
// Font. It errs wide: a label judged to fit does.
func TextWidth(text string, size float64, bold bool) float64 {
	var w float64
	for _, r := range text {
		w += charWidth(r)
	}
	if bold {
		w *= 1.07
	}
	return w * 1.08 * size / 1000
}

func charWidth(r rune) float64 {
	switch {
	case strings.ContainsRune("iljI.,:;'|!", r):
		return 278
	case strings.ContainsRune("ftr ()[]-/", r):
		return 333
	case strings.ContainsRune("mwMW", r):
		return 889
	case r == '%' || r == '@':
		return 889
	case r >= 'A' && r <= 'Z':
		return 722
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return 556
	case r == '→' || r == '–' || r == '—' || r == '…':
		return 1000
	case r < 128:
		return 584
	default:
		return 1000
	}
}
