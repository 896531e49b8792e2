package vae

import (
	"context"
	"fmt"

	"easel/engine/ml"
)

// encoder is the encoder of spec §8.4 and quant_conv: conv_in, one down block per dim_mult entry
// (num_res_blocks residual blocks, then stride-2 downsampling except at the last, plus the
// AvgDown3D shortcut), the mid block, norm_out, SiLU, conv_out (to 2·z_dim) and quant_conv.
type encoder struct {
	convIn    *conv
	downs     []*downBlock
	mid       *midBlock
	normOut   ml.Tensor
	convOut   *conv
	quantConv *conv
}

type downBlock struct {
	resnets  []*resBlock
	down     *downsample // nil at the last stage
	shortcut *avgDown
}

func loadEncoder(l *loader, cfg *Config) (*encoder, error) {
	dims := cfg.EncoderDims()
	e := &encoder{}
	var err error
	if e.convIn, err = l.conv("encoder.conv_in", cfg.InChannels, dims[0], 3); err != nil {
		return nil, err
	}
	stages := len(cfg.DimMult)
	for i := 0; i < stages; i++ {
		in, out := dims[i], dims[i+1]
		name := fmt.Sprintf("encoder.down_blocks.%d", i)
		d := &downBlock{}
		for r := 0; r < cfg.NumResBlocks; r++ {
			rin := out
			if r == 0 {
				rin = in
			}
			rb, err := loadResBlock(l, fmt.Sprintf("%s.resnets.%d", name, r), rin, out)
			if err != nil {
				return nil, err
			}
			d.resnets = append(d.resnets, rb)
		}
		ft, fs := 1, 1
		if i < stages-1 {
			c, err := l.conv(name+".downsampler.resample.1", out, out, 3)
			if err != nil {
				return nil, err
			}
			d.down = &downsample{conv: c}
			fs = 2
			if cfg.TemporalDownsample[i] {
				ft = 2
			}
		}
		if d.shortcut, err = newAvgDown(name+".avg_shortcut", in, out, ft, fs); err != nil {
			return nil, err
		}
		e.downs = append(e.downs, d)
	}
	top := dims[stages]
	if e.mid, err = loadMidBlock(l, "encoder.mid_block", top); err != nil {
		return nil, err
	}
	if e.normOut, err = l.vector("encoder.norm_out.gamma", top); err != nil {
		return nil, err
	}
	if e.convOut, err = l.conv("encoder.conv_out", top, 2*cfg.ZDim, 3); err != nil {
		return nil, err
	}
	if e.quantConv, err = l.conv("quant_conv", 2*cfg.ZDim, 2*cfg.ZDim, 1); err != nil {
		return nil, err
	}
	return e, nil
}

// forward maps an image [in_channels, H, W] to the posterior moments [2·z_dim, H/16, W/16]
// (mean first, then log-variance). img is left for the caller to free.
func (e *encoder) forward(ctx context.Context, o ops, img ml.Tensor) (ml.Tensor, error) {
	x, err := o.same(img, e.convIn)
	if err != nil {
		return nil, err
	}
	o.traced("encoder.conv_in", x)
	var steps []step
	for i, d := range e.downs {
		steps = append(steps, step{fmt.Sprintf("encoder.down_blocks.%d", i), func(x ml.Tensor) (ml.Tensor, error) { return d.forward(o, x) }})
	}
	steps = append(steps,
		step{"encoder.mid_block", func(x ml.Tensor) (ml.Tensor, error) { return e.mid.forward(o, x) }},
		step{"encoder.conv_out", func(x ml.Tensor) (ml.Tensor, error) {
			a, err := o.normAct(x, e.normOut)
			if err != nil {
				return nil, err
			}
			defer o.b.Free(a)
			return o.same(a, e.convOut)
		}},
		step{"quant_conv", func(x ml.Tensor) (ml.Tensor, error) { return o.same(x, e.quantConv) }},
	)
	return runSteps(ctx, o, x, steps)
}

func (d *downBlock) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	h, err := runResBlocks(o, x, d.resnets)
	if err != nil {
		return nil, err
	}
	if d.down != nil {
		next, err := d.down.forward(o, h)
		o.b.Free(h)
		if err != nil {
			return nil, err
		}
		h = next
	}
	skip, owned, err := d.shortcut.forward(o, x)
	if err != nil {
		o.b.Free(h)
		return nil, err
	}
	if owned {
		defer o.b.Free(skip)
	}
	if err := o.b.Add(h, h, skip); err != nil {
		o.b.Free(h)
		return nil, fmt.Errorf("AvgDown3D shortcut: %v", err)
	}
	return h, nil
}
