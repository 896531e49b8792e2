package imageio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/image/tiff"
)

// blocks is a 48×32 opaque image of six 16×16 solid blocks (aligned to JPEG's 16×16 MCUs, so the
// colours survive compression): red, gray, green on top; blue, yellow, white below.
func blocks() *image.NRGBA {
	colours := [2][3]color.NRGBA{
		{{255, 0, 0, 255}, {128, 128, 128, 255}, {0, 255, 0, 255}},
		{{0, 0, 255, 255}, {255, 255, 0, 255}, {255, 255, 255, 255}},
	}
	img := image.NewNRGBA(image.Rect(0, 0, 48, 32))
	for y := 0; y < 32; y++ {
		for x := 0; x < 48; x++ {
			img.SetNRGBA(x, y, colours[y/16][x/16])
		}
	}
	return img
}

// near reports whether two colours are within JPEG's error on a solid block.
func near(a, b color.NRGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) <= 12 && d(a.G, b.G) <= 12 && d(a.B, b.B) <= 12
}

// TestJPEGOrientation checks all eight EXIF orientations against the EXIF specification's own
// definition — where the stored image's first row and first column end up when displayed — not
// against the rotation code: the stored top-left block (red) and top-right block (green) must land
// in these display corners, and orientations 5–8 swap width and height.
func TestJPEGOrientation(t *testing.T) {
	var stored bytes.Buffer
	if err := jpeg.Encode(&stored, blocks(), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	red, green := color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 255, 0, 255}
	const TL, TR, BL, BR = "top-left", "top-right", "bottom-left", "bottom-right"
	for _, tc := range []struct {
		orientation        uint16
		storedTL, storedTR string // display corner of the stored top-left / top-right pixel
		displayW, displayH int
		orderLE            bool
	}{
		{1, TL, TR, 48, 32, false}, // 0th row at the top, 0th column at the left
		{2, TR, TL, 48, 32, true},  // top, right
		{3, BR, BL, 48, 32, false}, // bottom, right
		{4, BL, BR, 48, 32, true},  // bottom, left
		{5, TL, BL, 32, 48, false}, // left, top
		{6, TR, BR, 32, 48, true},  // right, top
		{7, BR, TR, 32, 48, false}, // right, bottom
		{8, BL, TL, 32, 48, true},  // left, bottom
	} {
		t.Run(fmt.Sprint("orientation", tc.orientation), func(t *testing.T) {
			var order binary.ByteOrder = binary.BigEndian
			if tc.orderLE {
				order = binary.LittleEndian
			}
			file := spliceAfter(stored.Bytes(), 2, jpegAPP1(exifTIFF(order, tc.orientation)))
			img, err := Load(writeFile(t, "rotated.jpg", file))
			if err != nil {
				t.Fatal(err)
			}
			if img.Rect.Dx() != tc.displayW || img.Rect.Dy() != tc.displayH {
				t.Fatalf("displayed size %d×%d, want %d×%d", img.Rect.Dx(), img.Rect.Dy(), tc.displayW, tc.displayH)
			}
			corner := map[string]color.NRGBA{
				TL: img.NRGBAAt(2, 2), TR: img.NRGBAAt(tc.displayW-3, 2),
				BL: img.NRGBAAt(2, tc.displayH-3), BR: img.NRGBAAt(tc.displayW-3, tc.displayH-3),
			}
			if !near(corner[tc.storedTL], red) {
				t.Errorf("stored top-left (red) should be at the %s, which is %v", tc.storedTL, corner[tc.storedTL])
			}
			if !near(corner[tc.storedTR], green) {
				t.Errorf("stored top-right (green) should be at the %s, which is %v", tc.storedTR, corner[tc.storedTR])
			}
		})
	}
}

// TestPNGExifOrientation: a PNG eXIf chunk is honoured too (phones write them into screenshots and
// edited photos); the chunk goes before IDAT, right after the 33-byte signature + IHDR.
func TestPNGExifOrientation(t *testing.T) {
	file := spliceAfter(encodePNG(t, blocks()), 33, pngChunk("eXIf", exifTIFF(binary.BigEndian, 6)))
	img, err := Load(writeFile(t, "rotated.png", file))
	if err != nil {
		t.Fatal(err)
	}
	// Orientation 6 is shown rotated 90° clockwise: the stored top-left block (red) at the top-right.
	if img.Rect.Dx() != 32 || img.Rect.Dy() != 48 || img.NRGBAAt(31, 0) != (color.NRGBA{255, 0, 0, 255}) {
		t.Errorf("size %v, top-right pixel %v: want 32×48 with red at the top-right", img.Rect, img.NRGBAAt(31, 0))
	}
}

