package imageio

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// fuzzMaxPixels keeps the fuzzer's allocations small; the limit logic is the same as MaxPixels'.
const fuzzMaxPixels = 1 << 18

var writeFuzzSeeds = flag.Bool("write-fuzz-seeds", false, "rewrite testdata/fuzz/FuzzDecode from fuzzSeeds")

// fuzzSeeds is one small file of every format and variant the loader handles.
func fuzzSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	src := pattern(9, 5)
	var b bytes.Buffer
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	take := func(name string) { seeds[name] = append([]byte{}, b.Bytes()...); b.Reset() }
	seeds["png-rgba"] = encodePNG(t, src)
	seeds["png-gray-alpha"] = grayAlphaPNG(t, 2, 2, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	seeds["png-exif"] = spliceAfter(seeds["png-rgba"], 33, pngChunk("eXIf", exifTIFF(binary.BigEndian, 6)))
	must(jpeg.Encode(&b, smooth(16, 16), nil))
	take("jpeg")
	seeds["jpeg-exif"] = spliceAfter(seeds["jpeg"], 2, jpegAPP1(exifTIFF(binary.LittleEndian, 8)))
	pal := image.NewPaletted(src.Rect, color.Palette{color.RGBA{0, 0, 0, 0}, color.RGBA{255, 0, 0, 255}})
	must(gif.Encode(&b, pal, nil))
	take("gif")
	must(bmp.Encode(&b, opaque(9, 5)))
	take("bmp")
	must(tiff.Encode(&b, src, &tiff.Options{Compression: tiff.Deflate}))
	take("tiff")
	for _, f := range []string{"pattern_lossless.webp", "pattern_lossy.webp", "smooth_lossy_alpha.webp"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		must(err)
		seeds["webp-"+strings.TrimSuffix(f, ".webp")] = data
	}
	return seeds
}

// TestWriteFuzzSeeds writes the committed seed corpus when run with -write-fuzz-seeds, and
// otherwise checks every seed still decodes.
func TestWriteFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	for name, data := range fuzzSeeds(t) {
		if _, err := Decode(data, name); err != nil {
			t.Errorf("seed %s does not decode: %v", name, err)
		}
		if *writeFuzzSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzDecode: arbitrary bytes either decode to a well-formed image within the pixel limit or give
// an error naming the input — never a panic (decodeUnguarded has no recover, so a decoder panic
// fails the fuzzer instead of being hidden).
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := decodeUnguarded(data, "fuzz-input", fuzzMaxPixels)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz-input") {
				t.Errorf("error does not name the input: %v", err)
			}
			return
		}
		w, h := img.Rect.Dx(), img.Rect.Dy()
		switch {
		case img.Rect.Min != image.Point{}:
			t.Errorf("image origin %v, want (0,0)", img.Rect.Min)
		case w <= 0 || h <= 0 || int64(w)*int64(h) > fuzzMaxPixels:
			t.Errorf("image %d×%d outside (0, %d] pixels", w, h, fuzzMaxPixels)
		case len(img.Pix) != 4*w*h || img.Stride != 4*w:
			t.Errorf("image %d×%d has %d bytes, stride %d", w, h, len(img.Pix), img.Stride)
		}
	})
}
