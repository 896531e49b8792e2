package imageio

import "image"

// Go's JPEG decoder returns subsampled chroma as is, and drawing it repeats each chroma sample
// over its 2×2 (4:2:0) or 2×1 (4:2:2) block. libjpeg-turbo — what Pillow, and so the reference,
// decodes with — interpolates instead ("fancy upsampling", jdsample.c): on a 4:2:0 photo with
// sharp colour edges the two differ by up to ~70 levels. jpegYCbCrToNRGBA upsamples like
// libjpeg-turbo (h2v1_fancy_upsample, h2v2_fancy_upsample with the edge rows repeated, plain
// repetition when the chroma is 2 samples wide or less) and converts with libjpeg's rounded
// fixed-point YCbCr → RGB (jdcolor.c). What remains is the inverse DCT's rounding (±3 levels).
func jpegYCbCrToNRGBA(img image.Image) (*image.NRGBA, bool) {
	yc, ok := img.(*image.YCbCr)
	if !ok || yc.Rect.Min != (image.Point{}) {
		return nil, false
	}
	w, h := yc.Rect.Dx(), yc.Rect.Dy()
	cw, ch := (w+1)/2, (h+1)/2 // libjpeg's downsampled_width/height for 2× subsampling
	// chromaRow(plane, y) is plane's chroma for output row y at full width (at least w samples).
	var chromaRow func(plane []uint8, y int, out []uint8) []uint8
	switch yc.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		chromaRow = func(plane []uint8, y int, _ []uint8) []uint8 { return plane[y*yc.CStride : y*yc.CStride+w] }
	case image.YCbCrSubsampleRatio422:
		chromaRow = func(plane []uint8, y int, out []uint8) []uint8 {
			jpegUpsampleH2V1(plane[y*yc.CStride:y*yc.CStride+cw], out)
			return out
		}
	case image.YCbCrSubsampleRatio420:
		chromaRow = func(plane []uint8, y int, out []uint8) []uint8 {
			near := y / 2
			far := near - 1 // even rows lean on the chroma row above, odd rows on the one below
			if y%2 == 1 {
				far = near + 1
			}
			far = min(max(far, 0), ch-1) // libjpeg repeats the first and last chroma rows
			jpegUpsampleH2V2(plane[near*yc.CStride:near*yc.CStride+cw], plane[far*yc.CStride:far*yc.CStride+cw], out)
			return out
		}
	default:
		return nil, false
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	cbBuf, crBuf := make([]uint8, 2*cw), make([]uint8, 2*cw)
	for y := 0; y < h; y++ {
		luma := yc.Y[y*yc.YStride : y*yc.YStride+w]
		cb, cr := chromaRow(yc.Cb, y, cbBuf), chromaRow(yc.Cr, y, crBuf)
		row := out.Pix[y*out.Stride:]
		for x, yv := range luma {
			r, g, b := jpegYCbCrToRGB(yv, cb[x], cr[x])
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = r, g, b, 255
		}
	}
	return out, true
}

// jpegUpsampleH2V1 is libjpeg-turbo's h2v1_fancy_upsample (h2v1_upsample for ≤ 2 samples):
// each output sample ¾ of its nearer input and ¼ of the other, rounding alternately.
func jpegUpsampleH2V1(in, out []uint8) {
	n := len(in)
	if n <= 2 {
		for i, v := range in {
			out[2*i], out[2*i+1] = v, v
		}
		return
	}
	out[0] = in[0]
	out[1] = uint8((int(in[0])*3 + int(in[1]) + 2) >> 2)
	for i := 1; i < n-1; i++ {
		v := int(in[i]) * 3
		out[2*i] = uint8((v + int(in[i-1]) + 1) >> 2)
		out[2*i+1] = uint8((v + int(in[i+1]) + 2) >> 2)
	}
	out[2*n-2] = uint8((int(in[n-1])*3 + int(in[n-2]) + 1) >> 2)
	out[2*n-1] = in[n-1]
}

// jpegUpsampleH2V2 is one output row of libjpeg-turbo's h2v2_fancy_upsample (h2v2_upsample for
// ≤ 2 samples): near is the nearest chroma row, far the next nearest; weights 9/16, 3/16, 3/16, 1/16.
func jpegUpsampleH2V2(near, far, out []uint8) {
	n := len(near)
	if n <= 2 {
		for i, v := range near {
			out[2*i], out[2*i+1] = v, v
		}
		return
	}
	colsum := func(i int) int { return int(near[i])*3 + int(far[i]) }
	this, next := colsum(0), colsum(1)
	out[0] = uint8((this*4 + 8) >> 4)
	out[1] = uint8((this*3 + next + 7) >> 4)
	last := this
	this = next
	for i := 1; i < n-1; i++ {
		next = colsum(i + 1)
		out[2*i] = uint8((this*3 + last + 8) >> 4)
		out[2*i+1] = uint8((this*3 + next + 7) >> 4)
		last, this = this, next
	}
	out[2*n-2] = uint8((this*3 + last + 8) >> 4)
	out[2*n-1] = uint8((this*4 + 7) >> 4)
}

// jpegYCbCrToRGB is libjpeg's ycc_rgb_convert: 16-bit fixed point, each chroma term rounded.
func jpegYCbCrToRGB(y, cb, cr uint8) (r, g, b uint8) {
	const scaleBits, half = 16, 1 << 15
	fix := func(x float64) int { return int(x*(1<<scaleBits) + 0.5) }
	c, d := int(cb)-128, int(cr)-128
	clamp := func(v int) uint8 { return uint8(min(max(v, 0), 255)) }
	yy := int(y)
	return clamp(yy + (fix(1.40200)*d+half)>>scaleBits),
		clamp(yy + (-fix(0.34414)*c-fix(0.71414)*d+half)>>scaleBits),
		clamp(yy + (fix(1.77200)*c+half)>>scaleBits)
}
