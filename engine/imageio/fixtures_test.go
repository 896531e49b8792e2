package imageio

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
)

// The tests make their own files: these helpers build source images and encoded bytes.

// pattern is a w×h image whose every pixel differs from its neighbours in colour and alpha,
// including fully transparent and fully opaque pixels.
func pattern(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			switch (x + 2*y) % 5 {
			case 0:
				a = 0
			case 1:
				a = uint8(40 + 37*x)
			case 2:
				a = uint8(200 - 13*y)
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(17*x + 3*y), uint8(255 - 11*y), uint8(91*x*y + 7), a})
		}
	}
	return img
}

// opaque is pattern with every alpha 255.
func opaque(w, h int) *image.NRGBA {
	img := pattern(w, h)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

// writeFile puts data in a fresh temporary folder under name and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// pngIHDR is an IHDR chunk for a non-interlaced w×h image of the given depth and colour type.
func pngIHDR(w, h int, depth, colorType byte) []byte {
	d := make([]byte, 13)
	binary.BigEndian.PutUint32(d[0:], uint32(w))
	binary.BigEndian.PutUint32(d[4:], uint32(h))
	d[8], d[9] = depth, colorType
	return pngChunk("IHDR", d)
}

// grayAlphaPNG encodes 8-bit grayscale-with-alpha pixels (two bytes each, row-major) — a PNG
// colour type Go's encoder never writes.
func grayAlphaPNG(t *testing.T, w, h int, ga []byte) []byte {
	var raw bytes.Buffer
	for y := 0; y < h; y++ {
		raw.WriteByte(0) // filter: none
		raw.Write(ga[2*w*y : 2*w*(y+1)])
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, pngIHDR(w, h, 8, 4)...)
	out = append(out, pngChunk("IDAT", z.Bytes())...)
	return append(out, pngChunk("IEND", nil)...)
}

// spliceAfter inserts extra bytes into a file right after its first n bytes.
func spliceAfter(data []byte, n int, extra []byte) []byte {
	out := append([]byte{}, data[:n]...)
	out = append(out, extra...)
	return append(out, data[n:]...)
}

// exifTIFF is a minimal TIFF-structured EXIF block holding only an orientation tag.
func exifTIFF(order binary.ByteOrder, orientation uint16) []byte {
	b := make([]byte, 8+2+12+4)
	if order == binary.LittleEndian {
		copy(b, "II")
	} else {
		copy(b, "MM")
	}
	order.PutUint16(b[2:], 42)
	order.PutUint32(b[4:], 8)
	order.PutUint16(b[8:], 1)       // one entry
	order.PutUint16(b[10:], 0x0112) // Orientation
	order.PutUint16(b[12:], 3)      // SHORT
	order.PutUint32(b[14:], 1)      // count
	order.PutUint16(b[18:], orientation)
	return b
}

// jpegAPP1 is a JPEG APP1 segment carrying an EXIF block.
func jpegAPP1(exif []byte) []byte {
	payload := append([]byte("Exif\x00\x00"), exif...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	return append(seg, payload...)
}
