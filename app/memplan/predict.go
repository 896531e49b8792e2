package memplan

import (
	"fmt"

	"easel/engine/qwen3vl"
)

// Plan is one generation's shape, as the window knows it before a run.
type Plan struct {
	Width, Height int      // output pixels
	Conditions    [][2]int // each condition image's encoded size (width, height), in pixels
	PromptBytes   int      // the prompt's length (text rows are estimated from it)
	CFG           bool     // two programs (positive and negative prompt)
}

// Prediction is the predicted peak, by component.
type Prediction struct {
	Weights     int64   // all networks' mapped weights
	PrefixKV    []int64 // per program, positive first
	Activations int64   // the denoiser's largest float32 working set
	VAE         int64   // the VAE's activation peak (decode tile, or a condition-image encode)
	Peak        int64   // weights + prefix K/V + the larger of the two activation sets
	Budget      int64
}

// The counting rules (engine/pipeline/memory.go, docs/BENCHMARKS.md §VAE).
const (
	attentionScoreBudget = 16 << 20 // the CPU backend's score scratch per attention call
	vaeFloatsPerLatent2  = 203_000  // the decoder's live floats per latent² of tile at its peak
	vaeTile              = 32       // vae.DefaultTiling's tile side in latents
	templateRows         = 40       // the prompt template's text rows around the prompt
	bytesPerTextToken    = 4        // BPE averages about four bytes of English per token
	// Reserve is the share of the budget kept for the system and other apps: a plan fits when
	// its peak stays under (1 − Reserve) of the budget.
	Reserve = 0.10
)

// TextRows estimates the prompt's text rows in the denoiser's prefix.
func TextRows(promptBytes int) int { return templateRows + promptBytes/bytesPerTextToken }

// Predict counts a plan against a model geometry and a budget.
func Predict(g Geometry, p Plan, budget int64) Prediction {
	var out Prediction
	for _, w := range g.Weights {
		out.Weights += w.Bytes
	}
	prefix := TextRows(p.PromptBytes)
	vae := decodePeak(p.Width/16, p.Height/16)
	for _, c := range p.Conditions {
		prefix += (c[0] / 16) * (c[1] / 16)
		vae = max(vae, encodePeak(c[0]/16, c[1]/16))
	}
	kv := int64(prefix) * int64(g.Layers) * 2 * int64(g.Hidden) * 4
	out.PrefixKV = []int64{kv}
	if p.CFG {
		out.PrefixKV = append(out.PrefixKV, kv) // the negative prompt is shorter; counted alike
	}
	target := (p.Width / 16) * (p.Height / 16)
	rows := max(prefix, target)
	out.Activations = int64(rows)*int64(6*g.Hidden+2*g.MLPHidden)*4 + attentionScoreBudget
	out.VAE = vae
	out.Peak = out.Weights + out.KVBytes() + max(out.Activations, out.VAE)
	out.Budget = budget
	return out
}

// KVBytes is the sum of the programs' caches.
func (p Prediction) KVBytes() int64 {
	var n int64
	for _, b := range p.PrefixKV {
		n += b
	}
	return n
}

// Usable is the part of the budget a plan may use.
func (p Prediction) Usable() int64 { return int64(float64(p.Budget) * (1 - Reserve)) }

// Fits reports whether the peak stays within the usable budget (an unknown budget fits).
func (p Prediction) Fits() bool { return p.Budget <= 0 || p.Peak <= p.Usable() }

// decodePeak is the tiled decoder's activation bytes for an h×w latent grid.
func decodePeak(h, w int) int64 {
	return int64(vaeFloatsPerLatent2) * int64(min(h, vaeTile)) * int64(min(w, vaeTile)) * 4
}

// encodePeak is the untiled encoder's activation bytes for a condition image's latent grid
// (1,552 MB counted for 1024², i.e. about 95k floats per latent²).
func encodePeak(h, w int) int64 { return int64(h) * int64(w) * 95_000 * 4 }

// LargestFitting is the largest size with the plan's aspect ratio (multiples of 32, at least
// 256 on the short side) whose prediction fits, or ok false when even that does not.
func LargestFitting(g Geometry, p Plan, budget int64) (width, height int, ok bool) {
	if p.Width <= 0 || p.Height <= 0 {
		return 0, 0, false
	}
	ratio := float64(p.Width) / float64(p.Height)
	area := float64(p.Width) * float64(p.Height)
	for area >= 256*256 {
		w, h := qwen3vl.CalculateDimensions(area, ratio)
		if w >= 32 && h >= 32 && (w < p.Width || h < p.Height) {
			q := p
			q.Width, q.Height = w, h
			if Predict(g, q, budget).Fits() {
				return w, h, true
			}
		}
		area *= 0.92
	}
	return 0, 0, false
}

// Explain says in one sentence why a prediction does not fit.
func (p Prediction) Explain() string {
	return fmt.Sprintf("needs about %s at its peak but only %s of %s can be used", GB(p.Peak), GB(p.Usable()), GB(p.Budget))
}

// GB formats bytes for people: "12.4 GB", "840 MB".
func GB(b int64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	}
	return fmt.Sprintf("%d MB", (b+500_000)/1_000_000)
}
