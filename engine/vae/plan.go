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
	return planEncode(m.cfg, H, W, nil)
}

// PlanEncodeTiled is the cost of EncodeTiled of an H×W image on this model's backend.
func (m *Model) PlanEncodeTiled(H, W int, tiling Tiling) (Plan, error) {
	return planEncode(m.cfg, H, W, &tiling)
}

// PlanEncodeTiledFor is PlanEncodeFor in tiles (EncodeTiled): app/memplan and vaemetal plan the
// tiled encode of a large start image with it.
func PlanEncodeTiledFor(cfg *Config, H, W int, tiling Tiling) (Plan, error) {
	return planEncode(cfg, H, W, &tiling)
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
	return eachTile(ctx, t, z.H, z.W, decodeTile(z, m.decodeRaw), nil)
}

func planEncode(cfg *Config, H, W int, tiling *Tiling) (Plan, error) {
	m, dry, base, err := dryModel(cfg)
	if err != nil {
		return Plan{}, err
	}
	img := &Image{C: cfg.InChannels, H: H, W: W, Pix: make([]float32, cfg.InChannels*H*W)}
	if tiling == nil {
		_, _, err = m.Encode(context.Background(), img)
	} else {
		err = m.encodeTilesOnly(context.Background(), img, *tiling)
	}
	if err != nil {
		return Plan{}, fmt.Errorf("vae plan: %v", err)
	}
	return dry.plan(base), nil
}

// encodeTilesOnly is EncodeTiled's work on the backend — every tile's encode, in its order —
// without the blend on the host, which a plan does not count.
func (m *Model) encodeTilesOnly(ctx context.Context, img *Image, t Tiling) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := m.checkImage(img); err != nil {
		return err
	}
	s := m.cfg.Scale()
	return eachTile(ctx, t, img.H/s, img.W/s, encodeTile(img, s, m.encodeRaw), nil)
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

// tileCandidates are the tile sides ChooseTiling and ChooseEncodeTiling try, largest first, each with a quarter of it
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
	return chooseTiles(h, w, budget, func(t *Tiling) (Plan, error) { return planDecode(cfg, h, w, t) },
		fmt.Sprintf("decoding %d×%d latents", h, w))
}

// ChooseEncodeTiling picks how to encode an H×W image within budget bytes of activations, as
// ChooseTiling does for a decode: nil (one piece, exact: Encode) when that fits, else the largest
// candidate tiling (on the latent grid, for EncodeTiled) that fits. It returns the chosen plan,
// or an error naming the smallest need when nothing fits.
func (m *Model) ChooseEncodeTiling(H, W int, budget int64) (*Tiling, Plan, error) {
	return chooseEncodeTiling(m.cfg, H, W, budget)
}

// ChooseEncodeTilingFor is ChooseEncodeTiling for a model of geometry cfg, from the config alone
// (app/memplan predicts with it).
func ChooseEncodeTilingFor(cfg *Config, H, W int, budget int64) (*Tiling, Plan, error) {
	return chooseEncodeTiling(cfg, H, W, budget)
}

func chooseEncodeTiling(cfg *Config, H, W int, budget int64) (*Tiling, Plan, error) {
	s := cfg.Scale()
	return chooseTiles(H/s, W/s, budget, func(t *Tiling) (Plan, error) { return planEncode(cfg, H, W, t) },
		fmt.Sprintf("encoding a %d×%d image", W, H))
}

// chooseTiles is the choice over an h×w latent grid of a network whose cost plan gives (tiling
// nil: in one piece): one piece when it fits the budget, else the largest candidate tile that
// does. what names the work in the error.
func chooseTiles(h, w int, budget int64, plan func(*Tiling) (Plan, error), what string) (*Tiling, Plan, error) {
	p, err := plan(nil)
	if err != nil || p.PeakActivationBytes <= budget {
		return nil, p, err
	}
	for _, side := range tileCandidates {
		if side >= max(h, w) {
			continue
		}
		t := &Tiling{Tile: side, Overlap: max(4, side/4)}
		if p, err = plan(t); err != nil {
			return nil, Plan{}, err
		}
		if p.PeakActivationBytes <= budget {
			return t, p, nil
		}
	}
	return nil, p, fmt.Errorf("vae: %s needs %.0f MB of activations even in %d-latent tiles; the budget is %.0f MB",
		what, float64(p.PeakActivationBytes)/(1<<20), tileCandidates[len(tileCandidates)-1], float64(budget)/(1<<20))
}
