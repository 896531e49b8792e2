package vae

import (
	"fmt"

	"easel/engine/ml"
)

// encoder is the encoder of spec §8.4: conv_in, one down block per dim_mult entry (num_res_blocks
// residual blocks, then stride-2 downsampling except at the last, plus the AvgDown3D shortcut),
// the mid block, norm_out, SiLU and conv_out (to 2·z_dim). quant_conv follows it (Model.encode).
type encoder struct {
	ConvIn  conv        `weight:"conv_in"`
	Downs   []downBlock `weight:"down_blocks"`
	Mid     midBlock    `weight:"mid_block"`
	NormOut rmsNorm     `weight:"norm_out"`
	ConvOut conv        `weight:"conv_out"`
}

type downBlock struct {
	Resnets  []resBlock `weight:"resnets"`
	Down     *conv      `weight:"downsampler.resample.1"` // nil at the last stage
	shortcut *avgDown
}

// newEncoder is the encoder's skeleton for cfg: its blocks and their fixed shortcuts, for the
// binder to fill.
func newEncoder(cfg *Config) (encoder, error) {
	dims := cfg.EncoderDims()
	stages := len(cfg.DimMult)
	e := encoder{Downs: make([]downBlock, stages), Mid: newMidBlock(dims[stages])}
	for i := range e.Downs {
		in, out := dims[i], dims[i+1]
		d := &e.Downs[i]
		d.Resnets = make([]resBlock, cfg.NumResBlocks)
		for r := range d.Resnets {
			rin := out
			if r == 0 {
				rin = in
			}
			d.Resnets[r] = newResBlock(rin, out)
		}
		ft, fs := 1, 1
		if i < stages-1 {
			d.Down = &conv{}
			fs = 2
			if cfg.TemporalDownsample[i] {
				ft = 2
			}
		}
		var err error
		if d.shortcut, err = newAvgDown(fmt.Sprintf("encoder.down_blocks.%d.avg_shortcut", i), in, out, ft, fs); err != nil {
			return encoder{}, err
		}
	}
	return e, nil
}

// stages are the encoder's named stages, from an image [in_channels, H, W] to the posterior
// moments [2·z_dim, H/16, W/16] (mean first, then log-variance) after quant_conv.
func (w *weights) encodeStages() []stage {
	e := &w.Encoder
	s := []stage{{"encoder.conv_in", e.ConvIn.same}}
	for i := range e.Downs {
		s = append(s, stage{fmt.Sprintf("encoder.down_blocks.%d", i), e.Downs[i].forward})
	}
	return append(s,
		stage{"encoder.mid_block", e.Mid.forward},
		stage{"encoder.conv_out", func(s *ml.Scope, x ml.Tensor) ml.Tensor { return chain(s, x, e.NormOut.act, e.ConvOut.same) }},
		stage{"quant_conv", w.QuantConv.same},
	)
}

func (d *downBlock) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	steps := resnets(d.Resnets)
	if d.Down != nil {
		steps = append(steps, d.Down.downsample)
	}
	h := chain(e, x, steps...)
	skip := d.shortcut.forward(e, x)
	e.Do(e.B.Add(h, h, skip))
	if skip != x {
		e.Free(skip)
	}
	return h
}
