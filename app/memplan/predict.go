package memplan

import (
	"fmt"

	"easel/engine/condimage"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
)

// Plan is one generation's shape, as the window knows it before a run.
type Plan struct {
	Width, Height int      // output pixels
	Conditions    [][2]int // each condition image's encoded size (width, height), in pixels
	PromptBytes   int      // the prompt's length (text rows are estimated from it)
	CFG           bool     // two programs (positive and negative prompt)
	// Init says the run starts from an image (img2img, inpainting, outpainting: Request.Init),
	// which the VAE encodes at the output size in the same stage as the condition images.
	Init bool
	// KVBytesPerValue is the size of one cached key or value: 2 (half, the default when 0: the
	// CPU and the Metal denoiser both keep the cache in half), 4 for a float32 cache.
	KVBytesPerValue int
	// Metal says the networks run on the Metal device (app/backend's choice): the denoiser's
	// programs each hold their own activation buffers there (qi21metal.PlanProgramFor), and
	// the text encoder with its vision tower and the VAE hold the buffers their device plans
	// count (qwen3vlmetal.PlanEncodeFor, vaemetal.PlanDecodeFor and PlanEncodeFor), instead of float32 working sets on the Go heap with its headroom.
	Metal bool
	// SharpPreview says the sharp preview is on: while the denoiser runs, a second VAE on its
	// own CPU backend decodes reduced x0 estimates (engine/pipeline/sharp.go), so its weights and
	// its decode's activations are resident in the denoiser's stage.
	SharpPreview bool
	LoRABytes    int64 // the enabled LoRAs' factors, held in memory beside the mapped weights
	// Count is the images of a batch (0 or 1: one). A batch encodes the prompt and prefills once,
	// then steps and decodes each image in turn while its programs stay: the denoiser's stage
	// also holds the VAE decoder, and every stage after the first image holds the finished
	// images (BatchImageBytes each).
	Count int
}

// BatchImageBytes is what one finished image of a w×h batch holds until the batch ends: its
// 8-bit RGBA picture and the decoder's float32 output [4, h, w].
func BatchImageBytes(w, h int) int64 { return int64(w) * int64(h) * (4 + 16) }

// Stage is one network's turn: what is resident while it runs.
type Stage struct {
	Name     string // "text encoder", "VAE encoder", "denoiser", "VAE decoder"
	Weights  int64  // the network's weights touched in the file mapping
	Working  int64  // its working set (activations, with the Go heap's headroom on the CPU; device buffers on Metal)
	Crossing int64  // what outlives the stage it was made in (prefix K/V, latents; on the CPU with the heap's headroom)
}

// Total is the stage's resident bytes beyond the process itself.
func (s Stage) Total() int64 { return s.Weights + s.Working + s.Crossing }

// Prediction is the predicted peak, by component and by stage.
type Prediction struct {
	Weights     int64   // all networks' mapped weights (the file's payload)
	LoRA        int64   // the enabled LoRAs' factors, resident in every stage
	PrefixKV    []int64 // per program, positive first (half precision unless the plan says otherwise)
	Activations int64   // the denoiser's working set: its largest float32 activations (CPU) or its programs' device buffers (Metal)
	VAE         int64   // the VAE's activation peak (decode tile, or a condition- or start-image encode; device buffers on Metal)
	// Stages are the networks in the order they run. Only one network is resident at a time —
	// the running one's weights (the pipeline releases a network's pages when it finishes; on
	// Metal each of the text encoder's and the VAE's calls builds its weight arena over the
	// mapping and its buffers, and frees both when it returns, and the denoiser holds its arena
	// from a run's first prefill until its programs are released) — so the peak is the largest stage
	// plus the process, never the sum of the networks. The one exception is the sharp preview's
	// VAE, which decodes beside the denoiser when Plan.SharpPreview is on.
	Stages []Stage
	Peak   int64 // Process + LoRAs + the largest stage
	Budget int64
}

