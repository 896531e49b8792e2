package condimage

import (
	"image"
	"math"
	"runtime"

	"easel/engine/mmapfile"
)

// The reference resizes condition images with Pillow (Image.resize, LANCZOS, reducing_gap=None);
// BICUBIC serves the rare second resize of the vision copy (see PrepareConditionImage). This file is a
// port of Pillow's libImaging/Resample.c 8-bit path, so that resized pixels match the reference
// bit for bit rather than merely look alike:
//
//   - separable: a horizontal pass over only the source rows the vertical pass will read, into an
//     8-bit intermediate image, then a vertical pass (each pass skipped when that axis keeps its
//     size; an unchanged size returns a copy, as Image.resize does);
//   - per output pixel, taps from round(center − support) to round(center + support), where the
//     filter's support is widened by the downscale factor (filterscale = max(1, in/out)) and its
//     argument divided by it; weights normalised to sum 1, then converted to 22-bit fixed point
//     (rounded half away from zero);
//   - sums start at ½ in fixed point and are clipped to [0, 255] after every pass;
//   - RGBA is resized premultiplied (Image.resize converts RGBA → RGBa → RGBA): premultiply with
//     Pillow's rounded c·a/255, unpremultiply with truncating 255·c/a (kept as is for a = 0, 255).

// pillowPrecisionBits is Resample.c's PRECISION_BITS (32 − 8 − 2).
const pillowPrecisionBits = 32 - 8 - 2

// ResampleFilter is a Pillow resampling filter: its kernel and the kernel's support at scale 1.
type ResampleFilter struct {
	Name    string
	Support float64
	Kernel  func(x float64) float64
}

// LanczosFilter is Pillow's LANCZOS (Resampling.LANCZOS = 1): a sinc windowed by sinc(x/3), support 3.
var LanczosFilter = ResampleFilter{Name: "lanczos", Support: 3, Kernel: pillowLanczos}

// BicubicFilter is Pillow's BICUBIC (Resampling.BICUBIC = 3): Keys' cubic with a = −0.5, support 2.
var BicubicFilter = ResampleFilter{Name: "bicubic", Support: 2, Kernel: pillowBicubic}

func pillowSinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

func pillowLanczos(x float64) float64 {
	if -3 <= x && x < 3 {
		return pillowSinc(x) * pillowSinc(x/3)
	}
	return 0
}

func pillowBicubic(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return ((a+2)*x-(a+3))*x*x + 1
	}
	if x < 2 {
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

// pillowCoeffs are one axis's taps: for output index i, taps k[i*ksize : i*ksize+count[i]] apply to
// input indices first[i], first[i]+1, ….
type pillowCoeffs struct {
	ksize        int
	first, count []int
	k            []int32
}

// pillowPrecomputeCoeffs is Resample.c's precompute_coeffs followed by normalize_coeffs_8bpc, for
// the whole input range [0, inSize) mapped onto outSize pixels.
func pillowPrecomputeCoeffs(inSize, outSize int, f ResampleFilter) pillowCoeffs {
	scale := float64(inSize) / float64(outSize)
	filterscale := max(scale, 1.0)
	support := f.Support * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := pillowCoeffs{ksize: ksize, first: make([]int, outSize), count: make([]int, outSize),
		k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	ss := 1.0 / filterscale
	for xx := 0; xx < outSize; xx++ {
		center := (float64(xx) + 0.5) * scale
		xmin := max(int(center-support+0.5), 0) // C's (int) truncates toward zero, as Go's does
		xmax := min(int(center+support+0.5), inSize) - xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			w[x] = f.Kernel((float64(x+xmin) - center + 0.5) * ss)
			ww += w[x]
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				w[x] /= ww
			}
			v := w[x] * (1 << pillowPrecisionBits)
			if w[x] < 0 {
				c.k[xx*ksize+x] = int32(-0.5 + v)
			} else {
				c.k[xx*ksize+x] = int32(0.5 + v)
			}
		}
		c.first[xx], c.count[xx] = xmin, max(xmax, 0)
	}
	return c
}

// pillowClip8 is Resample.c's clip8: a fixed-point sum back to a byte.
func pillowClip8(v int) uint8 {
	if v >= 1<<pillowPrecisionBits<<8 {
		return 255
	}
	if v <= 0 {
		return 0
	}
	return uint8(v >> pillowPrecisionBits)
}

// pillowMulDiv255 is Pillow's MULDIV255: a·b/255 rounded, in integer arithmetic.
func pillowMulDiv255(a, b uint8) uint8 {
	t := uint32(a)*uint32(b) + 128
	return uint8(((t >> 8) + t) >> 8)
}

// ResizePillow resizes an RGBA image to width×height exactly as Pillow's
// Image.resize((width, height), filter, reducing_gap=None) does on an RGBA image (premultiplied
// alpha; see the top of this file). The source is not modified.
func ResizePillow(src *image.NRGBA, width, height int, f ResampleFilter) *image.NRGBA {
	return resizePillow(src, width, height, f, true)
}

