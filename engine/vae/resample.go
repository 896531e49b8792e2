package vae

import "easel/engine/ml"

// upsample is the spatial part of the decoder's upsample2d/upsample3d (spec §8.3): nearest-exact ×2
// (plain duplication at ×2), then a 3×3 convolution (resample.1).
type upsample struct{ conv *conv }

func (u *upsample) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	c, h, w := chw(x)
	up, err := o.b.New(c, 2*h, 2*w)
	if err != nil {
		return nil, err
	}
	defer o.b.Free(up)
	if err := o.b.UpsampleNearest(up, x, 2); err != nil {
		return nil, err
	}
	return o.same(up, u.conv)
}

// downsample is the spatial part of the encoder's downsample2d/downsample3d: zero padding of one
// pixel on the right and bottom, then a 3×3 convolution with stride 2 (resample.1).
type downsample struct{ conv *conv }

func (d *downsample) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	return o.conv(x, d.conv, ml.ConvSpec{Stride: 2, PadBottom: 1, PadRight: 1})
}
