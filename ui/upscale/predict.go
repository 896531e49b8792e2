package upscale

import (
	"math"

	"easel/app/memplan"
	"easel/app/upscalers"
	"easel/engine/upscale"
)

// Predict is the memory of upscaling a w×h picture to factor times its size with the network
// cfg, on Metal when metal is set, against budget bytes: its largest pass (the last, when the
// network's scale is applied more than once, as upscalers.Runner does), tiled as the runner
// tiles it.
func Predict(cfg *upscale.Config, w, h int, factor float64, metal bool, budget int64) memplan.UpscalePrediction {
	target := int(math.Round(float64(w) * factor))
	for pass, cw := 1, w*cfg.Scale; cfg.Scale > 1 && cw < target && pass < upscalers.MaxPasses; pass, cw = pass+1, cw*cfg.Scale {
		w, h = w*cfg.Scale, h*cfg.Scale
	}
	return memplan.PredictUpscale(cfg, w, h, upscale.ChooseTiling(cfg, w, h, upscale.DefaultBudget), metal, budget)
}
