package openai

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/HugoSmits86/nativewebp"

	"easel/app/imagefile"
	"easel/app/serve/render"
)

// encode writes a picture in the job's format: PNG with the app's metadata (RGB unless the
// background is transparent), JPEG at output_compression as its quality, WebP lossless
// (nativewebp: output_compression does not apply).
func encode(p render.Picture, j *job) ([]byte, error) {
	return encodeImage(p.Image, p.Settings, j)
}

func encodeImage(img image.Image, set *imagefile.Settings, j *job) ([]byte, error) {
	if !j.transparent {
		img = render.Opaque(img)
	}
	var buf bytes.Buffer
	var err error
	switch j.format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: max(1, j.compression)})
	case "webp":
		err = nativewebp.Encode(&buf, img, nil)
	default:
		if set != nil {
			err = imagefile.Encode(&buf, img, set)
		} else {
			err = plainPNG(&buf, img)
		}
	}
	return buf.Bytes(), err
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// plainPNG is a preview's PNG, quickly (no metadata: it is not a picture yet).
func plainPNG(buf *bytes.Buffer, img image.Image) error {
	return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(buf, img)
}
