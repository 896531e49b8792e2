package vae

import "easel/engine/ml"

// upsample is the spatial part of the decoder's upsample2d/upsample3d (spec §8.3): nearest-exact ×2
// (plain duplication at ×2), then the 3×3 convolution c (resample.1).
func (c *conv) upsample(e *ml.Scope, x ml.Tensor) ml.Tensor {
	return chain(e, x, nearest2, c.same)
}

// nearest2 is the nearest ×2 upsample of x.
func nearest2(e *ml.Scope, x ml.Tensor) ml.Tensor {
	if e.Err() != nil {
		return nil
	}
	ch, h, w := chw(x)
	up := e.Temp(ch, 2*h, 2*w)
	e.Do(e.B.UpsampleNearest(up, x, 2))
	return up
}

// downsample is the spatial part of the encoder's downsample2d/downsample3d: zero padding of one
// pixel on the right and bottom, then the 3×3 convolution c with stride 2 (resample.1).
func (c *conv) downsample(e *ml.Scope, x ml.Tensor) ml.Tensor {
	return c.apply(e, x, ml.ConvSpec{Stride: 2, PadBottom: 1, PadRight: 1})
}
