package kit

import (
	"image"
	"image/color"
	"testing"
)

// Opaque pixels stay as they are; transparent ones show the checkerboard; half-transparent ones
// blend.
func TestOverCheckerComposites(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	img.SetNRGBA(0, 0, color.NRGBA{10, 20, 30, 255})
	img.SetNRGBA(1, 0, color.NRGBA{255, 0, 0, 0})
	img.SetNRGBA(2, 0, color.NRGBA{0, 0, 0, 128})
	out := OverChecker(img, 2)
	cases := []struct {
		x    int
		want color.NRGBA
	}{
		{0, color.NRGBA{10, 20, 30, 255}},
		{1, color.NRGBA{0xEE, 0xEE, 0xEE, 255}},
		{2, color.NRGBA{0x64, 0x64, 0x64, 255}}, // 0xC8·127/255 rounded, on a dark cell
	}
	for _, c := range cases {
		if got := out.NRGBAAt(c.x, 0); got != c.want {
			t.Errorf("pixel %d = %v, want %v", c.x, got, c.want)
		}
	}
}

// BenchmarkOverChecker2K composites a 2048² result over the checkerboard (done off the UI
// goroutine).
func BenchmarkOverChecker2K(b *testing.B) {
	img := image.NewNRGBA(image.Rect(0, 0, 2048, 2048))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	for b.Loop() {
		OverChecker(img, 16) // what the canvas does with a final image
	}
}
