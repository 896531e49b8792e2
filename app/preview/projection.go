package preview

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"

	previewassets "easel/assets/preview"
)

// Channels is the latent width the projection reads.
const Channels = 64

// Projection is an affine map from a latent token to RGBA in [−1, 1]: out[k] = Σ_c M[k][c]·z[c] + B[k].
type Projection struct {
	// Model says which model's decodes the map was fitted on.
	Model string `json:"model"`
	// Source says how it was fitted (the command and the data).
	Source string               `json:"source"`
	M      [4][Channels]float64 `json:"matrix"`
	B      [4]float64           `json:"bias"`
	// Error is the fit's error against the real decode, in 8-bit levels.
	Error FitError `json:"error"`
	// Calibrated is true for a projection fitted from the opened model's own VAE (Calibrate);
	// Seconds is how long that took.
	Calibrated bool    `json:"calibrated,omitempty"`
	Seconds    float64 `json:"seconds,omitempty"`
}

// FitError is the projection's error against the real VAE's decode (patch means), in 8-bit
// levels (0–255) per channel, on the fitting data and on latents held out of the fit.
type FitError struct {
	TrainRMS     float64 `json:"train_rms"`
	HeldOutRMS   float64 `json:"held_out_rms"`
	HeldOutMax   float64 `json:"held_out_max"`
	HeldOutNotes string  `json:"held_out_notes"`
	// PixelRMS is the preview (one pixel per latent, upscaled by 16 nearest) against every pixel
	// of the real decode on the held-out latents: what an artist sees, texture included.
	PixelRMS float64 `json:"pixel_rms"`
}

// TinyFile is the projection fitted on the golden tiny model (a randomly initialised VAE: its
// colours mean nothing, it proves the machinery); RealFile is the one for the published model.
const (
	TinyFile = "qwen-image-2.1-tiny.json"
	RealFile = "qwen-image-2.1.json"
)

// Load reads a stored projection by file name.
func Load(name string) (*Projection, error) {
	b, err := previewassets.Files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("preview projection %s is not among the stored ones (assets/preview): %w", name, err)
	}
	return Parse(b)
}

// Default is the projection for the published model when one has been fitted, else the tiny
// model's (whose colours are arbitrary but still show the composition forming).
func Default() (*Projection, error) {
	if p, err := Load(RealFile); err == nil {
		return p, nil
	}
	return Load(TinyFile)
}

// Parse reads a projection from JSON and checks its numbers.
func Parse(b []byte) (*Projection, error) {
	var p Projection
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("preview projection is not valid JSON: %v", err)
	}
	for k := range p.M {
		for _, v := range p.M[k] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("preview projection for %s has a non-finite coefficient: fit it again", p.Model)
			}
		}
	}
	return &p, nil
}

// Apply maps one token (Channels values) to RGBA in [−1, 1] (not clamped).
func (p *Projection) Apply(z []float32) [4]float64 {
	var out [4]float64
	for k := range out {
		s := p.B[k]
		for c, v := range z[:Channels] {
			s += p.M[k][c] * float64(v)
		}
		out[k] = s
	}
	return out
}

// Image renders packed latents [h·w, Channels] as an h×w RGBA picture, one pixel per token.
// It returns nil when the slice does not hold h·w tokens.
func (p *Projection) Image(x0 []float32, h, w int) image.Image {
	if h <= 0 || w <= 0 || len(x0) != h*w*Channels {
		return nil
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for t := 0; t < h*w; t++ {
		v := p.Apply(x0[t*Channels : (t+1)*Channels])
		img.SetNRGBA(t%w, t/w, color.NRGBA{to8(v[0]), to8(v[1]), to8(v[2]), to8(v[3])})
	}
	return img
}

// to8 maps [−1, 1] to 0…255 as the pipeline's output conversion does.
func to8(v float64) uint8 {
	u := min(max(v*0.5+0.5, 0), 1)
	return uint8(math.Round(u * 255))
}
