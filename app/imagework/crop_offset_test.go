package imagework

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"testing"
)

// halves is a w×h image red on its left half and blue on its right.
func halves(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, image.Rect(0, 0, w/2, h), image.NewUniform(color.NRGBA{255, 0, 0, 255}), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(w/2, 0, w, h), image.NewUniform(color.NRGBA{0, 0, 255, 255}), image.Point{}, draw.Src)
	return img
}

func TestCropAtClampsInsideTheImage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		off     image.Point
		want    image.Rectangle
		centred bool
	}{
		{"centred", image.Point{}, image.Rect(50, 0, 150, 100), true},
		{"moved right", image.Pt(20, 0), image.Rect(70, 0, 170, 100), false},
		{"past the right edge", image.Pt(500, 0), image.Rect(100, 0, 200, 100), false},
		{"past the left edge", image.Pt(-500, 0), image.Rect(0, 0, 100, 100), false},
		{"along the full height: stays", image.Pt(0, 30), image.Rect(50, 0, 150, 100), true},
	} {
		r, centred := CropAt(image.Pt(200, 100), 512, 512, tc.off)
		if r != tc.want || centred != tc.centred {
			t.Errorf("%s: CropAt(200×100 to 512×512, %v) = %v centred %v, want %v centred %v", tc.name, tc.off, r, centred, tc.want, tc.centred)
		}
	}
	// Only cropped (31 pixels or fewer larger): the crop is the output's size.
	if r, _ := CropAt(image.Pt(100, 70), 96, 64, image.Pt(1, -9)); r != image.Rect(3, 0, 99, 64) {
		t.Errorf("CropAt(100×70 to 96×64, (1, -9)) = %v, want (3,0)-(99,64)", r)
	}
}

func TestPrepareCropsAtTheOffset(t *testing.T) {
	img := halves(200, 100)
	for _, tc := range []struct {
		off  image.Point
		want color.NRGBA
	}{{image.Pt(1000, 0), color.NRGBA{0, 0, 255, 255}}, {image.Pt(-1000, 0), color.NRGBA{255, 0, 0, 255}}} {
		p, err := Prepare(img, Options{Width: 64, Height: 64, CropOffset: tc.off})
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range []image.Point{{0, 0}, {63, 63}, {32, 32}} {
			if got := p.Init.NRGBAAt(pt.X, pt.Y); got != tc.want {
				t.Errorf("offset %v: the init image at %v is %v, want %v (that half of the image only)", tc.off, pt, got, tc.want)
			}
		}
	}
	// Centred, the crop holds both halves, exactly as Fit makes it.
	p, err := Prepare(img, Options{Width: 64, Height: 64, CropOffset: image.Pt(0, 7)})
	if err != nil {
		t.Fatal(err)
	}
	if !equalPix(p.Init, Fit(img, 64, 64)) {
		t.Error("an offset that clamps to the centre did not make Fit's centred crop")
	}
}

func TestPrepareMaskAndPasteBackFollowTheOffset(t *testing.T) {
	img := picture(100, 70, 3)
	mask := square(100, 70, image.Rect(60, 40, 70, 50))
	p, err := Prepare(img, Options{Width: 96, Height: 64, Mask: mask, KeepOriginal: true, CropOffset: image.Pt(10, 10)})
	if err != nil {
		t.Fatal(err)
	}
	// Only cropped: the crop's top-left is (2, 3) moved by (10, 10), clamped to (4, 6).
	if p.Init.NRGBAAt(0, 0) != img.NRGBAAt(4, 6) || p.Init.NRGBAAt(95, 63) != img.NRGBAAt(99, 69) {
		t.Error("the init image is not the image's pixels from (4, 6)")
	}
	if got := MaskBounds(p.Mask); got != image.Rect(56, 34, 66, 44) {
		t.Errorf("the mask's white area is at %v in the crop, want (56,34)-(66,44) (the image's (60,40)-(70,50))", got)
	}
	green := image.NewNRGBA(image.Rect(0, 0, 96, 64))
	draw.Draw(green, green.Rect, image.NewUniform(color.NRGBA{0, 255, 0, 255}), image.Point{}, draw.Src)
	out, err := p.Finish(green)
	if err != nil {
		t.Fatal(err)
	}
	if out.NRGBAAt(60, 38) != (color.NRGBA{0, 255, 0, 255}) {
		t.Errorf("inside the mask the saved image is %v, want the result's green", out.NRGBAAt(60, 38))
	}
	if out.NRGBAAt(10, 10) != img.NRGBAAt(14, 16) {
		t.Error("outside the mask the saved image is not the original's pixels at the crop's place")
	}
	// A crop moved off the whole mask repaints nothing.
	far := square(200, 100, image.Rect(150, 10, 190, 90))
	if _, err := Prepare(halves(200, 100), Options{Width: 64, Height: 64, Mask: far, CropOffset: image.Pt(-1000, 0)}); !errors.Is(err, ErrNothingToRepaint) {
		t.Errorf("a crop moved off the whole mask gave %v, want ErrNothingToRepaint", err)
	}
}