// The counting rules (engine/pipeline/memory.go, docs/BENCHMARKS.md §VAE and §pipeline).
const (
	attentionScoreBudget = 16 << 20 // the CPU backend's score scratch per attention call
	// vaeFloatsPerLatent2 and vaeTile are the published decoder's live floats per latent² of
	// tile at its peak (engine/vae's dry run: 202,816) and vae.DefaultTiling's tile side: the
	// count when a dry run cannot say (a size the VAE refuses).
	vaeFloatsPerLatent2 = 203_000
	vaeTile             = 32
	templateRows        = 40 // the prompt template's text rows around the prompt
	bytesPerTextToken   = 4  // BPE averages about four bytes of English per token
	// Process is what the process keeps resident whatever runs: the program and its libraries,
	// the Go runtime, the tokenizer and the small uploaded norm vectors. Measured with easel
	// bench pipeline on Linux: 240 MB resident at the end of each stage once its network's
	// pages are released (docs/BENCHMARKS.md).
	Process = 250_000_000
	// heapHeadroom is the Go heap's growth over what is live before it collects (GOGC = 100):
	// working sets allocated on the CPU count twice.
	heapHeadroom = 2
	// Reserve is the share of the budget kept for the system and other apps: a plan fits when
	// its peak stays under (1 − Reserve) of the budget.
	Reserve = 0.10
)

// TextRows estimates the prompt's text rows in the denoiser's prefix.
func TextRows(promptBytes int) int { return templateRows + promptBytes/bytesPerTextToken }

