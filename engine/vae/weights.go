package vae

import (
	"fmt"
	"strings"

	"easel/engine/ml"
	"easel/engine/quant"
)

// The VAE's weights, bound by ml.Binder under "vae." + their diffusers names: each part is a
// struct whose `weight` tags are its names, nested as the modules are. Conv weights stay where
// the source keeps them (any codec the backend decodes, usually f16 or f32; a one-frame Conv3d
// kernel [out, in, 1, k, k] is viewed as [out, in, k, k]); biases and norm gains are uploaded as
// float32 rows. newWeights builds the skeleton the config calls for (how many blocks, which have
// a shortcut or a resampler), which the binder fills.

const namePrefix = "vae."

// conv is one convolution: its weight [out, in, k, k] in place and its bias as one row (nil for
// the fixed shortcut kernels).
type conv struct {
	W    *quant.Tensor `weight:"weight"`
	Bias ml.Tensor     `weight:"bias"`
}

// rmsNorm is an RMS_norm's gain over the channels.
type rmsNorm struct {
	Gamma ml.Tensor `weight:"gamma"`
}

// weights is the whole autoencoder: post_quant_conv and the decoder, the encoder and quant_conv.
type weights struct {
	PostQuant conv    `weight:"post_quant_conv"`
	Decoder   decoder `weight:"decoder"`
	Encoder   encoder `weight:"encoder"`
	QuantConv conv    `weight:"quant_conv"`
}

// bindWeights binds the vae.* weights of src for the geometry cfg.
func bindWeights(b ml.Backend, src quant.Source, cfg *Config) (*weights, error) {
	w := &weights{}
	var err error
	if w.Decoder, err = newDecoder(cfg); err != nil {
		return nil, err
	}
	if w.Encoder, err = newEncoder(cfg); err != nil {
		return nil, err
	}
	binder := &ml.Binder{Src: src, B: b, Network: "vae", Shape: ml.ShapeMap(shapesFor(cfg)), UnitDimsView: true}
	if err := binder.Bind(w, namePrefix); err != nil {
		return nil, err
	}
	return w, nil
}

// newResBlock is a residual block from in to out channels: with a 1×1 shortcut convolution when
// the width changes.
func newResBlock(in, out int) resBlock {
	if in != out {
		return resBlock{Shortcut: &conv{}}
	}
	return resBlock{}
}

// shapesFor lists every vae.* tensor of a geometry with its diffusers shape (spec Appendix A): the
// binder checks the file against it, and a plan's dry run binds it without a file.
func shapesFor(cfg *Config) map[string][]int {
	shapes := map[string][]int{}
	conv := func(name string, in, out, k int) {
		shapes[namePrefix+name+".weight"] = []int{out, in, k, k}
		shapes[namePrefix+name+".bias"] = []int{out}
	}
	res := func(name string, in, out int) {
		shapes[namePrefix+name+".norm1.gamma"] = []int{in, 1, 1, 1}
		conv(name+".conv1", in, out, 3)
		shapes[namePrefix+name+".norm2.gamma"] = []int{out, 1, 1, 1}
		conv(name+".conv2", out, out, 3)
		if in != out {
			conv(name+".conv_shortcut", in, out, 1)
		}
	}
	mid := func(name string, c int) {
		res(name+".resnets.0", c, c)
		res(name+".resnets.1", c, c)
		shapes[namePrefix+name+".attentions.0.norm.gamma"] = []int{c, 1, 1}
		conv(name+".attentions.0.to_qkv", c, 3*c, 1)
		conv(name+".attentions.0.proj", c, c, 1)
	}
	d := cfg.DecoderDims()
	conv("post_quant_conv", cfg.ZDim, cfg.ZDim, 1)
	conv("decoder.conv_in", cfg.ZDim, d[0], 3)
	mid("decoder.mid_block", d[0])
	n := len(cfg.DimMult)
	for i := 0; i < n; i++ {
		for r := 0; r <= cfg.NumResBlocks; r++ {
			in := d[i+1]
			if r == 0 {
				in = d[i]
			}
			res(fmt.Sprintf("decoder.up_blocks.%d.resnets.%d", i, r), in, d[i+1])
		}
		if i < n-1 {
			conv(fmt.Sprintf("decoder.up_blocks.%d.upsampler.resample.1", i), d[i+1], d[i+1], 3)
		}
	}
	shapes[namePrefix+"decoder.norm_out.gamma"] = []int{d[n], 1, 1, 1}
	conv("decoder.conv_out", d[n], cfg.OutChannels, 3)
	e := cfg.EncoderDims()
	conv("encoder.conv_in", cfg.InChannels, e[0], 3)
	for i := 0; i < n; i++ {
		for r := 0; r < cfg.NumResBlocks; r++ {
			in := e[i+1]
			if r == 0 {
				in = e[i]
			}
			res(fmt.Sprintf("encoder.down_blocks.%d.resnets.%d", i, r), in, e[i+1])
		}
		if i < n-1 {
			conv(fmt.Sprintf("encoder.down_blocks.%d.downsampler.resample.1", i), e[i+1], e[i+1], 3)
		}
	}
	mid("encoder.mid_block", e[n])
	shapes[namePrefix+"encoder.norm_out.gamma"] = []int{e[n], 1, 1, 1}
	conv("encoder.conv_out", e[n], 2*cfg.ZDim, 3)
	conv("quant_conv", 2*cfg.ZDim, 2*cfg.ZDim, 1)
	return shapes
}

// fixedConv wraps a constant float32 kernel [out, in, k, k] as a convolution without bias.
func fixedConv(name string, w []float32, out, in, k int) (*conv, error) {
	shape := []int{out, in, k, k}
	payload, err := quant.Encode(quant.F32, shape, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &conv{W: &quant.Tensor{Name: name, DType: quant.F32, Shape: shape, Data: payload}}, nil
}

// name is the convolution's module name, for errors.
func (c *conv) name() string { return strings.TrimSuffix(c.W.Name, ".weight") }
