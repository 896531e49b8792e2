// Package imageio loads the image files artists give Easel as condition images — PNG (8/16-bit,
// paletted, grayscale, with or without alpha), JPEG, WebP, GIF (first frame), BMP and TIFF — into
// 8-bit non-premultiplied RGBA (*image.NRGBA), with the EXIF orientation applied so the image is
// upright as viewers show it. 16-bit samples are reduced to their high byte (v >> 8), as Pillow
// does for 16-bit RGB(A) PNGs (for 16-bit grayscale Pillow instead clips values above 255 to white;
// we keep the high byte there too). Lossy WebP is decoded the way libwebp does it (see webp_yuv.go).
//
// Files are checked before they are decoded: images over MaxPixels are refused from their header,
// and every failure (missing, a folder, empty, unknown format, damaged or truncated) is an error
// that names the file and says what to do. Decoders never panic out of this package.
package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"io"
	"math"
	"os"

	_ "image/gif"  // GIF decoder (first frame)
	_ "image/jpeg" // JPEG decoder
	_ "image/png"  // PNG decoder

	_ "golang.org/x/image/bmp"  // BMP decoder
	"golang.org/x/image/tiff"   // TIFF decoder (called directly: see readerAt)
	_ "golang.org/x/image/webp" // WebP decoder (lossy and lossless)
)

// MaxPixels is the largest condition image accepted, in pixels (100 megapixels). Condition images
// are resized to about one megapixel anyway; the limit keeps a huge or hostile file from taking
// the machine's memory (a 100 MP image already needs 400 MB as RGBA).
const MaxPixels = 100_000_000

// Formats names the formats Load reads, for messages and file pickers.
const Formats = "PNG, JPEG, WebP, GIF, BMP or TIFF"

// readerAt is what the header check and the decoders are given: x/image/tiff, handed a plain
// io.Reader (as image.Decode does), buffers it in memory up to whatever offset the file's header
// names — a 400-byte damaged TIFF claiming data at 2 GB made it allocate 2 GB. With an io.ReaderAt
// it reads in bounded chunks and just finds the end of the file.
type readerAt interface {
	io.Reader
	io.ReaderAt
}

// isTIFF reports whether a file starts with a TIFF signature (little- or big-endian).
func isTIFF(r io.ReaderAt) bool {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return false
	}
	return string(magic[:]) == "II*\x00" || string(magic[:]) == "MM\x00*"
}

// Load reads the image file at path as upright 8-bit RGBA.
func Load(path string) (*image.NRGBA, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not an image: choose an image file (%s) inside it", path, Formats)
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("image %s is empty (0 bytes): it was not saved or copied completely; export it again", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	// The header first, so an oversized image is refused before the whole file is read.
	if _, _, err := checkHeader(f, path, MaxPixels); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read image %s: %v", path, err)
	}
	return Decode(data, path)
}

// openError explains why a file cannot be opened.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("image %s does not exist: check the path, or choose the file again", path)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("no permission to read image %s: check the file's permissions "+
			"(on macOS also System Settings › Privacy & Security › Files and Folders)", path)
	}
	return fmt.Errorf("cannot read image %s: %v", path, err)
}

// Decode decodes an image file's bytes as upright 8-bit RGBA; name identifies the file in errors.
func Decode(data []byte, name string) (*image.NRGBA, error) {
	return decodeLimited(data, name, MaxPixels)
}

// decodeLimited is Decode with a pixel limit; a decoder panic becomes an error.
func decodeLimited(data []byte, name string, maxPixels int64) (img *image.NRGBA, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("image %s could not be decoded (the decoder failed: %v): the file is "+
				"probably damaged; open it in an image editor and save it again as PNG", name, r)
		}
	}()
	return decodeUnguarded(data, name, maxPixels)
}