// Predict counts a plan against a model geometry and a budget.
func Predict(g Geometry, p Plan, budget int64) Prediction {
	var out Prediction
	weights := map[string]int64{}
	for _, w := range g.Weights {
		out.Weights += w.Bytes
		weights[w.Name] += w.Bytes
	}
	prefix := TextRows(p.PromptBytes)
	textRows := prefix // the text encoder's rows: the text and a quarter token per patch
	patches := 0
	for _, c := range p.Conditions {
		prefix += (c[0] / 16) * (c[1] / 16)  // one latent per 16×16 pixels
		patches += (c[0] / 16) * (c[1] / 16) // one vision patch per 16×16 pixels
		textRows += (c[0] / 32) * (c[1] / 32)
	}
	elem := int64(p.KVBytesPerValue)
	if elem <= 0 {
		elem = 2
	}
	kv := int64(prefix) * int64(g.Layers) * 2 * int64(g.Hidden) * elem
	out.PrefixKV = []int64{kv}
	if p.CFG {
		out.PrefixKV = append(out.PrefixKV, kv) // the negative prompt is shorter; counted alike
	}
	target := (p.Width / 16) * (p.Height / 16)
	rows := max(prefix, target)
	out.Activations = int64(rows)*int64(6*g.Hidden+2*g.MLPHidden)*4 + attentionScoreBudget
	latents := int64(target) * 64 * 4 * 3 // noise, latents and the step's velocity

	// On the CPU the prefix cache lives on the Go heap beside the activations, and a prefill
	// makes a layer's float32 K and V for every one it keeps: the heap's headroom covers both.
	denoiserWorking := heapHeadroom * out.Activations
	kvResident := heapHeadroom * out.KVBytes()
	if p.Metal {
		c := qi21.PublishedConfig()
		c.Layers, c.Heads, c.MLPRatio = g.Layers, g.Hidden/c.HeadDim, float64(g.MLPHidden)/float64(max(g.Hidden, 1))
		out.Activations = int64(len(out.PrefixKV)) * qi21metal.PlanProgramFor(c, prefix, target)
		denoiserWorking = out.Activations
		kvResident = out.KVBytes() // device buffers
	}

	// The text encoder reads every projection of every layer but only the prompt's rows of the
	// token embedding; the vision tower runs only for condition images.
	te := weights["te"] - g.TextEmbedding - g.TextHead // the head only writes text (writing.go)
	if len(p.Conditions) > 0 {
		te += weights["vis"]
	}
	// On the CPU float32 on the Go heap with its headroom; on the device the buffers each
	// network's own check counts (no Go heap, no headroom). The weights are read in place from
	// the mapping either way.
	var ws workingSets
	if p.Metal {
		ws = metalWorkingSets(g, p, textRows, budget)
		out.VAE = max(ws.decode, ws.encode)
	} else {
		ws = cpuWorkingSets(g, p, textRows, patches, budget)
		out.VAE = max(ws.decode, ws.encode) / heapHeadroom
	}
	textWorking, encodeWorking, decodeWorking := ws.text, ws.encode, ws.decode
	if p.SharpPreview {
		denoiserWorking += sharpWorking(g, p)
	}
	denoiserWeights := weights["dit"]
	if p.SharpPreview {
		denoiserWeights += weights["vae"] // the sharp preview's VAE reads its weights beside the denoiser's
	}

	// One network at a time: each stage holds its own weights and working set, plus what it
	// hands on (the prefix K/V and latents).
	out.Stages = append(out.Stages, Stage{Name: "text encoder", Weights: te, Working: textWorking})
	if len(p.encodes()) > 0 {
		out.Stages = append(out.Stages, Stage{Name: "VAE encoder", Weights: weights["vae"], Working: encodeWorking})
	}
	den := Stage{Name: "denoiser", Weights: denoiserWeights, Working: denoiserWorking, Crossing: kvResident + latents}
	dec := Stage{Name: "VAE decoder", Weights: weights["vae"], Working: decodeWorking, Crossing: latents}
	if p.Count > 1 {
		// Each image is decoded as it finishes, while the batch's programs (the prefix K/V) stay
		// for the next: the denoiser and the decoder are resident together.
		images := int64(p.Count-1) * BatchImageBytes(p.Width, p.Height)
		den.Name = fmt.Sprintf("denoiser and VAE decoder (a batch of %d)", p.Count)
		if !p.SharpPreview {
			den.Weights += weights["vae"]
		}
		den.Working += decodeWorking
		den.Crossing += images
		dec.Crossing += images
	}
	out.Stages = append(out.Stages, den, dec)
	out.LoRA = p.LoRABytes
	for _, s := range out.Stages {
		out.Peak = max(out.Peak, Process+out.LoRA+s.Total())
	}
	out.Budget = budget
	return out
}

// encodes are the images the VAE encodes before the denoiser runs, (width, height) in pixels: the
// condition images and the start image.
func (p Plan) encodes() [][2]int {
	if !p.Init {
		return p.Conditions
	}
	return append(append([][2]int(nil), p.Conditions...), [2]int{p.Width, p.Height})
}

// Largest is the stage that sets the peak.
func (p Prediction) Largest() Stage {
	var best Stage
	for _, s := range p.Stages {
		if s.Total() > best.Total() {
			best = s
		}
	}
	return best
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

// decodePeak is the decoder's activation bytes for an h×w latent grid, chosen as the pipeline
// does: in one piece when that fits a quarter of the budget, else in tiles.
func decodePeak(h, w int, budget int64) int64 {
	whole := int64(vaeFloatsPerLatent2) * int64(h) * int64(w) * 4
	if budget <= 0 || whole <= budget/4 {
		return whole
	}
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
	// The weights, the prompt's and the condition images' stages do not shrink with the output:
	// when the smallest size does not fit, none does (and the Metal plan's VAE dry runs for every
	// size in between are skipped).
	if w, h := condimage.CalculateDimensions(256*256, ratio); w >= 32 && h >= 32 {
		q := p
		q.Width, q.Height = w, h
		if !Predict(g, q, budget).Fits() {
			return 0, 0, false
		}
	}
	for area >= 256*256 {
		w, h := condimage.CalculateDimensions(area, ratio)
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
