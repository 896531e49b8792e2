package generatecase

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Picture is a test picture of w×h pixels that needs no reference case (tests of behaviour build
// their own inputs): colour gradients with a dark disc, opaque.
func Picture(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{uint8(255 * x / max(w-1, 1)), uint8(255 * y / max(h-1, 1)), 160, 255}
			if dx, dy := x-w/2, y-h/2; dx*dx+dy*dy < (min(w, h)/4)*(min(w, h)/4) {
				c = color.NRGBA{30, 30, 40, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// PicturePNG writes Picture(w, h) as a PNG in the test's temporary folder and returns its path.
func PicturePNG(tb testing.TB, w, h int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "picture.png")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, Picture(w, h)); err != nil {
		tb.Fatal(err)
	}
	return path
}
