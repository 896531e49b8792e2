package vae

import (
	"image/color"
	"testing"
)

func TestTo8BitRoundsHalfToEven(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want uint8
	}{
		{0, 0}, {1, 255}, {0.5, 128}, // 127.5 → 128 (even)
		{1.5 / 255, 2}, {2.5 / 255, 2}, {0.2 / 255, 0}, {254.7 / 255, 255},
	} {
		if got := To8Bit(tc.x); got != tc.want {
			t.Errorf("To8Bit(%v) (x·255 = %v) = %d, want %d", tc.x, tc.x*255, got, tc.want)
		}
	}
}

func TestToRGBAChannelOrderAndClamp(t *testing.T) {
	// A 1×2 image: planes R, G, B, A; values outside [-1, 1] clamp.
	img := &Image{C: 4, H: 1, W: 2, Pix: []float32{
		-1, 1, // R
		0, 3, // G
		1, -3, // B
		1, 0, // A
	}}
	got, err := ToRGBA(img)
	if err != nil {
		t.Fatal(err)
	}
	want := []color.NRGBA{{0, 128, 255, 255}, {255, 255, 0, 128}}
	for x, w := range want {
		if c := got.NRGBAAt(x, 0); c != w {
			t.Errorf("pixel %d = %v, want %v", x, c, w)
		}
	}
	if _, err := ToRGBA(&Image{C: 2, H: 1, W: 1, Pix: []float32{0, 0}}); err == nil {
		t.Error("a two-channel image was accepted")
	}
}