// decodeUnguarded is the decoding itself, without the panic guard (the fuzz test calls it so that
// a decoder panic is found rather than hidden).
func decodeUnguarded(data []byte, name string, maxPixels int64) (*image.NRGBA, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("image %s is empty (0 bytes): it was not saved or copied completely; export it again", name)
	}
	format, cfg, err := checkHeader(bytes.NewReader(data), name, maxPixels)
	if err != nil {
		return nil, err
	}
	if format == "webp" {
		if err := webpCheckFrame(data, name, cfg.Width, cfg.Height, maxPixels); err != nil {
			return nil, err
		}
	}
	var decoded image.Image
	if format == "tiff" {
		decoded, err = tiff.Decode(bytes.NewReader(data))
	} else {
		decoded, _, err = image.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, decodeError(name, format, cfg, err, data)
	}
	if b := decoded.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		// The limit was checked against the header; never let the body disagree with it.
		if int64(b.Dx())*int64(b.Dy()) > maxPixels {
			return nil, tooLarge(name, b.Dx(), b.Dy(), maxPixels)
		}
	}
	if format == "gif" && decoded.Bounds() != image.Rect(0, 0, cfg.Width, cfg.Height) {
		// A first frame smaller than the GIF's screen sits at its offset on a transparent screen.
		screen := image.NewNRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
		draw.Draw(screen, decoded.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
		decoded = screen
	}
	if decoded.Bounds().Empty() {
		return nil, fmt.Errorf("image %s (%s) has no pixels: export it again", name, format)
	}
	out, ok := (*image.NRGBA)(nil), false
	switch format {
	case "webp":
		out, ok = webpYCbCrToNRGBA(decoded)
	case "jpeg":
		out, ok = jpegYCbCrToNRGBA(decoded)
	}
	if !ok {
		out = toNRGBA(decoded)
	}
	return orient(out, exifOrientation(data, format)), nil
}

// checkHeader reads only the header: the format and the size, refusing images over maxPixels.
func checkHeader(r readerAt, name string, maxPixels int64) (string, image.Config, error) {
	var cfg image.Config
	var format string
	var err error
	if isTIFF(r) {
		format = "tiff"
		cfg, err = tiff.DecodeConfig(r)
	} else {
		cfg, format, err = image.DecodeConfig(io.NewSectionReader(r, 0, math.MaxInt64))
	}
	switch {
	case errors.Is(err, image.ErrFormat):
		return "", cfg, fmt.Errorf("%s is not an image Easel can read (it is not %s): "+
			"open it in an image editor and export it as PNG", name, Formats)
	case err != nil:
		return format, cfg, decodeError(name, format, cfg, err, nil)
	case cfg.Width <= 0 || cfg.Height <= 0:
		return format, cfg, fmt.Errorf("image %s (%s) says it is %d×%d pixels: it has no pixels; export it again",
			name, format, cfg.Width, cfg.Height)
	case int64(cfg.Width)*int64(cfg.Height) > maxPixels:
		return format, cfg, tooLarge(name, cfg.Width, cfg.Height, maxPixels)
	}
	return format, cfg, nil
}

func tooLarge(name string, w, h int, maxPixels int64) error {
	return fmt.Errorf("image %s is %d×%d = %.1f megapixels, over the limit of %.0f megapixels: "+
		"scale it down in an image editor first (condition images are used at about 1 megapixel)",
		name, w, h, float64(w)*float64(h)/1e6, float64(maxPixels)/1e6)
}

// decodeError describes a failed decode; data (nil when unknown) lets it tell a file that was cut
// short from one that is damaged.
func decodeError(name, format string, cfg image.Config, err error, data []byte) error {
	what := "a " + format + " image"
	if format == "" {
		what = "an image"
	}
	if cfg.Width > 0 && cfg.Height > 0 {
		what = fmt.Sprintf("a %d×%d %s image", cfg.Width, cfg.Height, format)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || missingEnd(data, format) {
		return fmt.Errorf("image %s is truncated: it starts as %s but ends early (%v); "+
			"the download or copy did not finish — get the file again", name, what, err)
	}
	return fmt.Errorf("image %s is damaged: it starts as %s but cannot be decoded (%v); "+
		"open it in an image editor and save it again as PNG", name, what, err)
}

// missingEnd reports whether a file lacks the marker its format always ends with (PNG's IEND
// chunk, JPEG's EOI, GIF's trailer): the usual sign of a download or copy that stopped early,
// which some decoders report only as "not enough pixel data".
func missingEnd(data []byte, format string) bool {
	if data == nil {
		return false
	}
	switch format {
	case "png":
		return !bytes.HasSuffix(data, []byte("IEND\xaeB`\x82"))
	case "jpeg":
		return !bytes.HasSuffix(bytes.TrimRight(data, "\x00\r\n "), []byte{0xFF, 0xD9})
	case "gif":
		return !bytes.HasSuffix(data, []byte{0x3B})
	}
	return false
}
