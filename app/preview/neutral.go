package preview

import (
	"image"
	"image/color"
	"math"
)

// Neutral renders packed latents [h·w, Channels] without knowing the model's colours: one grey
// level per token, its coordinate along the frame's own first principal direction (power
// iteration on the tokens' covariance), stretched to the frame's range. It shows the composition
// forming and claims no colour; the window uses it until the model's calibration is ready.
// It returns nil when the slice does not hold h·w tokens.
func Neutral(x0 []float32, h, w int) image.Image {
	n := h * w
	if h <= 0 || w <= 0 || len(x0) != n*Channels {
		return nil
	}
	var mean [Channels]float64
	for t := range n {
		for c, v := range x0[t*Channels : (t+1)*Channels] {
			mean[c] += float64(v)
		}
	}
	for c := range mean {
		mean[c] /= float64(n)
	}
	// The direction starts along the all-ones vector, so its sign (which end is light) stays the
	// same from one step to the next.
	var dir [Channels]float64
	for c := range dir {
		dir[c] = 1 / math.Sqrt(Channels)
	}
	proj := make([]float64, n)
	for range 6 {
		var next [Channels]float64
		for t := range n {
			z := x0[t*Channels : (t+1)*Channels]
			var s float64
			for c, v := range z {
				s += (float64(v) - mean[c]) * dir[c]
			}
			for c, v := range z {
				next[c] += s * (float64(v) - mean[c])
			}
		}
		var norm, sum float64
		for _, v := range next {
			norm += v * v
			sum += v
		}
		if norm == 0 {
			break
		}
		norm = math.Sqrt(norm)
		if sum < 0 {
			norm = -norm
		}
		for c := range dir {
			dir[c] = next[c] / norm
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for t := range n {
		var s float64
		for c, v := range x0[t*Channels : (t+1)*Channels] {
			s += (float64(v) - mean[c]) * dir[c]
		}
		proj[t] = s
		lo, hi = min(lo, s), max(hi, s)
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for t, s := range proj {
		g := uint8(128)
		if hi > lo {
			g = uint8(math.Round(32 + 191*(s-lo)/(hi-lo)))
		}
		img.SetNRGBA(t%w, t/w, color.NRGBA{g, g, g, 255})
	}
	return img
}
