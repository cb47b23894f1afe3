package main

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"
)

// shot paints what a screenshot of a 200×100 picture with a legend at (10, 60, 180, 30) looks like on a
// dark page 140 px high, then lets cut spoil it.
func shot(cut func(*image.RGBA)) *image.RGBA {
	bg := themes[1].bg
	img := image.NewRGBA(image.Rect(0, 0, 200, 140))
	fill := func(r image.Rectangle, c color.Color) { draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src) }
	fill(img.Bounds(), bg)
	fill(image.Rect(0, 0, 200, 100), color.White)
	// a few colours of lanes
	for i := 0; i < 20; i++ {
		fill(image.Rect(10+i*9, 10, 19+i*9, 30), color.RGBA{uint8(i * 12), uint8(200 - i*7), 90, 255})
	}
	frame := color.RGBA{0x8c, 0x95, 0x9f, 0xff}
	fill(image.Rect(10, 60, 190, 61), frame)
	fill(image.Rect(10, 89, 190, 90), frame)
	fill(image.Rect(10, 60, 11, 90), frame)
	fill(image.Rect(189, 60, 190, 90), frame)
	// legend text
	for x := 20; x < 180; x += 4 {
		fill(image.Rect(x, 70, x+2, 80), color.Black)
	}
	if cut != nil {
		cut(img)
	}
	return img
}

func TestCheckShot(t *testing.T) {
	g := geometry{w: 200, h: 100, legend: [4]float64{10, 60, 180, 30}}
	bg := themes[1].bg
	if err := checkShot(shot(nil), bg, g, 1); err != nil {
		t.Fatalf("a whole picture: %v", err)
	}
	for _, c := range []struct {
		name string
		cut  func(*image.RGBA)
		want string
	}{
		{"blank", func(img *image.RGBA) {
			draw.Draw(img, img.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
		}, "blank"},
		{"cut at the bottom", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(0, 80, 200, 140), &image.Uniform{bg}, image.Point{}, draw.Src)
		}, "cut"},
		{"legend frame gone", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(10, 89, 190, 90), &image.Uniform{color.White}, image.Point{}, draw.Src)
		}, "legend's frame"},
		{"legend empty", func(img *image.RGBA) {
			draw.Draw(img, image.Rect(15, 65, 185, 85), &image.Uniform{color.White}, image.Point{}, draw.Src)
		}, "no text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkShot(shot(c.cut), bg, g, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("checkShot = %v, want an error with %q", err, c.want)
			}
		})
	}
}
