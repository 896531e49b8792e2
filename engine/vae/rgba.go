package vae

import (
	"fmt"
	"image"
	"math"
)

// UnitRange maps a decoded value in [-1, 1] to [0, 1] as the pipeline's postprocessing does
// (image·0.5 + 0.5, clamped), in float32.
func UnitRange(v float32) float32 { return min(max(v*0.5+0.5, 0), 1) }

// To8Bit is numpy's (x·255).round().astype(uint8) for x in [0, 1]: the product in float32, rounded
// half to even (so 0.5/255 steps land on even codes, e.g. 127.5 → 128 and 126.5 → 126).
func To8Bit(x float32) uint8 { return uint8(math.RoundToEven(float64(x * 255))) }

// ToRGBA is the diffusers postprocessing with output_type "pil" (spec §9): every decoded value is
// mapped to [0, 1] by UnitRange and to 8 bits by To8Bit. Four channels are R, G, B, A
// (non-premultiplied, like PIL's "RGBA"); a three-channel image gets an opaque alpha.
func ToRGBA(img *Image) (*image.NRGBA, error) {
	if img == nil || (img.C != 4 && img.C != 3) || img.H <= 0 || img.W <= 0 || len(img.Pix) != img.C*img.H*img.W {
		if img == nil {
			return nil, fmt.Errorf("vae.ToRGBA: the image is nil")
		}
		return nil, fmt.Errorf("vae.ToRGBA: a %d×%d×%d image with %d values; want 3 or 4 channel planes of H·W values", img.C, img.H, img.W, len(img.Pix))
	}
	out := image.NewNRGBA(image.Rect(0, 0, img.W, img.H))
	n := img.H * img.W
	for p := 0; p < n; p++ {
		px := out.Pix[4*p : 4*p+4]
		px[3] = 255
		for c := 0; c < img.C; c++ {
			px[c] = To8Bit(UnitRange(img.Pix[c*n+p]))
		}
	}
	return out, nil
}

// FromNRGBA is the VAE input of an 8-bit RGBA image already resized to the encode size
// (VaeImageProcessor.preprocess after its resize, spec §3.1 step 4): x = v/255 in float32, then
// 2x − 1, as four channel planes R, G, B, A. Alpha is kept as a channel (non-premultiplied).
func FromNRGBA(img *image.NRGBA) *Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := &Image{C: 4, H: h, W: w, Pix: make([]float32, 4*h*w)}
	n := h * w
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			for c := 0; c < 4; c++ {
				v := float32(row[4*x+c]) / 255
				out.Pix[c*n+y*w+x] = 2*v - 1
			}
		}
	}
	return out
}
