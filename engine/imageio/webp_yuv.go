package imageio

import "image"

// Lossy WebP stores limited-range BT.601 YCbCr ("studio swing", Y in 16…235), but
// golang.org/x/image/webp returns it as an *image.YCbCr, whose colour conversion is JPEG's
// full-range one and whose chroma is nearest-neighbour: colours come out about 12 levels off.
// webpYCbCrToNRGBA converts the planes the way libwebp's decoder does (dwebp, Pillow, browsers):
// "fancy" 4:2:0 chroma upsampling (weights 9-3-3-1, UpsampleRgbaLinePair in src/dsp/upsampling.c)
// and the 14-bit fixed-point VP8YuvToRgb of src/dsp/yuv.h. Alpha, if any, is stored separately and
// copied as is.
func webpYCbCrToNRGBA(img image.Image) (*image.NRGBA, bool) {
	var yc *image.YCbCr
	var alpha []uint8
	var alphaStride int
	switch s := img.(type) {
	case *image.YCbCr:
		yc = s
	case *image.NYCbCrA:
		yc, alpha, alphaStride = &s.YCbCr, s.A, s.AStride
	default:
		return nil, false
	}
	if yc.SubsampleRatio != image.YCbCrSubsampleRatio420 || yc.Rect.Min != (image.Point{}) {
		return nil, false
	}
	w, h := yc.Rect.Dx(), yc.Rect.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	lumaRow := func(y int) []uint8 { return yc.Y[y*yc.YStride:] }
	chroma := func(plane []uint8, row int) []uint8 { return plane[row*yc.CStride:] }
	dst := func(y int) []uint8 { return out.Pix[y*out.Stride:] }

	// Row 0 uses chroma row 0 on its own; then each pair of rows (2k−1, 2k) lies between chroma
	// rows k−1 and k; an even height leaves the last row with the last chroma row on its own.
	webpUpsamplePair(lumaRow(0), nil, chroma(yc.Cb, 0), chroma(yc.Cr, 0), chroma(yc.Cb, 0), chroma(yc.Cr, 0), dst(0), nil, w)
	y := 0
	for ; y+2 < h; y += 2 {
		k := y/2 + 1
		webpUpsamplePair(lumaRow(y+1), lumaRow(y+2), chroma(yc.Cb, k-1), chroma(yc.Cr, k-1),
			chroma(yc.Cb, k), chroma(yc.Cr, k), dst(y+1), dst(y+2), w)
	}
	if h%2 == 0 && h > 1 {
		k := h/2 - 1
		webpUpsamplePair(lumaRow(h-1), nil, chroma(yc.Cb, k), chroma(yc.Cr, k), chroma(yc.Cb, k), chroma(yc.Cr, k), dst(h-1), nil, w)
	}
	for y := 0; y < h; y++ {
		row := dst(y)
		for x := 0; x < w; x++ {
			a := uint8(255)
			if alpha != nil {
				a = alpha[y*alphaStride+x]
			}
			row[4*x+3] = a
		}
	}
	return out, true
}

// webpUpsamplePair is libwebp's UPSAMPLE_FUNC: two luma rows (bottom may be nil) with the chroma
// rows above (top) and below (cur) them, each output pixel's chroma a 9-3-3-1 blend with
// libwebp's exact rounding.
func webpUpsamplePair(topY, bottomY, topU, topV, curU, curV, topDst, bottomDst []uint8, n int) {
	put := func(dst []uint8, x int, y uint8, u, v uint32) {
		dst[4*x], dst[4*x+1], dst[4*x+2] = webpYUVToRGB(int(y), int(u), int(v))
	}
	last := (n - 1) >> 1
	tlU, tlV, lU, lV := uint32(topU[0]), uint32(topV[0]), uint32(curU[0]), uint32(curV[0])
	put(topDst, 0, topY[0], (3*tlU+lU+2)>>2, (3*tlV+lV+2)>>2)
	if bottomY != nil {
		put(bottomDst, 0, bottomY[0], (3*lU+tlU+2)>>2, (3*lV+tlV+2)>>2)
	}
	for x := 1; x <= last; x++ {
		tU, tV, cU, cV := uint32(topU[x]), uint32(topV[x]), uint32(curU[x]), uint32(curV[x])
		avgU, avgV := tlU+tU+lU+cU+8, tlV+tV+lV+cV+8
		d12U, d12V := (avgU+2*(tU+lU))>>3, (avgV+2*(tV+lV))>>3
		d03U, d03V := (avgU+2*(tlU+cU))>>3, (avgV+2*(tlV+cV))>>3
		put(topDst, 2*x-1, topY[2*x-1], (d12U+tlU)>>1, (d12V+tlV)>>1)
		put(topDst, 2*x, topY[2*x], (d03U+tU)>>1, (d03V+tV)>>1)
		if bottomY != nil {
			put(bottomDst, 2*x-1, bottomY[2*x-1], (d03U+lU)>>1, (d03V+lV)>>1)
			put(bottomDst, 2*x, bottomY[2*x], (d12U+cU)>>1, (d12V+cV)>>1)
		}
		tlU, tlV, lU, lV = tU, tV, cU, cV
	}
	if n&1 == 0 {
		put(topDst, n-1, topY[n-1], (3*tlU+lU+2)>>2, (3*tlV+lV+2)>>2)
		if bottomY != nil {
			put(bottomDst, n-1, bottomY[n-1], (3*lU+tlU+2)>>2, (3*lV+tlV+2)>>2)
		}
	}
}

// webpYUVToRGB is libwebp's VP8YuvToRgb (src/dsp/yuv.h).
func webpYUVToRGB(y, u, v int) (r, g, b uint8) {
	multHi := func(v, coeff int) int { return (v * coeff) >> 8 }
	clip8 := func(v int) uint8 {
		const mask = 256<<6 - 1
		if v&^mask == 0 {
			return uint8(v >> 6)
		}
		if v < 0 {
			return 0
		}
		return 255
	}
	return clip8(multHi(y, 19077) + multHi(v, 26149) - 14234),
		clip8(multHi(y, 19077) - multHi(u, 6419) - multHi(v, 13320) + 8708),
		clip8(multHi(y, 19077) + multHi(u, 33050) - 17685)
}
