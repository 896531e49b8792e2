package imagefile

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"sort"
	"strconv"
)

// UpscaleSettings record an upscale of a finished image: the upscaler's name (a learned
// upscaler's file name, or "Lanczos"), its network ("RRDBNet ×4, 64 features, 23 blocks"), and the
// result's size and factor.
type UpscaleSettings struct {
	Upscaler string  `json:"upscaler"`
	Network  string  `json:"network,omitempty"`
	Factor   float64 `json:"factor"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
}

// fields are the A1111 extras tab's parameters fields.
func (u *UpscaleSettings) fields() [][2]string {
	return [][2]string{
		{"Postprocess upscale by", strconv.FormatFloat(u.Factor, 'g', 4, 64)},
		{"Postprocess upscaler", u.Upscaler},
	}
}

// EncodeUpscaled writes an upscaled picture as a PNG that keeps the source's recipe and names the
// upscaler: an Easel source's settings with Upscale set (its start image and mask chunks kept); a
// source of another tool keeps its "parameters" text with the extras fields added, and its other
// text chunks; a source without metadata (src nil) gets the extras fields alone.
func EncodeUpscaled(w io.Writer, img image.Image, src *Metadata, up UpscaleSettings) error {
	if src != nil && src.Settings != nil {
		s := *src.Settings
		s.Upscale = &up
		return Encode(w, img, &s)
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img); err != nil {
		return fmt.Errorf("encoding the PNG: %w", err)
	}
	data := buf.Bytes()
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	if len(data) < ihdrEnd || !bytes.Equal(data[:8], pngSignature) || string(data[12:16]) != "IHDR" {
		return errors.New("encoding the PNG: the encoder did not start with a header chunk")
	}
	params := ""
	var other []string
	if src != nil {
		params = src.Parameters
		for k := range src.Text {
			if k != KeyParameters && k != KeyEasel {
				other = append(other, k)
			}
		}
		sort.Strings(other)
	}
	var extras bytes.Buffer
	for i, f := range up.fields() {
		if i > 0 {
			extras.WriteString(", ")
		}
		extras.WriteString(f[0] + ": " + quoteValue(f[1]))
	}
	switch {
	case params == "":
		params = extras.String()
	default:
		params += ", " + extras.String()
	}
	var chunks bytes.Buffer
	writeChunk(&chunks, textChunk(KeyParameters, params))
	for _, k := range other {
		writeChunk(&chunks, textChunk(k, src.Text[k]))
	}
	for _, part := range [][]byte{data[:ihdrEnd], chunks.Bytes(), data[ihdrEnd:]} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// WriteUpscaled is EncodeUpscaled into path, atomically (as WriteFile).
func WriteUpscaled(path string, img image.Image, src *Metadata, up UpscaleSettings) error {
	return writeAtomic(path, func(w io.Writer) error { return EncodeUpscaled(w, img, src, up) })
}
