package vae

import (
	"image"
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

func TestFromNRGBAMapsBytesToPlanes(t *testing.T) {
	src := image.NewNRGBA(image.Rect(3, 5, 5, 6)) // 2×1, offset bounds
	src.SetNRGBA(3, 5, color.NRGBA{0, 255, 51, 128})
	src.SetNRGBA(4, 5, color.NRGBA{255, 0, 204, 255})
	img := FromNRGBA(src)
	if img.C != 4 || img.H != 1 || img.W != 2 {
		t.Fatalf("%d×%d×%d, want 4×1×2", img.C, img.H, img.W)
	}
	want := []float32{-1, 1, 1, -1, 2*float32(51)/255 - 1, 2*float32(204)/255 - 1, 2*float32(128)/255 - 1, 1}
	for i, w := range want {
		if img.Pix[i] != w {
			t.Errorf("value %d (channel %d, x %d) = %v, want %v", i, i/2, i%2, img.Pix[i], w)
		}
	}
	for v := 0; v < 256; v++ {
		if got := To8Bit(UnitRange(2*float32(v)/255 - 1)); int(got) != v {
			t.Errorf("byte %d comes back as %d", v, got)
		}
	}
	// and back: ToRGBA inverts it exactly for 8-bit inputs
	back, err := ToRGBA(img)
	if err != nil {
		t.Fatal(err)
	}
	for x := 0; x < 2; x++ {
		if got, want := back.NRGBAAt(x, 0), src.NRGBAAt(3+x, 5); got != want {
			t.Errorf("round trip of pixel %d: %v, want %v", x, got, want)
		}
	}
}
