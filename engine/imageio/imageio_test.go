package imageio

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameNRGBA fails unless got and want hold the same size and pixels.
func sameNRGBA(t *testing.T, got, want *image.NRGBA) {
	t.Helper()
	if got.Rect != want.Rect {
		t.Fatalf("size %v, want %v", got.Rect, want.Rect)
	}
	for y := 0; y < want.Rect.Dy(); y++ {
		for x := 0; x < want.Rect.Dx(); x++ {
			if g, w := got.NRGBAAt(x, y), want.NRGBAAt(x, y); g != w {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, g, w)
			}
		}
	}
}

// meanAbsDiff is the mean absolute difference over all RGBA bytes.
func meanAbsDiff(a, b *image.NRGBA) float64 {
	s := 0.0
	for i := range a.Pix {
		s += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
	}
	return s / float64(len(a.Pix))
}

func TestLoadLosslessFormats(t *testing.T) {
	const w, h = 13, 7
	src := pattern(w, h)

	// 16-bit: each sample's high byte is the pattern, its low byte noise that must be dropped.
	wide := image.NewNRGBA64(src.Rect)
	for i, v := range src.Pix {
		wide.Pix[2*i], wide.Pix[2*i+1] = v, uint8(i*59)
	}
	gray := image.NewGray(src.Rect)
	gray16 := image.NewGray16(src.Rect)
	grayWant := image.NewNRGBA(src.Rect)
	ga := make([]byte, 0, 2*w*h)
	gaWant := image.NewNRGBA(src.Rect)
	for i := 0; i < w*h; i++ {
		v := src.Pix[4*i]
		gray.Pix[i] = v
		gray16.Pix[2*i], gray16.Pix[2*i+1] = v, ^v
		copy(grayWant.Pix[4*i:], []uint8{v, v, v, 255})
		ga = append(ga, v, src.Pix[4*i+3])
		copy(gaWant.Pix[4*i:], []uint8{v, v, v, src.Pix[4*i+3]})
	}
	// Paletted with transparency: 4 colours, one transparent, one half-transparent.
	pal := color.Palette{color.NRGBA{0, 0, 0, 0}, color.NRGBA{255, 0, 0, 255}, color.NRGBA{10, 200, 30, 128}, color.NRGBA{1, 2, 3, 255}}
	paletted := image.NewPaletted(src.Rect, pal)
	palWant := image.NewNRGBA(src.Rect)
	for i := range paletted.Pix {
		paletted.Pix[i] = uint8((i * 7) % 4)
		c := pal[paletted.Pix[i]].(color.NRGBA)
		copy(palWant.Pix[4*i:], []uint8{c.R, c.G, c.B, c.A})
	}
	// GIF: palette with one transparent entry; a second frame that must be ignored.
	gifPal := color.Palette{color.RGBA{0, 0, 0, 0}, color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{9, 9, 9, 255}}
	frame0 := image.NewPaletted(src.Rect, gifPal)
	frame1 := image.NewPaletted(src.Rect, gifPal)
	gifWant := image.NewNRGBA(src.Rect)
	for i := range frame0.Pix {
		frame0.Pix[i] = uint8((i * 5) % 4)
		frame1.Pix[i] = 3
		c := color.NRGBAModel.Convert(gifPal[frame0.Pix[i]]).(color.NRGBA)
		copy(gifWant.Pix[4*i:], []uint8{c.R, c.G, c.B, c.A})
	}
	var gifBytes bytes.Buffer
	if err := gif.EncodeAll(&gifBytes, &gif.GIF{Image: []*image.Paletted{frame0, frame1}, Delay: []int{10, 10}}); err != nil {
		t.Fatal(err)
	}
	var bmpOpaque, tiffBytes, tiffDeflate bytes.Buffer
	if err := bmp.Encode(&bmpOpaque, opaque(w, h)); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiffBytes, src, nil); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiffDeflate, wide, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		file []byte
		want *image.NRGBA
	}{
		{"png-rgba8.png", encodePNG(t, src), src},
		{"png-rgb8.png", encodePNG(t, opaque(w, h)), opaque(w, h)},
		{"png-rgba16.png", encodePNG(t, wide), src},
		{"png-gray8.png", encodePNG(t, gray), grayWant},
		{"png-gray16.png", encodePNG(t, gray16), grayWant},
		{"png-gray-alpha.png", grayAlphaPNG(t, w, h, ga), gaWant},
		{"png-palette-trns.png", encodePNG(t, paletted), palWant},
		{"first-frame.gif", gifBytes.Bytes(), gifWant},
		{"opaque.bmp", bmpOpaque.Bytes(), opaque(w, h)},
		{"rgba8.tiff", tiffBytes.Bytes(), src},
		{"rgba16-deflate.tiff", tiffDeflate.Bytes(), src},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(writeFile(t, tc.name, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			sameNRGBA(t, got, tc.want)
		})
	}
}

