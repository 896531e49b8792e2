package memplan

import "easel/engine/vae"

// cpuWorkingSets counts a plan's text-encoder, VAE-encoder and VAE-decoder stages on the CPU
// backend from the model's own configs (the published ones before a model is chosen): float32
// activations on the Go heap, with its headroom. The text encoder's are its live rows (the
// residual stream, its norm and o_proj's output, q and the attention output, k and v, the MLP's
// gate, up and down products) plus the dequantization tiles (256 rows of the widest projection
// per core, two cores counted) and the attention's score scratch, or the vision tower's per patch
// (its hidden state six times, its MLP twice) when that is larger; the VAE's are engine/vae's dry
// runs of the encodes and the decode, each in the tiling the pipeline picks against a quarter of
// the budget (engine/pipeline's vaeBudget).
func cpuWorkingSets(g Geometry, p Plan, textRows, patches int, budget int64) workingSets {
	tc, vc, cfg := g.configs()
	rowFloats := 3*tc.Hidden + 2*tc.Heads*tc.HeadDim + 2*tc.KVHeads*tc.HeadDim + 3*tc.Intermediate
	scratch := int64(2 * 256 * max(tc.Intermediate, tc.Hidden) * 4)
	text := int64(textRows)*int64(rowFloats)*4 + scratch + attentionScoreBudget
	if len(p.Conditions) > 0 {
		text = max(text, int64(patches)*int64(6*vc.Hidden+2*vc.Intermediate)*4+attentionScoreBudget)
	}
	var encode int64
	for _, c := range p.encodes() {
		encode = max(encode, cpuEncode(cfg, c[1], c[0], budget))
	}
	s := cfg.Scale()
	return workingSets{
		text:   heapHeadroom * text,
		encode: heapHeadroom * encode,
		decode: heapHeadroom * cpuDecode(cfg, p.Height/s, p.Width/s, budget),
	}
}

// cpuEncode is the dry run's activation peak of encoding an H×W condition or start image in the
// tiling the pipeline chooses on the CPU (vae.ChooseEncodeTilingFor against a quarter of the
// budget: one piece when that fits or the budget is unknown, else the largest tiles that fit), or
// the published model's one-piece count when the dry run rejects the size (the run then fails
// with the VAE's own message).
func cpuEncode(cfg *vae.Config, H, W int, budget int64) int64 {
	return remember(planKey{cfg: cfg, op: "cpu encode", h: H, w: W, budget: budget}, func() int64 {
		if budget <= 0 {
			budget = 1 << 62
		}
		_, plan, err := vae.ChooseEncodeTilingFor(cfg, H, W, budget/4)
		if err != nil {
			return encodePeak(H/16, W/16)
		}
		return plan.PeakActivationBytes
	})
}

// cpuDecode is the dry run's activation peak of decoding an h×w latent grid in the tiling the
// pipeline chooses on the CPU (a quarter of the budget; one piece when the budget is unknown).
func cpuDecode(cfg *vae.Config, h, w int, budget int64) int64 {
	return remember(planKey{cfg: cfg, op: "cpu decode", h: h, w: w, budget: budget}, func() int64 {
		if budget <= 0 {
			budget = 1 << 62
		}
		_, plan, err := vae.ChooseTilingFor(cfg, h, w, budget/4)
		if err != nil {
			return decodePeak(h, w, budget)
		}
		return plan.PeakActivationBytes
	})
}
