package memplan

import (
	"fmt"

	"easel/engine/upscale"
	"easel/engine/upscale/upscalemetal"
)

// cpuConvScratch is the CPU backend's convolution scratch at its largest: the im2col chunk
// (engine/ml/cpu convColumnBudget, 8 Mi floats) and the weight tiles.
const cpuConvScratch = 4 * (8 << 20) * 5 / 4

// UpscalePrediction is the memory of one pass of a learned upscaler over a W×H picture.
type UpscalePrediction struct {
	Tiling   upscale.Tiling
	Weights  int64 // the network's float32 weights (twice on the CPU while the file is read)
	Working  int64 // the largest tile's activations: device buffers on Metal; on the CPU with the Go heap's headroom and the convolution's scratch
	Pictures int64 // the input as float planes, the 8-bit result and one tile's output, on the host
	Peak     int64 // Process + Weights + Working + Pictures
	Budget   int64
}

// Fits says whether the peak stays under the usable part of the budget (0: unknown, it fits).
func (p UpscalePrediction) Fits() bool {
	return p.Budget <= 0 || p.Peak <= int64(float64(p.Budget)*(1-Reserve))
}

// Explain is one line for the memory panel.
func (p UpscalePrediction) Explain() string {
	how := "in one piece"
	if p.Tiling.Tile > 0 {
		how = fmt.Sprintf("in %d² tiles", p.Tiling.Tile)
	}
	return fmt.Sprintf("upscaling %s: %s GB predicted (weights %s, tile %s, pictures %s)", how, GB(p.Peak), GB(p.Weights), GB(p.Working), GB(p.Pictures))
}

// PredictUpscale counts a pass of the network cfg over a W×H picture in tiling t, on the Metal
// device when metal is set, against budget bytes (0: unknown).
func PredictUpscale(cfg *upscale.Config, W, H int, t upscale.Tiling, metal bool, budget int64) UpscalePrediction {
	plan := upscale.PlanFor(cfg, W, H, t)
	p := UpscalePrediction{Tiling: t, Pictures: plan.Host, Budget: budget}
	if metal {
		p.Weights = plan.Weights
		p.Working = upscalemetal.PlanFor(cfg, W, H, t)
	} else {
		p.Weights = 2 * plan.Weights
		p.Working = heapHeadroom*plan.Activations + cpuConvScratch
	}
	p.Peak = Process + p.Weights + p.Working + p.Pictures
	return p
}
