package memplan

import (
	"sync"

	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
	"easel/engine/vae"
	"easel/engine/vae/vaemetal"
)

// workingSets are the working sets of the networks around the denoiser, in bytes: on the CPU
// (cpuWorkingSets) or on the device (metalWorkingSets: what each one's own check before a call,
// qwen3vlmetal.Encoder.Encode, vaemetal.VAE.Decode and Encode, counts as its activations, from
// the same functions, so the planner and the device's decline never count differently).
type workingSets struct {
	text   int64 // the text encoder with the vision tower, over the positive prompt
	encode int64 // the VAE encoder, the largest condition or start image
	decode int64 // the VAE decoder, in the tiling the pipeline chooses
}

// metalWorkingSets counts a plan's text-encoder, VAE-encoder and VAE-decoder stages on the device
// at the model's geometry (the published one when g does not carry the file's configs). budget
// is the device's working set (DeviceBudget).
func metalWorkingSets(g Geometry, p Plan, textRows int, budget int64) workingSets {
	tc, vc, vcfg := g.configs()
	var out workingSets
	grids := make([][3]int, len(p.Conditions))
	for i, c := range p.Conditions {
		grids[i] = [3]int{1, c[1] / vc.PatchSize, c[0] / vc.PatchSize} // image_grid_thw: one frame
	}
	for _, c := range p.encodes() {
		out.encode = max(out.encode, deviceEncode(vcfg, c[1], c[0], budget))
	}
	var vision *qwen3vl.VisionConfig
	if g.HasVision() {
		vision = &vc
	}
	out.text = qwen3vlmetal.PlanEncodeFor(tc, vision, textRows, grids)
	out.decode = deviceDecode(vcfg, p.Height/vcfg.Scale(), p.Width/vcfg.Scale(), budget)
	return out
}

// deviceEncode is vaemetal.PlanEncodeFor of an H×W condition or start image in the tiling the
// pipeline chooses wherever the encode runs (as deviceDecode:
// vae.ChooseEncodeTilingFor against a third of the working set, a quarter of physical memory; one
// piece when the budget is unknown), or the CPU's count when the dry run rejects the size (the run
// then fails with the VAE's own message).
func deviceEncode(cfg *vae.Config, H, W int, budget int64) int64 {
	return remember(planKey{cfg: cfg, op: "encode", h: H, w: W, budget: budget}, func() int64 {
		var tiling *vae.Tiling
		if budget > 0 {
			t, _, err := vae.ChooseEncodeTilingFor(cfg, H, W, budget/3)
			if err != nil {
				return heapHeadroom * encodePeak(H/16, W/16)
			}
			tiling = t
		}
		n, err := vaemetal.PlanEncodeFor(cfg, H, W, tiling)
		if err != nil {
			return heapHeadroom * encodePeak(H/16, W/16)
		}
		return n
	})
}

// deviceDecode is vaemetal.PlanDecodeFor of an h×w latent grid in the tiling the pipeline chooses
// wherever the decode runs: the CPU model's plan (vae.ChooseTilingFor) against a quarter of
// physical memory (engine/pipeline's vaeBudget), which is a third of the working set
// DeviceBudget estimates on a Mac. An unknown budget decodes in one piece.
func deviceDecode(cfg *vae.Config, h, w int, budget int64) int64 {
	return remember(planKey{cfg: cfg, op: "decode", h: h, w: w, budget: budget}, func() int64 {
		var tiling *vae.Tiling
		if budget > 0 {
			t, _, err := vae.ChooseTilingFor(cfg, h, w, budget/3)
			if err != nil {
				return heapHeadroom * decodePeak(h, w, budget)
			}
			tiling = t
		}
		n, err := vaemetal.PlanDecodeFor(cfg, h, w, tiling)
		if err != nil {
			return heapHeadroom * decodePeak(h, w, budget)
		}
		return n
	})
}

// configs are the geometry's text, vision and VAE configs, the published ones where g has none.
func (g Geometry) configs() (qwen3vl.TextConfig, qwen3vl.VisionConfig, *vae.Config) {
	pub := published()
	tc, vc, vcfg := pub.text, pub.vision, pub.vae
	if g.Text != nil {
		tc = *g.Text
	}
	if g.Vision != nil {
		vc = *g.Vision
	}
	if g.VAE != nil {
		vcfg = g.VAE
	}
	return tc, vc, vcfg
}

// published holds the published configs, parsed once (the VAE's one pointer keys the plan cache).
var published = sync.OnceValue(func() (pub struct {
	text   qwen3vl.TextConfig
	vision qwen3vl.VisionConfig
	vae    *vae.Config
}) {
	pub.text, pub.vision = qwen3vl.PublishedConfigs()
	pub.vae = vae.PublishedConfig()
	return pub
})

// The VAE's device plans come from dry runs of its code (tens of milliseconds at 1024², more in
// tiles), and the window predicts on every edit and LargestFitting tries many sizes: each plan is
// remembered by geometry and shape.
type planKey struct {
	cfg    *vae.Config
	op     string
	h, w   int
	budget int64
}

var plans struct {
	sync.Mutex
	m map[planKey]int64
}

// plansKept bounds the cache (a geometry read from each chosen model adds its own keys).
const plansKept = 512

func remember(k planKey, plan func() int64) int64 {
	plans.Lock()
	n, ok := plans.m[k]
	plans.Unlock()
	if ok {
		return n
	}
	n = plan()
	plans.Lock()
	defer plans.Unlock()
	if plans.m == nil || len(plans.m) >= plansKept {
		plans.m = map[planKey]int64{}
	}
	plans.m[k] = n
	return n
}
