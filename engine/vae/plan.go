package vae

import (
	"context"
	"fmt"
	"strings"

	"easel/engine/quant"
)

// Plan is the cost of one decode or encode, counted by a dry run of this package's own code over
// a backend without arithmetic (so it is exact for this implementation, for any geometry, in
// milliseconds): the peak of backend tensor bytes alive at once — activations and the VAE's
// scratch tensors, not the weights (they stay in the model file's mapping) nor a backend's
// internal scratch — and the convolutions' floating-point operations.
type Plan struct {
	PeakActivationBytes int64
	ConvFLOPs           float64
	// AttnFLOPs is the mid-block attention's (QKᵀ and PV over every key).
	AttnFLOPs float64
	// ConvBytes and OtherBytes are the bytes the convolutions (f16 weights, float input and
	// output) and the other ops touch, each tensor once per op: the memory traffic if caches
	// catch the reuse inside an op.
	ConvBytes, OtherBytes float64
}

// PlanDecodeTiledFor is PlanDecodeFor in tiles: tools/metalplan plans the published decoder's
// tiled decodes with it.
func PlanDecodeTiledFor(cfg *Config, h, w int, tiling Tiling) (Plan, error) {
	return planDecode(cfg, h, w, &tiling)
}

// PlanDecode is the cost of Decode (tiling nil) or DecodeTiled of an h×w latent grid on this
// model's backend; the pipeline's memory ledger and its choice between the two read it.
func (m *Model) PlanDecode(h, w int, tiling *Tiling) (Plan, error) {
	return planDecode(m.cfg, h, w, tiling)
}

// PlanEncode is the cost of Encode of an H×W image on this model's backend.
func (m *Model) PlanEncode(H, W int) (Plan, error) {
	return planEncode(m.cfg, H, W)
}

// dryModel binds the geometry to a fresh dry backend; base is the bytes its biases and gains take.
func dryModel(cfg *Config) (m *Model, dry *dryBackend, base int64, err error) {
	dry = &dryBackend{}
	m, err = LoadWithConfig(dry, geometrySource{shapesFor(cfg)}, cfg)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("vae plan: %v", err)
	}
	return m, dry, dry.live, nil
}

func planDecode(cfg *Config, h, w int, tiling *Tiling) (Plan, error) {
	m, dry, base, err := dryModel(cfg)
	if err != nil {
		return Plan{}, err
	}
	zn := &Latents{C: cfg.ZDim, H: h, W: w, Data: make([]float32, cfg.ZDim*h*w)}
	if tiling == nil {
		_, err = m.Decode(context.Background(), zn)
	} else {
		err = m.decodeTilesOnly(context.Background(), zn, *tiling)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("vae plan: %v", err)
	}
	return dry.plan(base), nil
}

// decodeTilesOnly is DecodeTiled's work on the backend — every tile's decode, in its order —
// without the blend on the host, which a plan does not count (and which was most of a dry run's
// time at 2048²).
func (m *Model) decodeTilesOnly(ctx context.Context, zn *Latents, t Tiling) error {
	if err := t.check(); err != nil {
		return err
	}
	z, err := m.Denormalize(zn)
	if err != nil {
		return err
	}
	return eachTile(ctx, z, t, m.decodeRaw, nil)
}

func planEncode(cfg *Config, H, W int) (Plan, error) {
	m, dry, base, err := dryModel(cfg)
	if err != nil {
		return Plan{}, err
	}
	img := &Image{C: cfg.InChannels, H: H, W: W, Pix: make([]float32, cfg.InChannels*H*W)}
	if _, _, err := m.Encode(context.Background(), img); err != nil {
		return Plan{}, fmt.Errorf("vae plan: %v", err)
	}
	return dry.plan(base), nil
}

// plan is what the dry run counted, above base bytes of resident tensors.
func (b *dryBackend) plan(base int64) Plan {
	return Plan{PeakActivationBytes: b.peak - base, ConvFLOPs: b.convFlops, AttnFLOPs: b.attnFlops, ConvBytes: b.convBytes, OtherBytes: b.otherBytes}
}

// geometrySource serves every vae.* tensor of a geometry with its shape: conv weights without a
// payload (a dry run never reads them), biases and gains as f32 zeros.
type geometrySource struct{ shapes map[string][]int }

func (s geometrySource) Tensor(name string) (*quant.Tensor, error) {
	shape, ok := s.shapes[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %q in the geometry", name)
	}
	t := &quant.Tensor{Name: name, DType: quant.F32, Shape: shape}
	if !strings.HasSuffix(name, ".weight") {
		t.Data = make([]byte, 4*elements(shape))
	}
	return t, nil
}

// shapesFor lists every vae.* tensor of a geometry with its diffusers shape (spec Appendix A).
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

// tileCandidates are the tile sides ChooseTiling tries, largest first, each with a quarter of it
// (at least 4 latents) as overlap.
var tileCandidates = []int{64, 48, 40, 32, 24, 16, 12, 8}

// ChooseTiling picks how to decode an h×w grid within budget bytes of activations: nil (one
// piece, exact and cheapest) when that fits, else the largest candidate tiling that fits. It
// returns the chosen plan, or an error naming the smallest need when nothing fits.
func (m *Model) ChooseTiling(h, w int, budget int64) (*Tiling, Plan, error) {
	return chooseTiling(m.cfg, h, w, budget)
}

// ChooseTilingFor is ChooseTiling for a model of geometry cfg: the choice the pipeline makes, from
// the config alone (app/memplan predicts with it).
func ChooseTilingFor(cfg *Config, h, w int, budget int64) (*Tiling, Plan, error) {
	return chooseTiling(cfg, h, w, budget)
}

func chooseTiling(cfg *Config, h, w int, budget int64) (*Tiling, Plan, error) {
	plan, err := planDecode(cfg, h, w, nil)
	if err != nil || plan.PeakActivationBytes <= budget {
		return nil, plan, err
	}
	for _, side := range tileCandidates {
		if side >= max(h, w) {
			continue
		}
		t := &Tiling{Tile: side, Overlap: max(4, side/4)}
		if plan, err = planDecode(cfg, h, w, t); err != nil {
			return nil, Plan{}, err
		}
		if plan.PeakActivationBytes <= budget {
			return t, plan, nil
		}
	}
	return nil, plan, fmt.Errorf("vae: decoding %d×%d latents needs %.0f MB of activations even in %d-latent tiles; the budget is %.0f MB",
		h, w, float64(plan.PeakActivationBytes)/(1<<20), tileCandidates[len(tileCandidates)-1], float64(budget)/(1<<20))
}
