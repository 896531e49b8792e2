package vae

import (
	"context"
	"fmt"

	"easel/engine/ml"
)

// decoder is post_quant_conv and the decoder of spec §8.5: conv_in, the mid block, one up block
// per dim_mult entry (num_res_blocks+1 residual blocks, then ×2 upsampling and the DupUp3D
// shortcut except at the last), norm_out, SiLU and conv_out.
type decoder struct {
	postQuant *conv
	convIn    *conv
	mid       *midBlock
	ups       []*upBlock
	normOut   ml.Tensor
	convOut   *conv
}

type upBlock struct {
	resnets  []*resBlock
	up       *upsample // nil at the last stage
	shortcut *dupUp    // nil at the last stage
}

func loadDecoder(l *loader, cfg *Config) (*decoder, error) {
	dims := cfg.DecoderDims()
	tUp := cfg.temporalUpsample()
	d := &decoder{}
	var err error
	if d.postQuant, err = l.conv("post_quant_conv", cfg.ZDim, cfg.ZDim, 1); err != nil {
		return nil, err
	}
	if d.convIn, err = l.conv("decoder.conv_in", cfg.ZDim, dims[0], 3); err != nil {
		return nil, err
	}
	if d.mid, err = loadMidBlock(l, "decoder.mid_block", dims[0]); err != nil {
		return nil, err
	}
	stages := len(cfg.DimMult)
	for i := 0; i < stages; i++ {
		in, out := dims[i], dims[i+1]
		name := fmt.Sprintf("decoder.up_blocks.%d", i)
		u := &upBlock{}
		for r := 0; r <= cfg.NumResBlocks; r++ {
			rin := out
			if r == 0 {
				rin = in
			}
			rb, err := loadResBlock(l, fmt.Sprintf("%s.resnets.%d", name, r), rin, out)
			if err != nil {
				return nil, err
			}
			u.resnets = append(u.resnets, rb)
		}
		if i < stages-1 {
			c, err := l.conv(name+".upsampler.resample.1", out, out, 3)
			if err != nil {
				return nil, err
			}
			u.up = &upsample{conv: c}
			ft := 1
			if tUp[i] {
				ft = 2
			}
			if u.shortcut, err = newDupUp(name+".avg_shortcut", in, out, ft, 2); err != nil {
				return nil, err
			}
		}
		d.ups = append(d.ups, u)
	}
	if d.normOut, err = l.vector("decoder.norm_out.gamma", dims[stages]); err != nil {
		return nil, err
	}
	if d.convOut, err = l.conv("decoder.conv_out", dims[stages], cfg.OutChannels, 3); err != nil {
		return nil, err
	}
	return d, nil
}

// forward maps de-normalized latents z [z_dim, h, w] to the image [out_channels, 16h, 16w]
// before the clamp. z is left for the caller to free.
func (d *decoder) forward(ctx context.Context, o ops, z ml.Tensor) (ml.Tensor, error) {
	x, err := o.same(z, d.postQuant)
	if err != nil {
		return nil, err
	}
	o.traced("post_quant_conv", x)
	steps := []step{
		{"decoder.conv_in", func(x ml.Tensor) (ml.Tensor, error) { return o.same(x, d.convIn) }},
		{"decoder.mid_block", func(x ml.Tensor) (ml.Tensor, error) { return d.mid.forward(o, x) }},
	}
	for i, u := range d.ups {
		steps = append(steps, step{fmt.Sprintf("decoder.up_blocks.%d", i), func(x ml.Tensor) (ml.Tensor, error) { return u.forward(o, x) }})
	}
	steps = append(steps, step{"decoder.conv_out", func(x ml.Tensor) (ml.Tensor, error) {
		a, err := o.normAct(x, d.normOut)
		if err != nil {
			return nil, err
		}
		defer o.b.Free(a)
		return o.same(a, d.convOut)
	}})
	return runSteps(ctx, o, x, steps)
}

func (u *upBlock) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	h, err := runResBlocks(o, x, u.resnets)
	if err != nil {
		return nil, err
	}
	if u.up == nil {
		return h, nil
	}
	up, err := u.up.forward(o, h)
	o.b.Free(h)
	if err != nil {
		return nil, err
	}
	if err := u.shortcut.addTo(o, up, x); err != nil {
		o.b.Free(up)
		return nil, err
	}
	return up, nil
}

// step is one named stage of a network; the names are the reference modules' (debug cases).
type step struct {
	name string
	run  func(ml.Tensor) (ml.Tensor, error)
}

// runSteps threads x through steps, freeing each intermediate (x included) once the next exists,
// and stops early when ctx is cancelled.
func runSteps(ctx context.Context, o ops, x ml.Tensor, steps []step) (ml.Tensor, error) {
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			o.b.Free(x)
			return nil, err
		}
		next, err := s.run(x)
		o.b.Free(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		o.traced(s.name, next)
		x = next
	}
	return x, nil
}
