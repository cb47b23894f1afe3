// Command timelines-png renders pictures of docs/timelines in headless Chromium as GitHub shows them
// (an <img> at its content width, on the light and on the dark page background) and checks each
// screenshot as a person would look at it: the picture is not blank, it is whole (nothing of it cut off,
// nothing drawn beyond it), and its legend is there with its frame and its text. It writes the PNGs to
// -out for a person to look at. An argument that is a directory stands for its tallest picture (the one
// most likely to be cut). `make timelines-png` runs it on a sample; CI does not (Debian's chromium
// package: apt-get install -y chromium).
package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/analysis-health/analysis-health/test/svg"
)

// themes are GitHub's page backgrounds.
var themes = []struct {
	name string
	bg   color.RGBA
}{
	{"light", color.RGBA{0xff, 0xff, 0xff, 0xff}},
	{"dark", color.RGBA{0x0d, 0x11, 0x17, 0xff}},
}

func main() {
	chromium := flag.String("chromium", "chromium", "the Chromium binary")
	out := flag.String("out", "bin/timelines-png", "directory for the PNGs")
	width := flag.Int("width", svg.ContentWidth, "width at which the page shows the picture, in CSS pixels")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: timelines-png [-chromium path] [-out dir] [-width px] picture.svg...")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	failed := false
	var paths []string
	for _, arg := range flag.Args() {
		p, err := tallest(arg)
		if err != nil {
			fail(err)
		}
		paths = append(paths, p)
	}
	for _, path := range paths {
		for _, th := range themes {
			png := filepath.Join(*out, strings.TrimSuffix(filepath.Base(filepath.Dir(path))+"-"+filepath.Base(path), ".svg")+"-"+th.name+".png")
			if err := render(*chromium, path, png, *width, th.bg); err != nil {
				fmt.Fprintf(os.Stderr, "FAIL %s (%s page): %v\n", path, th.name, err)
				failed = true
				continue
			}
			fmt.Printf("ok   %s (%s page, %d px wide): %s\n", path, th.name, *width, png)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// tallest is path itself, or the tallest picture in it if it is a directory.
func tallest(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return path, err
	}
	all, err := filepath.Glob(filepath.Join(path, "*.svg"))
	if err != nil {
		return "", err
	}
	best, bestH := "", -1.0
	for _, p := range all {
		raw, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		g, err := readGeometry(raw)
		if err != nil {
			return "", fmt.Errorf("%s: %v", p, err)
		}
		if g.h > bestH {
			best, bestH = p, g.h
		}
	}
	if best == "" {
		return "", fmt.Errorf("%s: no pictures", path)
	}
	return best, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// geometry is what the check needs to know of a picture: its viewBox size and its legend's box.
type geometry struct {
	w, h   float64
	legend [4]float64
}

func readGeometry(raw []byte) (geometry, error) {
	var g geometry
	if err := svg.Check(raw); err != nil {
		return g, err
	}
	dec := xml.NewDecoder(strings.NewReader(string(raw)))
	found := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return g, err
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		a := map[string]string{}
		for _, at := range el.Attr {
			a[at.Name.Local] = at.Value
		}
		if el.Name.Local == "svg" {
			f := strings.Fields(a["viewBox"])
			g.w, _ = strconv.ParseFloat(f[2], 64)
			g.h, _ = strconv.ParseFloat(f[3], 64)
		}
		if a["id"] == "legend" {
			for i, k := range []string{"x", "y", "width", "height"} {
				v, err := strconv.ParseFloat(a[k], 64)
				if err != nil {
					return g, fmt.Errorf("legend %s=%q: %v", k, a[k], err)
				}
				g.legend[i] = v
			}
			found = true
		}
	}
	if !found {
		return g, fmt.Errorf("no element with id legend")
	}
	return g, nil
}

// render screenshots the picture as an <img> width pixels wide on a page of colour bg, with room below
// it, and checks the screenshot.
func render(chromium, path, out string, width int, bg color.RGBA) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	g, err := readGeometry(raw)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "timelines-png-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	page := filepath.Join(dir, "page.html")
	html := fmt.Sprintf(`<!doctype html><html><body style="margin:0;background:#%02x%02x%02x"><img src="file://%s" style="display:block;width:%dpx"></body></html>`,
		bg.R, bg.G, bg.B, abs, width)
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		return err
	}
	scale := float64(width) / g.w
	height := int(g.h*scale) + 40
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--hide-scrollbars", "--force-device-scale-factor=1", fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+out, "file://"+page)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", chromium, err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %v", out, err)
	}
	return checkShot(img, bg, g, scale)
}