// resizePillow is ResizePillow; with premultiply false it is Pillow's resize of an RGB image
// (the fourth byte is resampled like the others and then set opaque).
func resizePillow(src *image.NRGBA, width, height int, f ResampleFilter, premultiply bool) *image.NRGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	in := packedNRGBA(src)
	if sw == width && sh == height {
		return in
	}
	if !premultiply {
		out := resampleRGBA8(in.Pix, sw, sh, width, height, f)
		for i := 3; i < len(out); i += 4 {
			out[i] = 255
		}
		return &image.NRGBA{Pix: out, Stride: 4 * width, Rect: image.Rect(0, 0, width, height)}
	}
	premultiplied := make([]uint8, len(in.Pix))
	for i := 0; i < len(in.Pix); i += 4 {
		a := in.Pix[i+3]
		premultiplied[i+0] = pillowMulDiv255(in.Pix[i+0], a)
		premultiplied[i+1] = pillowMulDiv255(in.Pix[i+1], a)
		premultiplied[i+2] = pillowMulDiv255(in.Pix[i+2], a)
		premultiplied[i+3] = a
	}
	out := resampleRGBA8(premultiplied, sw, sh, width, height, f)
	for i := 0; i < len(out); i += 4 {
		a := int(out[i+3])
		if a == 0 || a == 255 {
			continue
		}
		for c := 0; c < 3; c++ {
			out[i+c] = uint8(min(255*int(out[i+c])/a, 255))
		}
	}
	return &image.NRGBA{Pix: out, Stride: 4 * width, Rect: image.Rect(0, 0, width, height)}
}

// resampleRGBA8 is ImagingResampleInner for a 4-byte-per-pixel image held as packed rows. Rows
// are shared out over the CPUs; integer sums make the result independent of that.
func resampleRGBA8(pix []uint8, sw, sh, dw, dh int, f ResampleFilter) []uint8 {
	horiz := pillowPrecomputeCoeffs(sw, dw, f)
	vert := pillowPrecomputeCoeffs(sh, dh, f)
	needHorizontal, needVertical := dw != sw, dh != sh

	rowFirst := vert.first[0]
	rowLast := vert.first[dh-1] + vert.count[dh-1]
	w := sw
	if needHorizontal {
		// Only the source rows the vertical pass reads; shift its bounds accordingly.
		for i := range vert.first {
			vert.first[i] -= rowFirst
		}
		h := rowLast - rowFirst
		tmp := make([]uint8, 4*dw*h)
		parallelRows(h, func(y int) {
			pillowHorizontalRow(tmp[4*dw*y:4*dw*(y+1)], pix[4*sw*(y+rowFirst):4*sw*(y+rowFirst+1)], horiz)
		})
		pix, w = tmp, dw
	}
	if !needVertical {
		return pix
	}
	out := make([]uint8, 4*w*dh)
	parallelRows(dh, func(yy int) {
		acc := make([]int, 4*w)
		for i := range acc {
			acc[i] = 1 << (pillowPrecisionBits - 1)
		}
		first := vert.first[yy]
		for y, k := range vert.k[yy*vert.ksize : yy*vert.ksize+vert.count[yy]] {
			ky := int(k)
			for i, v := range pix[4*w*(first+y) : 4*w*(first+y+1)] {
				acc[i] += int(v) * ky
			}
		}
		dst := out[4*w*yy : 4*w*(yy+1)]
		for i, v := range acc {
			dst[i] = pillowClip8(v)
		}
	})
	return out
}

// pillowHorizontalRow resamples one row of 4-byte pixels along x.
func pillowHorizontalRow(dst, src []uint8, c pillowCoeffs) {
	for xx := 0; xx < len(dst)/4; xx++ {
		first, count := c.first[xx], c.count[xx]
		seg := src[4*first : 4*(first+count)]
		const half = 1 << (pillowPrecisionBits - 1)
		s0, s1, s2, s3 := half, half, half, half
		for x, k := range c.k[xx*c.ksize : xx*c.ksize+count] {
			p := seg[4*x : 4*x+4 : 4*x+4]
			kx := int(k)
			s0 += int(p[0]) * kx
			s1 += int(p[1]) * kx
			s2 += int(p[2]) * kx
			s3 += int(p[3]) * kx
		}
		d := dst[4*xx : 4*xx+4 : 4*xx+4]
		d[0], d[1], d[2], d[3] = pillowClip8(s0), pillowClip8(s1), pillowClip8(s2), pillowClip8(s3)
	}
}

// parallelRows calls row(y) for y in [0, n), in contiguous bands on up to GOMAXPROCS goroutines.
func parallelRows(n int, row func(y int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for y := 0; y < n; y++ {
			row(y)
		}
		return
	}
	var g mmapfile.Group // a panic in a band comes back to the caller
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		g.Go(func() {
			for y := lo; y < hi; y++ {
				row(y)
			}
		})
	}
	g.Wait()
}

// packedNRGBA is a copy of img whose rows are contiguous and whose origin is (0, 0).
func packedNRGBA(img *image.NRGBA) *image.NRGBA {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		copy(out.Pix[4*w*y:4*w*(y+1)], img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):])
	}
	return out
}