// smooth is an opaque gradient, the kind of content JPEG keeps well.
func smooth(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(3 * x), uint8(4 * y), uint8(200 - x - y), 255})
		}
	}
	return img
}

// TestLoadJPEGLikePillow decodes JPEGs that Pillow encoded (4:2:0, 4:2:2, 4:4:4; odd sizes; chroma
// 2 samples wide) and compares with Pillow's own decoding (testdata/make_jpeg_fixtures.py). The
// upsampling and colour conversion are libjpeg-turbo's; the inverse DCT is Go's, whose rounding
// differs: the measured gap is at most 3 levels, 0.053 on average (4:2:0 with Go's own
// chroma repetition: up to ~70 levels, 4.4 on average).
func TestLoadJPEGLikePillow(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "photo_*.jpg"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no JPEG fixtures: %v", err)
	}
	for _, path := range paths {
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(strings.TrimSuffix(path, ".jpg") + ".pillow.png")
		if err != nil {
			t.Fatal(err)
		}
		if got.Rect != want.Rect {
			t.Fatalf("%s: size %v, Pillow %v", path, got.Rect, want.Rect)
		}
		maxGap := 0
		for i := range got.Pix {
			maxGap = max(maxGap, int(got.Pix[i])-int(want.Pix[i]), int(want.Pix[i])-int(got.Pix[i]))
		}
		mean := meanAbsDiff(got, want) * 4 / 3 // over R, G, B (alpha is 255 in both)
		t.Logf("%s: max |Δ| %d, mean %.3f levels", filepath.Base(path), maxGap, mean)
		if maxGap > 3 || mean > 0.06 {
			t.Errorf("%s: max |Δ| %d, mean %.3f levels from Pillow, want ≤ 3 and ≤ 0.06", path, maxGap, mean)
		}
	}
}

// TestGIFFrameOnScreen: a first frame smaller than the GIF's logical screen keeps its place on a
// transparent screen of the full size.
func TestGIFFrameOnScreen(t *testing.T) {
	pal := color.Palette{color.RGBA{0, 0, 0, 0}, color.RGBA{255, 0, 0, 255}}
	frame := image.NewPaletted(image.Rect(2, 1, 7, 4), pal)
	for i := range frame.Pix {
		frame.Pix[i] = 1
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{ColorModel: pal, Width: 9, Height: 5}}); err != nil {
		t.Fatal(err)
	}
	img, err := Load(writeFile(t, "offset.gif", b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect != image.Rect(0, 0, 9, 5) {
		t.Fatalf("size %v, want the 9×5 screen", img.Rect)
	}
	for y := 0; y < 5; y++ {
		for x := 0; x < 9; x++ {
			want := color.NRGBA{}
			if image.Pt(x, y).In(frame.Rect) {
				want = color.NRGBA{255, 0, 0, 255}
			}
			if got := img.NRGBAAt(x, y); got != want {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
}

// TestLoadPremultiplied: premultiplied sources (TIFF with associated alpha, 8- and 16-bit; opaque
// 16-bit PNG) come out as the standard library's own NRGBA conversion of what was encoded.
func TestLoadPremultiplied(t *testing.T) {
	src8 := image.NewRGBA(image.Rect(0, 0, 13, 7))
	src16 := image.NewRGBA64(src8.Rect)
	opaque16 := image.NewRGBA64(src8.Rect)
	for y := 0; y < 7; y++ {
		for x := 0; x < 13; x++ {
			c := pattern(13, 7).NRGBAAt(x, y)
			src8.Set(x, y, c)
			src16.Set(x, y, color.NRGBA64{uint16(c.R)<<8 | 0x5a, uint16(c.G) << 8, uint16(c.B)<<8 | 0xff, uint16(c.A)<<8 | uint16(x)})
			opaque16.Set(x, y, color.RGBA64{uint16(c.R)<<8 | 0x5a, uint16(c.G) << 8, uint16(c.B)<<8 | 0xff, 0xffff})
		}
	}
	var tiff8, tiff16 bytes.Buffer
	if err := tiff.Encode(&tiff8, src8, nil); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiff16, src16, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file []byte
		src  image.Image
	}{
		{"associated-alpha8.tiff", tiff8.Bytes(), src8},
		{"associated-alpha16.tiff", tiff16.Bytes(), src16},
		{"opaque16.png", encodePNG(t, opaque16), opaque16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(writeFile(t, tc.name, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want := image.NewNRGBA(src8.Rect)
			for y := 0; y < 7; y++ {
				for x := 0; x < 13; x++ {
					want.SetNRGBA(x, y, color.NRGBAModel.Convert(tc.src.At(x, y)).(color.NRGBA))
				}
			}
			sameNRGBA(t, got, want)
		})
	}
}
