package preview

import (
	"context"
	"errors"
	"fmt"
	"math"

	"easel/engine/vae"
)

// Sample is one latent token and the mean of the 16×16 patch the real VAE decodes it to (RGBA in
// [−1, 1]).
type Sample struct {
	Z    [Channels]float32
	RGBA [4]float64
}

// Decoder is the part of a VAE the fit needs (*vae.Model is one).
type Decoder interface {
	Decode(ctx context.Context, zn *vae.Latents) (*vae.Image, error)
}

// PatchSamples decodes packed normalized latents [h·w, Channels] with the real decoder and pairs
// each token with its decoded patch's mean. It also returns the decode.
func PatchSamples(ctx context.Context, d Decoder, tokens []float32, h, w int) ([]Sample, *vae.Image, error) {
	if len(tokens) != h*w*Channels {
		return nil, nil, fmt.Errorf("preview fit: %d values are not a %d×%d grid of %d-channel tokens", len(tokens), h, w, Channels)
	}
	zn, err := vae.FromTokens(tokens, h, w)
	if err != nil {
		return nil, nil, err
	}
	img, err := d.Decode(ctx, zn)
	if err != nil {
		return nil, nil, fmt.Errorf("preview fit: decoding a %d×%d grid: %w", h, w, err)
	}
	if img.C != 4 || img.H != 16*h || img.W != 16*w {
		return nil, nil, fmt.Errorf("preview fit: the decoder made a %d-channel %d×%d image from a %d×%d grid; want RGBA at 16×", img.C, img.W, img.H, w, h)
	}
	out := make([]Sample, h*w)
	for t := range out {
		copy(out[t].Z[:], tokens[t*Channels:(t+1)*Channels])
		y0, x0 := 16*(t/w), 16*(t%w)
		for c := 0; c < 4; c++ {
			var s float64
			for y := y0; y < y0+16; y++ {
				row := img.Pix[c*img.H*img.W+y*img.W:]
				for x := x0; x < x0+16; x++ {
					s += float64(row[x])
				}
			}
			out[t].RGBA[c] = s / 256
		}
	}
	return out, img, nil
}

// Fit is the least-squares affine map from tokens to patch means, with a small ridge term
// (ridge·I on the normal equations, bias not penalised) to keep it stable when channels are
// nearly collinear.
func Fit(samples []Sample, ridge float64) (*Projection, error) {
	const n = Channels + 1 // the bias is the last unknown
	if len(samples) < n {
		return nil, fmt.Errorf("preview fit: %d samples for %d unknowns per channel: decode more latents", len(samples), n)
	}
	var ata [n][n]float64
	var aty [n][4]float64
	var row [n]float64
	for _, s := range samples {
		for c, v := range s.Z {
			row[c] = float64(v)
		}
		row[Channels] = 1
		for i := range n {
			for j := i; j < n; j++ {
				ata[i][j] += row[i] * row[j]
			}
			for k := range 4 {
				aty[i][k] += row[i] * s.RGBA[k]
			}
		}
	}
	for i := range n {
		for j := 0; j < i; j++ {
			ata[i][j] = ata[j][i]
		}
		if i < Channels {
			ata[i][i] += ridge * float64(len(samples))
		}
	}
	x, err := solveSPD(ata, aty)
	if err != nil {
		return nil, err
	}
	p := &Projection{}
	for k := range 4 {
		for c := range Channels {
			p.M[k][c] = x[c][k]
		}
		p.B[k] = x[Channels][k]
	}
	return p, nil
}

// solveSPD solves a·x = b for a symmetric positive definite a by Cholesky factorisation.
func solveSPD(a [Channels + 1][Channels + 1]float64, b [Channels + 1][4]float64) ([Channels + 1][4]float64, error) {
	const n = Channels + 1
	var l [n][n]float64
	for i := range n {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if s <= 0 {
					return b, errors.New("preview fit: the normal equations are singular (the samples do not vary in every channel): add random latents")
				}
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	var y, x [n][4]float64
	for k := range 4 {
		for i := range n {
			s := b[i][k]
			for j := 0; j < i; j++ {
				s -= l[i][j] * y[j][k]
			}
			y[i][k] = s / l[i][i]
		}
		for i := n - 1; i >= 0; i-- {
			s := y[i][k]
			for j := i + 1; j < n; j++ {
				s -= l[j][i] * x[j][k]
			}
			x[i][k] = s / l[i][i]
		}
	}
	return x, nil
}

// PatchError is the RMS and largest error of the projection on samples, in 8-bit levels.
func (p *Projection) PatchError(samples []Sample) (rms, worst float64) {
	var sum float64
	for _, s := range samples {
		got := p.Apply(s.Z[:])
		for k := range 4 {
			d := math.Abs(clampUnit(got[k])-clampUnit(s.RGBA[k])) * 127.5
			sum += d * d
			worst = max(worst, d)
		}
	}
	return math.Sqrt(sum / float64(4*len(samples))), worst
}

// PixelError is the RMS difference, in 8-bit levels, between the preview of tokens upscaled 16×
// (nearest) and the real decode img of the same tokens.
func (p *Projection) PixelError(tokens []float32, h, w int, img *vae.Image) float64 {
	var sum float64
	for y := range img.H {
		for x := range img.W {
			t := (y/16)*w + x/16
			v := p.Apply(tokens[t*Channels : (t+1)*Channels])
			for c := range 4 {
				d := (clampUnit(v[c]) - float64(img.Pix[c*img.H*img.W+y*img.W+x])) * 127.5
				sum += d * d
			}
		}
	}
	return math.Sqrt(sum / float64(4*img.H*img.W))
}

func clampUnit(v float64) float64 { return min(max(v, -1), 1) }
