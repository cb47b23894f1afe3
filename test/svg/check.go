package svg

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ContentWidth is the narrowest width at which GitHub shows a Markdown file's images at 100 % zoom
// (the README box beside the repository's sidebar on a 1280-pixel window); a wider picture is scaled
// down to it.
const ContentWidth = 830

// MinTextSize is the smallest text a reader should meet at ContentWidth, in CSS pixels.
const MinTextSize = 11

// Check reads an SVG document as a browser would and reports the first thing a reader would trip over:
// not well-formed XML, a root that is not <svg> or has no usable viewBox, a text whose box (estimated
// with TextWidth) is not wholly inside the viewBox, or a text smaller than MinTextSize once the picture
// is scaled to ContentWidth.
func Check(raw []byte) error {
	dec := xml.NewDecoder(strings.NewReader(string(raw)))
	var (
		vb      [4]float64
		root    bool
		inText  bool
		text    strings.Builder
		attrs   map[string]string
		texts   int
		scale   = 1.0
		errText error
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range t.Attr {
				a[at.Name.Local] = at.Value
			}
			if !root {
				if t.Name.Local != "svg" || t.Name.Space != "http://www.w3.org/2000/svg" {
					return fmt.Errorf("root element is %s, not svg in the SVG namespace", t.Name.Local)
				}
				f := strings.Fields(strings.ReplaceAll(a["viewBox"], ",", " "))
				if len(f) != 4 {
					return fmt.Errorf("viewBox %q is not four numbers", a["viewBox"])
				}
				for i, s := range f {
					v, err := strconv.ParseFloat(s, 64)
					if err != nil {
						return fmt.Errorf("viewBox %q: %v", a["viewBox"], err)
					}
					vb[i] = v
				}
				if vb[2] <= 0 || vb[3] <= 0 {
					return fmt.Errorf("viewBox %q is empty", a["viewBox"])
				}
				if vb[2] > ContentWidth {
					scale = ContentWidth / vb[2]
				}
				root = true
				continue
			}
			if t.Name.Local == "text" {
				if inText {
					return fmt.Errorf("text inside text")
				}
				inText, attrs = true, a
				text.Reset()
			}
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "text" && inText {
				inText = false
				texts++
				if err := checkText(attrs, text.String(), vb, scale); err != nil && errText == nil {
					errText = err
				}
			}
		}
	}
	if !root {
		return fmt.Errorf("no svg element")
	}
	if errText != nil {
		return errText
	}
	if texts == 0 {
		return fmt.Errorf("no text at all")
	}
	return nil
}

func checkText(a map[string]string, s string, vb [4]float64, scale float64) error {
	num := func(k string) (float64, error) {
		v, err := strconv.ParseFloat(a[k], 64)
		if err != nil {
			return 0, fmt.Errorf("text %q: %s=%q: %v", s, k, a[k], err)
		}
		return v, nil
	}
	x, err := num("x")
	if err != nil {
		return err
	}
	y, err := num("y")
	if err != nil {
		return err
	}
	size, err := num("font-size")
	if err != nil {
		return err
	}
	if size*scale < MinTextSize-1e-9 {
		return fmt.Errorf("text %q is %.1f px at GitHub's content width (%d px), smaller than %d px", s, size*scale, ContentWidth, MinTextSize)
	}
	w := TextWidth(s, size, a["font-weight"] == "bold")
	left := x
	switch Anchor(a["text-anchor"]) {
	case Middle:
		left = x - w/2
	case End:
		left = x - w
	}
	// ascenders reach about 0.8 em above the baseline, descenders 0.25 em below
	top, bottom := y-0.8*size, y+0.25*size
	if left < vb[0] || left+w > vb[0]+vb[2] || top < vb[1] || bottom > vb[1]+vb[3] {
		return fmt.Errorf("text %q (x %s…%s, y %s…%s) is not inside the viewBox %v", s, Num(left), Num(left+w), Num(top), Num(bottom), vb)
	}
	return nil
}
