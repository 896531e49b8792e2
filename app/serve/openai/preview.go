package openai

import (
	"bytes"
	"image"
	"image/png"
)

// plainPNG is a preview's PNG, quickly (no metadata: it is not a picture yet).
func plainPNG(buf *bytes.Buffer, img image.Image) error {
	return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(buf, img)
}
