package imagefile

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/png"
)

// The private chunks that hold a start image and its mask (see the package comment): ancillary,
// private, safe to copy.
const (
	chunkInit = "eaIn"
	chunkMask = "eaMk"
)

// maxEmbedded bounds an embedded image's chunk when reading (a 4096² RGBA PNG is at most 64 MiB).
const maxEmbedded = 80 << 20

// embeddedChunks are the chunks holding s's start image and mask, each a PNG file of its own.
func embeddedChunks(s *Settings) ([]chunk, error) {
	type embed struct {
		typ string
		img image.Image
	}
	var todo []embed
	if s.InitImage != nil {
		todo = append(todo, embed{chunkInit, s.InitImage})
	}
	if s.MaskImage != nil {
		todo = append(todo, embed{chunkMask, s.MaskImage})
	}
	var out []chunk
	for _, e := range todo {
		var b bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, e.img); err != nil {
			return nil, fmt.Errorf("encoding the embedded %s: %w", e.typ, err)
		}
		out = append(out, chunk{e.typ, b.Bytes()})
	}
	return out, nil
}

// readEmbedded decodes a start image or mask chunk into s.
func readEmbedded(s *Settings, typ string, data []byte) error {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the embedded %s image cannot be decoded: %v", typ, err)
	}
	b := img.Bounds()
	switch typ {
	case chunkInit:
		n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(n, n.Rect, img, b.Min, draw.Src)
		s.InitImage = n
	case chunkMask:
		g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(g, g.Rect, img, b.Min, draw.Src)
		s.MaskImage = g
	}
	return nil
}
