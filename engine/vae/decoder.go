package vae

import (
	"fmt"

	"easel/engine/ml"
)

// decoder is the decoder of spec §8.5, after post_quant_conv (Model.decodeRaw): conv_in, the mid
// block, one up block per dim_mult entry (num_res_blocks+1 residual blocks, then ×2 upsampling and
// the DupUp3D shortcut except at the last), norm_out, SiLU and conv_out.
type decoder struct {
	ConvIn  conv      `weight:"conv_in"`
	Mid     midBlock  `weight:"mid_block"`
	Ups     []upBlock `weight:"up_blocks"`
	NormOut rmsNorm   `weight:"norm_out"`
	ConvOut conv      `weight:"conv_out"`
}

type upBlock struct {
	Resnets  []resBlock `weight:"resnets"`
	Up       *conv      `weight:"upsampler.resample.1"` // nil at the last stage
	shortcut *dupUp     // nil at the last stage
}

// newDecoder is the decoder's skeleton for cfg: its blocks and their fixed shortcuts, for the
// binder to fill.
func newDecoder(cfg *Config) (decoder, error) {
	dims := cfg.DecoderDims()
	tUp := cfg.temporalUpsample()
	stages := len(cfg.DimMult)
	d := decoder{Mid: newMidBlock(dims[0]), Ups: make([]upBlock, stages)}
	for i := range d.Ups {
		in, out := dims[i], dims[i+1]
		u := &d.Ups[i]
		u.Resnets = make([]resBlock, cfg.NumResBlocks+1)
		for r := range u.Resnets {
			rin := out
			if r == 0 {
				rin = in
			}
			u.Resnets[r] = newResBlock(rin, out)
		}
		if i < stages-1 {
			u.Up = &conv{}
			ft := 1
			if tUp[i] {
				ft = 2
			}
			var err error
			if u.shortcut, err = newDupUp(fmt.Sprintf("decoder.up_blocks.%d.avg_shortcut", i), in, out, ft, 2); err != nil {
				return decoder{}, err
			}
		}
	}
	return d, nil
}

// decodeStages are the decoder's named stages, from de-normalized latents z [z_dim, h, w] to the
// image [out_channels, 16h, 16w] before the clamp.
func (w *weights) decodeStages() []stage {
	d := &w.Decoder
	s := []stage{
		{"post_quant_conv", w.PostQuant.same},
		{"decoder.conv_in", d.ConvIn.same},
		{"decoder.mid_block", d.Mid.forward},
	}
	for i := range d.Ups {
		s = append(s, stage{fmt.Sprintf("decoder.up_blocks.%d", i), d.Ups[i].forward})
	}
	return append(s, stage{"decoder.conv_out", func(e *ml.Scope, x ml.Tensor) ml.Tensor { return chain(e, x, d.NormOut.act, d.ConvOut.same) }})
}

func (u *upBlock) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	h := chain(e, x, resnets(u.Resnets)...)
	if u.Up == nil {
		return h
	}
	out := u.Up.upsample(e, h)
	e.Free(h)
	u.shortcut.addTo(e, out, x)
	return out
}
