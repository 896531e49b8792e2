package cpu

import (
	"fmt"

	"easel/engine/ml"
)

// The learned upscalers' ops (engine/upscale): two activations and the pixel (un)shuffle.

// LeakyReLU is dst = x where x ≥ 0, else slope·x. dst may be x. Class ClassAct.
func (b *Backend) LeakyReLU(dst, x ml.Tensor, slope float32) error {
	return b.unary("LeakyReLU", dst, x, func(v float32) float32 {
		if v >= 0 {
			return v
		}
		return slope * v
	})
}

// PReLU is dst[c, y, x] = x where x ≥ 0, else slope[c]·x, for x [C, H, W] and slope one row of C.
// dst may be x. Class ClassAct.
func (b *Backend) PReLU(dst, x, slope ml.Tensor) error {
	const op = "PReLU"
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cs, err := host(op, "slope", slope)
	if err != nil {
		return err
	}
	if len(cx.shape) != 3 || len(cd.data) != len(cx.data) || len(cs.data) != cx.shape[0] {
		return fmt.Errorf("cpu.%s: input %v, slope %v, destination %v: want [C, H, W], C slopes and the input's size", op, cx.shape, cs.shape, cd.shape)
	}
	plane := cx.shape[1] * cx.shape[2]
	defer b.track(ml.ClassAct, 0)()
	parallelRows(cx.shape[0], 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a := cs.data[c]
			src, out := cx.data[c*plane:(c+1)*plane], cd.data[c*plane:(c+1)*plane]
			for i, v := range src {
				if v < 0 {
					v *= a
				}
				out[i] = v
			}
		}
	})
	return nil
}

// PixelShuffle is dst[c, y·r + i, x·r + j] = x[c·r² + i·r + j, y, x] for x [C·r², H, W] and dst
// [C, r·H, r·W] (PyTorch's pixel_shuffle). Class ClassCopy.
func (b *Backend) PixelShuffle(dst, x ml.Tensor, r int) error {
	return b.shuffle("PixelShuffle", dst, x, r, false)
}

// PixelUnshuffle is the inverse: dst [C·r², H, W] from x [C, r·H, r·W] (pixel_unshuffle).
func (b *Backend) PixelUnshuffle(dst, x ml.Tensor, r int) error {
	return b.shuffle("PixelUnshuffle", dst, x, r, true)
}

// shuffle moves elements between the large [C, rH, rW] and the small [C·r², H, W] layout.
func (b *Backend) shuffle(op string, dst, x ml.Tensor, r int, unshuffle bool) error {
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	large, small := cd, cx
	if unshuffle {
		large, small = cx, cd
	}
	if r < 1 || len(large.shape) != 3 || len(small.shape) != 3 {
		return fmt.Errorf("cpu.%s: input %v, destination %v, factor %d: want [C, H, W] tensors", op, cx.shape, cd.shape, r)
	}
	C, H, W := large.shape[0], large.shape[1]/r, large.shape[2]/r
	if large.shape[1] != H*r || large.shape[2] != W*r || small.shape[0] != C*r*r || small.shape[1] != H || small.shape[2] != W {
		return fmt.Errorf("cpu.%s: input %v, destination %v do not differ by a pixel shuffle of %d", op, cx.shape, cd.shape, r)
	}
	defer b.track(ml.ClassCopy, 0)()
	parallelRows(C*H*r, 8, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			c, Y := row/(H*r), row%(H*r)
			y, i := Y/r, Y%r
			lrow := large.data[(c*H*r+Y)*W*r:][:W*r]
			for X := range lrow {
				s := ((c*r*r+i*r+X%r)*H+y)*W + X/r
				if unshuffle {
					small.data[s] = lrow[X]
				} else {
					lrow[X] = small.data[s]
				}
			}
		}
	})
	return nil
}
