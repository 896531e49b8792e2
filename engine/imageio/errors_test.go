package imageio

import (
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadErrors: every way a file can be unusable gives an error naming the file, saying what is
// wrong and what to do — and never a panic.
func TestLoadErrors(t *testing.T) {
	pngFile := encodePNG(t, pattern(40, 30))
	var jpegFile bytes.Buffer
	if err := jpeg.Encode(&jpegFile, smooth(256, 192), nil); err != nil {
		t.Fatal(err)
	}
	garbled := append([]byte{}, pngFile...)
	for i := 60; i < len(garbled)-20; i += 7 { // inside IDAT: the zlib stream or its checksum breaks
		garbled[i] ^= 0x5a
	}
	// 20000×6000 = 120 MP: a valid PNG header and nothing else, so only the header can refuse it.
	hugePNG := append([]byte("\x89PNG\r\n\x1a\n"), pngIHDR(20000, 6000, 8, 6)...)
	// A GIF whose logical screen is 12000×9000 = 108 MP.
	hugeGIF := []byte("GIF89a\x00\x00\x00\x00\x00\x00\x00")
	binary.LittleEndian.PutUint16(hugeGIF[6:], 12000)
	binary.LittleEndian.PutUint16(hugeGIF[8:], 9000)

	dir := t.TempDir()
	folder := filepath.Join(dir, "holiday photos")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
		says []string // fragments the message must contain, besides the path
	}{
		{"missing", func(*testing.T) string { return filepath.Join(dir, "nowhere.png") }, []string{"does not exist", "choose the file again"}},
		{"folder", func(*testing.T) string { return folder }, []string{"is a folder", "choose an image file"}},
		{"empty", func(t *testing.T) string { return writeFile(t, "empty.png", nil) }, []string{"empty (0 bytes)", "export it again"}},
		{"unknown format", func(t *testing.T) string { return writeFile(t, "notes.png", []byte("shopping list: eggs")) }, []string{"not an image Easel can read", "PNG, JPEG, WebP", "export it as PNG"}},
		{"truncated PNG", func(t *testing.T) string { return writeFile(t, "cut.png", pngFile[:len(pngFile)/2]) }, []string{"truncated", "40×30 png", "get the file again"}},
		{"truncated JPEG", func(t *testing.T) string { return writeFile(t, "cut.jpg", jpegFile.Bytes()[:jpegFile.Len()/2]) }, []string{"truncated", "256×192 jpeg", "get the file again"}},
		{"header only", func(t *testing.T) string { return writeFile(t, "header.png", pngFile[:40]) }, []string{"truncated"}},
		{"garbled PNG", func(t *testing.T) string { return writeFile(t, "garbled.png", garbled) }, []string{"damaged", "save it again"}},
		{"huge PNG", func(t *testing.T) string { return writeFile(t, "huge.png", hugePNG) }, []string{"20000×6000 = 120.0 megapixels", "limit of 100 megapixels", "scale it down"}},
		{"huge GIF", func(t *testing.T) string { return writeFile(t, "huge.gif", hugeGIF) }, []string{"12000×9000 = 108.0 megapixels", "limit of 100 megapixels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			img, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%s) returned a %v image and no error", path, img.Rect)
			}
			msg := err.Error()
			for _, want := range append([]string{path}, tc.says...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
		})
	}
}

// TestDecodeEmptyAndNil: the in-memory entry point refuses empty input the same way.
func TestDecodeEmptyAndNil(t *testing.T) {
	for _, data := range [][]byte{nil, {}} {
		if _, err := Decode(data, "clipboard"); err == nil || !strings.Contains(err.Error(), "clipboard is empty") {
			t.Errorf("Decode(%v): error %v, want one saying the clipboard image is empty", data, err)
		}
	}
}

// TestFarOffsetTIFFAllocatesLittle: a damaged TIFF whose header points 2 GB into a 40-byte file
// is refused without allocating its way there (x/image/tiff buffers a plain io.Reader up to the
// offset it is asked for; found by FuzzDecode).
func TestFarOffsetTIFFAllocatesLittle(t *testing.T) {
	file := append([]byte("II*\x00\x00\x00\x00\x78"), make([]byte, 32)...)
	path := writeFile(t, "far.tiff", file)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, errLoad := Load(path)
	_, errDecode := Decode(file, path)
	runtime.ReadMemStats(&after)
	for _, err := range []error{errLoad, errDecode} {
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v, want one naming %s", err, path)
		}
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing a 40-byte TIFF allocated %d MB", grew>>20)
	}
}