func dist(a, b color.Color) int {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	d := func(x, y uint32) int {
		if x > y {
			return int(x-y) >> 8
		}
		return int(y-x) >> 8
	}
	return d(r1, r2) + d(g1, g2) + d(b1, b2)
}

// checkShot checks a screenshot of the picture scaled by scale on a page of colour bg.
func checkShot(img image.Image, bg color.RGBA, g geometry, scale float64) error {
	b := img.Bounds()
	// whole: what differs from the page is the picture's box, no more and no less (2 px for rounding)
	minX, minY, maxX, maxY := b.Max.X, b.Max.Y, -1, -1
	colours := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			r, gg, bb, _ := c.RGBA()
			if len(colours) < 1000 {
				colours[color.RGBA{uint8(r >> 8), uint8(gg >> 8), uint8(bb >> 8), 0xff}] = true
			}
			if dist(c, bg) > 12 {
				minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
			}
		}
	}
	if maxX < 0 || len(colours) < 16 {
		return fmt.Errorf("blank: %d colours", len(colours))
	}
	wantW, wantH := int(g.w*scale+0.5), int(g.h*scale+0.5)
	if minX > 2 || minY > 2 || abs(maxX+1-wantW) > 2 || abs(maxY+1-wantH) > 2 {
		return fmt.Errorf("the picture covers x %d…%d, y %d…%d of the page, want 0…%d, 0…%d: cut, or not drawn whole", minX, maxX, minY, maxY, wantW, wantH)
	}
	if maxY+1 >= b.Max.Y {
		return fmt.Errorf("the picture reaches the bottom of the window (%d px): cut", b.Max.Y)
	}
	// the legend: its frame on all four sides, and text inside it
	card := img.At(int(g.legend[0]*scale)+6, int(g.legend[1]*scale)+4)
	lx0, ly0 := g.legend[0]*scale, g.legend[1]*scale
	lx1, ly1 := (g.legend[0]+g.legend[2])*scale, (g.legend[1]+g.legend[3])*scale
	framed := func(x, y float64) bool {
		for dy := -2; dy <= 2; dy++ {
			for dx := -2; dx <= 2; dx++ {
				if dist(img.At(int(x)+dx, int(y)+dy), card) > 60 {
					return true
				}
			}
		}
		return false
	}
	for i := 1; i < 10; i++ {
		fx, fy := lx0+(lx1-lx0)*float64(i)/10, ly0+(ly1-ly0)*float64(i)/10
		for _, p := range [][2]float64{{fx, ly0}, {fx, ly1}, {lx0, fy}, {lx1, fy}} {
			if !framed(p[0], p[1]) {
				return fmt.Errorf("the legend's frame is missing at (%d, %d): the legend is cut or not drawn", int(p[0]), int(p[1]))
			}
		}
	}
	ink := 0
	for y := int(ly0) + 3; y < int(ly1)-3; y++ {
		for x := int(lx0) + 3; x < int(lx1)-3; x++ {
			r, gg, bb, _ := img.At(x, y).RGBA()
			if (r>>8)+(gg>>8)+(bb>>8) < 3*100 {
				ink++
			}
		}
	}
	if area := (lx1 - lx0) * (ly1 - ly0); float64(ink) < 0.01*area {
		return fmt.Errorf("the legend has almost no text (%d dark pixels in %.0f)", ink, area)
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
