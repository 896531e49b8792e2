package memplan

import (
	"easel/engine/pipeline"
	"easel/engine/vae"
)

// sharpWorking is the sharp preview's decode, counted in the denoiser's stage: while the denoiser
// runs, a second VAE on its own CPU backend decodes the step's x0 averaged down
// (pipeline.SharpGrid) in one piece, on the Go heap with its headroom, whichever backend runs
// the denoiser. engine/vae's dry run counts it, as the preview itself plans its cost.
func sharpWorking(g Geometry, p Plan) int64 {
	_, _, cfg := g.configs()
	s := cfg.Scale()
	h, w := pipeline.SharpGrid(p.Height/s, p.Width/s)
	return heapHeadroom * remember(planKey{cfg: cfg, op: "sharp", h: h, w: w}, func() int64 {
		plan, err := vae.PlanDecodeFor(cfg, h, w)
		if err != nil {
			return decodePeak(h, w, 0)
		}
		return plan.PeakActivationBytes
	})
}
