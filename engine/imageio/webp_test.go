package imageio

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smoothAlpha is smooth with alpha rising from 0 at the left edge to 252 at the right.
func smoothAlpha(w, h int) *image.NRGBA {
	img := smooth(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Pix[img.PixOffset(x, y)+3] = uint8(4 * x)
		}
	}
	return img
}

// dwebpReference is libwebp's own decoding of a fixture (dwebp 1.2.4, see testdata/README.md).
func dwebpReference(t *testing.T, name string) *image.NRGBA {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return toNRGBA(img)
}

func TestLoadWebP(t *testing.T) {
	for _, tc := range []struct {
		file     string
		want     func(t *testing.T) *image.NRGBA
		encoded  *image.NRGBA // what cwebp was given, for a sanity bound on lossy files
		maxDelta float64      // mean |Δ| to encoded, in levels
	}{
		{"pattern_lossless.webp", func(*testing.T) *image.NRGBA { return pattern(13, 7) }, nil, 0},
		{"smooth_lossy.webp", func(t *testing.T) *image.NRGBA { return dwebpReference(t, "smooth_lossy.dwebp.png") }, smooth(64, 48), 1.5},
		{"smooth_lossy_alpha.webp", func(t *testing.T) *image.NRGBA { return dwebpReference(t, "smooth_lossy_alpha.dwebp.png") }, nil, 0},
		{"pattern_lossy.webp", func(t *testing.T) *image.NRGBA { return dwebpReference(t, "pattern_lossy.dwebp.png") }, nil, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// Lossless: the encoded pixels; lossy: exactly what libwebp decodes.
			sameNRGBA(t, got, tc.want(t))
			if tc.encoded != nil {
				if d := meanAbsDiff(got, tc.encoded); d > tc.maxDelta {
					t.Errorf("mean |Δ| to the image cwebp encoded %.2f levels, want ≤ %.1f", d, tc.maxDelta)
				}
			}
		})
	}
}

// TestWebPFrameChecks: a WebP's picture size is checked before decoding, not just its canvas
// (found by FuzzDecode: a 64×48 canvas carrying a 16383×16383 VP8 frame allocated 400 MB).
func TestWebPFrameChecks(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "smooth_lossy_alpha.webp")) // VP8X 64×48 + ALPH + VP8
	if err != nil {
		t.Fatal(err)
	}
	vp8 := bytes.Index(orig, []byte("VP8 ")) + 8 // the VP8 chunk's body
	edit := func(change func(d []byte)) []byte {
		d := append([]byte{}, orig...)
		change(d)
		return d
	}
	for _, tc := range []struct {
		name string
		file []byte
		says string
	}{
		{"huge frame", edit(func(d []byte) {
			binary.LittleEndian.PutUint16(d[vp8+6:], 16000)
			binary.LittleEndian.PutUint16(d[vp8+8:], 16000)
		}), "16000×16000 = 256.0 megapixels, over the limit"},
		{"frame differs from canvas", edit(func(d []byte) { binary.LittleEndian.PutUint16(d[vp8+6:], 65) }), "canvas is 64×48 but its picture is 65×48"},
		{"animated", edit(func(d []byte) { d[20] |= 0x02 }), "animated WebP"},
	} {
		path := writeFile(t, "edited.webp", tc.file)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", tc.name, err, tc.says)
		}
	}
}
