package imagework

import (
	"errors"
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// picture is a w×h image of random opaque pixels.
func picture(w, h int, seed uint64) *image.NRGBA {
	r := rand.New(rand.NewPCG(seed, 1))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	return img
}

// square is a w×h mask white inside r.
func square(w, h int, r image.Rectangle) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			m.SetGray(x, y, color.Gray{255})
		}
	}
	return m
}

func TestFit(t *testing.T) {
	img := picture(100, 70, 1)
	if got := Fit(img, 100, 70); !equalPix(got, img) {
		t.Error("fitting to the image's own size changed it")
	}
	got := Fit(img, 96, 64)
	if got.Bounds().Dx() != 96 || got.Bounds().Dy() != 64 {
		t.Fatalf("Fit to 96×64 gave %v", got.Bounds())
	}
	if got.NRGBAAt(0, 0) != img.NRGBAAt(2, 3) {
		t.Error("a size-follows-image fit resampled instead of cropping the centre")
	}
	if got := Fit(img, 64, 64); got.Bounds().Dx() != 64 || got.Bounds().Dy() != 64 {
		t.Errorf("cover-crop to 64×64 gave %v", got.Bounds())
	}
	if w, h := SizeFollowing(100, 70, 32); w != 96 || h != 64 {
		t.Errorf("SizeFollowing(100, 70) = %d×%d, want 96×64", w, h)
	}
}

func TestMaskFromImage(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 1))
	img.SetNRGBA(0, 0, color.NRGBA{255, 255, 255, 255})
	img.SetNRGBA(1, 0, color.NRGBA{255, 255, 255, 0})
	img.SetNRGBA(2, 0, color.NRGBA{128, 128, 128, 255})
	m := MaskFromImage(img)
	if m.Pix[0] != 255 || m.Pix[1] != 0 || m.Pix[2] != 128 {
		t.Errorf("white, transparent white, grey read as %v; want 255, 0, 128", m.Pix)
	}
}

func TestGrowAndFeather(t *testing.T) {
	m := square(40, 40, image.Rect(20, 20, 21, 21))
	g := Grow(m, 3)
	if got := MaskBounds(g); got != image.Rect(17, 17, 24, 24) {
		t.Errorf("growing one pixel by 3 gave bounds %v, want a 7×7 square", got)
	}
	f := Feather(g, 2)
	if f.GrayAt(20, 20).Y == 0 || f.GrayAt(20, 20).Y == 255 && f.GrayAt(15, 20).Y == 0 {
		t.Errorf("feathered centre %d, a pixel beside the square %d: want a soft edge", f.GrayAt(20, 20).Y, f.GrayAt(15, 20).Y)
	}
	if f.GrayAt(0, 0).Y != 0 || f.GrayAt(39, 39).Y != 0 {
		t.Error("feathering reached far corners")
	}
	if f.GrayAt(16, 20).Y <= f.GrayAt(14, 20).Y {
		t.Error("the feathered edge does not fall off away from the mask")
	}
}

func TestPasteBackKeepsTheOriginalWhereTheMaskIsBlack(t *testing.T) {
	orig, gen := picture(32, 32, 1), picture(32, 32, 2)
	m := Feather(square(32, 32, image.Rect(8, 8, 20, 20)), 2)
	out, err := PasteBack(orig, gen, m)
	if err != nil {
		t.Fatal(err)
	}
	for y := range 32 {
		for x := range 32 {
			switch m.GrayAt(x, y).Y {
			case 0:
				if out.NRGBAAt(x, y) != orig.NRGBAAt(x, y) {
					t.Fatalf("(%d, %d): mask 0 but not the original", x, y)
				}
			case 255:
				if out.NRGBAAt(x, y) != gen.NRGBAAt(x, y) {
					t.Fatalf("(%d, %d): mask 255 but not the result", x, y)
				}
			}
		}
	}
	if _, err := PasteBack(orig, picture(16, 32, 3), m); err == nil {
		t.Error("pasting a result of another size did not fail")
	}
}

