package vae

import (
	"fmt"

	"easel/engine/latents"
)

// Latents is a latent grid on the host, channel-first: Data[c·H·W + y·W + x].
type Latents struct {
	C, H, W int
	Data    []float32
}

// Image is a decoded or to-be-encoded image on the host, channel-first (R, G, B, A planes):
// Pix[c·H·W + y·W + x], values in [-1, 1].
type Image struct {
	C, H, W int
	Pix     []float32
}

// FromTokens unpacks the denoiser's packed latents [h·w, C] (token y·w + x, channel last; spec §4
// _unpack_latents) into a channel-first grid [C, h, w].
func FromTokens(tokens []float32, h, w int) (*Latents, error) {
	if h <= 0 || w <= 0 || len(tokens) == 0 || len(tokens)%(h*w) != 0 {
		return nil, fmt.Errorf("vae: %d token values do not make a %d×%d grid of whole tokens", len(tokens), h, w)
	}
	c := len(tokens) / (h * w)
	data, err := latents.Unpack(tokens, c, h, w)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return &Latents{C: c, H: h, W: w, Data: data}, nil
}

// Tokens packs the grid as the denoiser's latents [H·W, C] (spec §4 _pack_latents; engine/latents),
// or nil when the grid's data does not hold C·H·W values.
func (l *Latents) Tokens() []float32 {
	out, err := latents.Pack(l.Data, l.C, l.H, l.W)
	if err != nil {
		return nil
	}
	return out
}

func (l *Latents) check(what string, channels int) error {
	if l == nil || l.C != channels || l.H <= 0 || l.W <= 0 || len(l.Data) != l.C*l.H*l.W {
		if l == nil {
			return fmt.Errorf("vae: %s latents are nil", what)
		}
		return fmt.Errorf("vae: %s latents are %d×%d×%d with %d values; the model needs %d channels and C·H·W values", what, l.C, l.H, l.W, len(l.Data), channels)
	}
	return nil
}

// Denormalize is z = z_n·std + mean per channel (the pipeline's step before vae.decode).
func (m *Model) Denormalize(zn *Latents) (*Latents, error) {
	if err := zn.check("normalized", m.cfg.ZDim); err != nil {
		return nil, err
	}
	return m.perChannel(zn, func(v float32, c int) float32 { return v*m.cfg.LatentsStd[c] + m.cfg.LatentsMean[c] }), nil
}

// Normalize is z_n = (z − mean)/std per channel (how condition latents enter the denoiser).
func (m *Model) Normalize(z *Latents) (*Latents, error) {
	if err := z.check("raw", m.cfg.ZDim); err != nil {
		return nil, err
	}
	return m.perChannel(z, func(v float32, c int) float32 { return (v - m.cfg.LatentsMean[c]) / m.cfg.LatentsStd[c] }), nil
}

func (m *Model) perChannel(l *Latents, f func(v float32, c int) float32) *Latents {
	out := &Latents{C: l.C, H: l.H, W: l.W, Data: make([]float32, len(l.Data))}
	n := l.H * l.W
	for i, v := range l.Data {
		out.Data[i] = f(v, i/n)
	}
	return out
}
