package metalops

import (
	"fmt"

	"easel/engine/ml"
	"easel/kernels"
	"easel/kernels/device"
)

// The learned upscalers' ops (engine/upscale): vae_elt's LeakyReLU and PReLU, and vae_shuffle.

// LeakyReLU is dst = x where x ≥ 0, else slope·x.
func (b *Backend) LeakyReLU(dst, x ml.Tensor, slope float32) error {
	return b.unary("LeakyReLU", kernels.EltLeakyReLU, dst, x, slope)
}

// PReLU is dst[c, y, x] = x where x ≥ 0, else slope[c]·x, for x [C, H, W].
func (b *Backend) PReLU(dst, x, slope ml.Tensor) error {
	d, a, s, _, pixels, err := b.perChannel("PReLU", "slope", dst, x, slope)
	if err != nil {
		return err
	}
	n := a.n()
	prm := kernels.EltParams{N: uint32(n), BN: uint32(pixels), Op: kernels.EltPReLU}
	g, t := kernels.ElementGrid(n)
	return dispatch(b, b.pipes.elt, ml.ClassAct, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		s.bind(enc, 1)
		d.bind(enc, 2)
		return 3
	})
}

// PixelShuffle is dst[c, y·r + i, x·r + j] = x[c·r² + i·r + j, y, x].
func (b *Backend) PixelShuffle(dst, x ml.Tensor, r int) error {
	return b.shuffle("PixelShuffle", dst, x, r, false)
}

// PixelUnshuffle is PixelShuffle's inverse.
func (b *Backend) PixelUnshuffle(dst, x ml.Tensor, r int) error {
	return b.shuffle("PixelUnshuffle", dst, x, r, true)
}

func (b *Backend) shuffle(name string, dst, x ml.Tensor, r int, unshuffle bool) error {
	d, err := b.own(name, dst)
	if err != nil {
		return err
	}
	a, err := b.own(name, x)
	if err != nil {
		return err
	}
	large, small := d, a
	if unshuffle {
		large, small = a, d
	}
	if r < 1 || len(large.shape) != 3 || len(small.shape) != 3 {
		return fmt.Errorf("metalops %s: %v into %v by %d: want [C, H, W] tensors", name, a.shape, d.shape, r)
	}
	c, h, w := large.shape[0], large.shape[1]/r, large.shape[2]/r
	if large.shape[1] != h*r || large.shape[2] != w*r || small.shape[0] != c*r*r || small.shape[1] != h || small.shape[2] != w {
		return fmt.Errorf("metalops %s: %v and %v do not differ by a pixel shuffle of %d", name, a.shape, d.shape, r)
	}
	prm := kernels.ShuffleParams{C: uint32(c), H: uint32(h), W: uint32(w), R: uint32(r)}
	if unshuffle {
		prm.Unshuffle = 1
	}
	g, t := kernels.ElementGrid(large.n())
	return dispatch(b, b.pipes.shuffle, ml.ClassCopy, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		d.bind(enc, 1)
		return 2
	})
}