func TestExtend(t *testing.T) {
	img := picture(64, 48, 4)
	canvas, mask := Extend(img, Margins{Right: 64, Top: 16}, 32)
	if canvas.Bounds() != image.Rect(0, 0, 128, 64) || mask.Bounds() != canvas.Bounds() {
		t.Fatalf("canvas %v, mask %v; want 128×64", canvas.Bounds(), mask.Bounds())
	}
	for y := range 48 {
		for x := range 64 {
			if canvas.NRGBAAt(x, y+16) != img.NRGBAAt(x, y) {
				t.Fatalf("the original pixel (%d, %d) changed on the canvas", x, y)
			}
		}
	}
	if mask.GrayAt(100, 40).Y != 255 || mask.GrayAt(10, 5).Y != 255 {
		t.Error("the new area is not white in the mask")
	}
	if mask.GrayAt(0, 63).Y != 0 || mask.GrayAt(20, 60).Y != 0 {
		t.Error("the old image far from an extended edge is not black in the mask")
	}
	if v := mask.GrayAt(55, 60).Y; v == 0 || v == 255 {
		t.Errorf("the mask 8 px inside the old right edge is %d, want a partial value", v)
	}
	if m, err := ParseMargins("0, 0,64,0"); err != nil || m != (Margins{Right: 64}) {
		t.Errorf("ParseMargins = %v, %v", m, err)
	}
	for _, bad := range []string{"0,0,0,0", "1,2,3", "-1,0,0,0", "a,b,c,d"} {
		if _, err := ParseMargins(bad); err == nil {
			t.Errorf("ParseMargins(%q) did not fail", bad)
		}
	}
}

func TestCropRegion(t *testing.T) {
	m := square(400, 300, image.Rect(100, 100, 140, 120))
	r := CropRegion(m, 10, 1)
	if !image.Rect(90, 90, 150, 130).In(r) || r.Dx() != r.Dy() || !r.In(m.Bounds()) {
		t.Errorf("region %v: want a square inside the canvas holding the padded mask (90,90)-(150,130)", r)
	}
	corner := square(400, 300, image.Rect(390, 290, 400, 300))
	if r := CropRegion(corner, 50, 1); !r.In(corner.Bounds()) || r.Dx() != r.Dy() {
		t.Errorf("region at the corner %v leaves the canvas or loses its shape", r)
	}
}

func TestPrepareAndFinish(t *testing.T) {
	init := picture(64, 64, 5)
	mask := square(32, 32, image.Rect(0, 0, 16, 32)) // half the size: scaled with a notice
	p, err := Prepare(init, Options{Mask: mask, MaskGrow: 4, MaskBlur: 2, KeepOriginal: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notices) != 1 || p.Width != 64 || p.Height != 64 || p.Mask == nil {
		t.Fatalf("prepared %d×%d, mask %v, notices %q", p.Width, p.Height, p.Mask != nil, p.Notices)
	}
	out, err := p.Finish(picture(64, 64, 6))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for y := range 64 {
		for x := range 64 {
			if p.PasteMask.GrayAt(x, y).Y == 0 {
				kept++
				if out.NRGBAAt(x, y) != init.NRGBAAt(x, y) {
					t.Fatalf("(%d, %d) outside the mask is not the init image's pixel", x, y)
				}
			}
		}
	}
	if kept == 0 || kept == 64*64 {
		t.Errorf("%d pixels kept; want the right part of the image", kept)
	}

	if _, err := Prepare(init, Options{Mask: image.NewGray(image.Rect(0, 0, 64, 64))}); !errors.Is(err, ErrNothingToRepaint) {
		t.Errorf("a black mask: %v, want ErrNothingToRepaint", err)
	}

	big := picture(256, 256, 7)
	small := square(256, 256, image.Rect(100, 100, 110, 110))
	p, err = Prepare(big, Options{Mask: small, CropMasked: true, CropPadding: 8, WorkArea: 64 * 64, KeepOriginal: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 64 || p.Height != 64 || p.Canvas.Bounds().Dx() != 256 || p.Region.Dx() >= 256 {
		t.Fatalf("masked-area mode: work %d×%d, canvas %v, region %v", p.Width, p.Height, p.Canvas.Bounds(), p.Region)
	}
	out, err = p.Finish(picture(64, 64, 8))
	if err != nil {
		t.Fatal(err)
	}
	if out.Bounds().Dx() != 256 || out.NRGBAAt(10, 10) != big.NRGBAAt(10, 10) || out.NRGBAAt(105, 105) == big.NRGBAAt(105, 105) {
		t.Error("masked-area mode: want the canvas size, the outside kept and the masked pixels replaced")
	}

	p, err = Prepare(picture(64, 64, 9), Options{Extend: Margins{Right: 64}, KeepOriginal: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 128 || p.Height != 64 || p.Mask == nil {
		t.Errorf("extend by 64 to the right: %d×%d, mask %v", p.Width, p.Height, p.Mask != nil)
	}
}

func equalPix(a, b *image.NRGBA) bool {
	if a.Bounds().Size() != b.Bounds().Size() {
		return false
	}
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			if a.NRGBAAt(a.Rect.Min.X+x, a.Rect.Min.Y+y) != b.NRGBAAt(b.Rect.Min.X+x, b.Rect.Min.Y+y) {
				return false
			}
		}
	}
	return true
}