// TestMalformedExifIgnored: a damaged EXIF block leaves the image as stored instead of failing.
func TestMalformedExifIgnored(t *testing.T) {
	var stored bytes.Buffer
	if err := jpeg.Encode(&stored, blocks(), nil); err != nil {
		t.Fatal(err)
	}
	for name, exif := range map[string][]byte{
		"truncated IFD":     exifTIFF(binary.BigEndian, 6)[:12],
		"bad byte order":    append([]byte("XX"), exifTIFF(binary.BigEndian, 6)[2:]...),
		"orientation 9":     exifTIFF(binary.LittleEndian, 9),
		"IFD offset beyond": {'I', 'I', 42, 0, 0xff, 0xff, 0, 0},
	} {
		img, err := Load(writeFile(t, "odd-exif.jpg", spliceAfter(stored.Bytes(), 2, jpegAPP1(exif))))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if img.Rect.Dx() != 48 || img.Rect.Dy() != 32 {
			t.Errorf("%s: size %v, want the stored 48×32", name, img.Rect)
		}
	}
}

// TestWebPExifOrientation: an EXIF chunk in an extended WebP is honoured.
func TestWebPExifOrientation(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "smooth_lossy_alpha.webp")) // VP8X 64×48
	if err != nil {
		t.Fatal(err)
	}
	exif := exifTIFF(binary.LittleEndian, 8)
	chunk := append([]byte("EXIF\x00\x00\x00\x00"), exif...)
	binary.LittleEndian.PutUint32(chunk[4:], uint32(len(exif)))
	file := append(append([]byte{}, orig...), chunk...)
	binary.LittleEndian.PutUint32(file[4:], uint32(len(file)-8)) // RIFF size
	file[20] |= 0x08                                             // VP8X: has EXIF
	img, err := Load(writeFile(t, "rotated.webp", file))
	if err != nil {
		t.Fatal(err)
	}
	upright, err := Load(filepath.Join("testdata", "smooth_lossy_alpha.webp"))
	if err != nil {
		t.Fatal(err)
	}
	// Orientation 8 is shown rotated 90° counter-clockwise: the stored top-right pixel at the top-left.
	if img.Rect.Dx() != 48 || img.Rect.Dy() != 64 || img.NRGBAAt(0, 0) != upright.NRGBAAt(63, 0) {
		t.Errorf("size %v, top-left %v: want 48×64 with the stored top-right pixel %v", img.Rect, img.NRGBAAt(0, 0), upright.NRGBAAt(63, 0))
	}
}

// TestTIFFOrientation: a TIFF's own Orientation tag is honoured. The encoder writes none, so the
// test turns its ResolutionUnit entry (also a single SHORT) into Orientation = 6, re-sorted.
func TestTIFFOrientation(t *testing.T) {
	var b bytes.Buffer
	if err := tiff.Encode(&b, blocks(), nil); err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()
	ifd := binary.LittleEndian.Uint32(file[4:])
	count := int(binary.LittleEndian.Uint16(file[ifd:]))
	found := false
	for e := 0; e < count; e++ {
		entry := file[int(ifd)+2+12*e:]
		if binary.LittleEndian.Uint16(entry) == 0x0128 { // ResolutionUnit
			binary.LittleEndian.PutUint16(entry, 0x0112)
			binary.LittleEndian.PutUint16(entry[8:], 6)
			found = true
		}
	}
	if !found {
		t.Fatal("the TIFF encoder wrote no ResolutionUnit entry to repurpose")
	}
	// Entries are self-contained 12-byte records; readers want them sorted by tag.
	entries := file[int(ifd)+2 : int(ifd)+2+12*count]
	records := make([][]byte, count)
	for e := range records {
		records[e] = append([]byte{}, entries[12*e:12*e+12]...)
	}
	sort.Slice(records, func(i, j int) bool {
		return binary.LittleEndian.Uint16(records[i]) < binary.LittleEndian.Uint16(records[j])
	})
	for e, r := range records {
		copy(entries[12*e:], r)
	}
	img, err := Load(writeFile(t, "rotated.tiff", file))
	if err != nil {
		t.Fatal(err)
	}
	// Orientation 6 is shown rotated 90° clockwise: the stored top-left block (red) at the top-right.
	if img.Rect.Dx() != 32 || img.Rect.Dy() != 48 || img.NRGBAAt(31, 0) != (color.NRGBA{255, 0, 0, 255}) {
		t.Errorf("size %v, top-right pixel %v: want 32×48 with red at the top-right", img.Rect, img.NRGBAAt(31, 0))
	}
}

// TestPNGExifAfterImageData: an eXIf chunk after IDAT (some writers put it there) still counts.
func TestPNGExifAfterImageData(t *testing.T) {
	file := encodePNG(t, blocks())
	file = spliceAfter(file, len(file)-12, pngChunk("eXIf", exifTIFF(binary.LittleEndian, 3))) // before IEND
	img, err := Load(writeFile(t, "late-exif.png", file))
	if err != nil {
		t.Fatal(err)
	}
	// Orientation 3 is shown rotated 180°: the stored top-left block (red) at the bottom-right.
	if img.Rect.Dx() != 48 || img.NRGBAAt(47, 31) != (color.NRGBA{255, 0, 0, 255}) {
		t.Errorf("size %v, bottom-right pixel %v: want 48×32 with red at the bottom-right", img.Rect, img.NRGBAAt(47, 31))
	}
}
