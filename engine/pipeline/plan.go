package pipeline

import (
	"errors"
	"fmt"

	"easel/engine/condimage"
	"easel/engine/qi21"
	"easel/engine/qwen3vl"
)

// ErrMemory is the kind of error of a request whose cache and activations would not fit the
// device budget.
var ErrMemory = errors.New("not enough memory for this request")

// Plan is what a request will cost, known before any work: the settings it resolves to, the
// denoiser's sequence lengths, the memory it will hold and the arithmetic it will do. Building it
// tokenizes the prompts and computes the condition-image sizes, nothing more.
type Plan struct {
	Width, Height int
	Steps         int
	CFG           float64
	// Programs is 1, or 2 under CFG.
	Programs int
	// TargetRows is the target's latent tokens; PrefixRows each program's prefix (text and
	// condition-image rows).
	TargetRows int
	PrefixRows []int
	// Memory is the estimate: weights mapped, each program's K/V cache, the denoiser's largest
	// activations, and the device budget (PeakRSS and GoHeap are now's).
	Memory Memory
	// PrefillFlops and StepFlops are the denoiser's floating-point work for the prefills and for
	// one step (every program), from qi21.BlockFlops.
	PrefillFlops, StepFlops float64
	// limit is the budget a run is refused above: the device budget, or main memory when that is
	// larger and the denoiser falls back to the CPU for what its device declines.
	limit int64
}

// NeedBytes is what the run allocates on the backend beyond the weights: the programs' caches
// and the activations.
func (pl *Plan) NeedBytes() int64 {
	n := pl.Memory.Activations
	for _, kv := range pl.Memory.PrefixKV {
		n += kv
	}
	return n
}

// Plan resolves req as Run would and estimates its cost.
func (p *Pipeline) Plan(req Request) (*Plan, error) {
	set, err := p.resolve(&req)
	if err != nil {
		return nil, err
	}
	return p.plan(&req, set)
}

func (p *Pipeline) plan(req *Request, set settings) (*Plan, error) {
	pads := make([]int, len(req.Images))
	var condShapes [][2]int
	factor := p.proc.PatchSize * p.proc.MergeSize
	for i, img := range req.Images {
		wc, hc, err := condimage.ConditionSize(img.Rect.Dx(), img.Rect.Dy(), set.resolution)
		if err != nil {
			return nil, fmt.Errorf("%w: condition image %d: %v", ErrImages, i+1, err)
		}
		vh, vw, err := condimage.SmartResize(hc, wc, factor, p.proc.MinPixels, p.proc.MaxPixels)
		if err != nil {
			return nil, fmt.Errorf("%w: condition image %d: %v", ErrImages, i+1, err)
		}
		if vw != wc || vh != hc {
			return nil, fmt.Errorf("%w: condition image %d is %d×%d for the VAE but the image processor's pixel bounds (%d…%d) make it %d×%d for the vision tower: choose an output resolution whose square lies within those bounds",
				ErrImages, i+1, wc, hc, p.proc.MinPixels, p.proc.MaxPixels, vw, vh)
		}
		pads[i] = (vh / p.proc.PatchSize) * (vw / p.proc.PatchSize) / (p.proc.MergeSize * p.proc.MergeSize)
		condShapes = append(condShapes, [2]int{hc / 16, wc / 16})
	}
	texts := []string{req.Prompt}
	if set.guided() {
		texts = append(texts, req.NegativePrompt)
	}
	pl := &Plan{Width: set.width, Height: set.height, Steps: set.steps, CFG: set.cfg, Programs: len(texts), TargetRows: set.h * set.w}
	in := DenoiseInput{CondShapes: condShapes, H: set.h, W: set.w}
	var layouts []*qi21.Layout
	c := p.dit.Config
	for _, text := range texts {
		prompt, err := qwen3vl.BuildPrompt(p.tok, text, pads)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSettings, err)
		}
		lay, err := in.layout(&Conditioning{ImageMask: prompt.ImageMask})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrImages, err)
		}
		layouts = append(layouts, lay)
		pl.PrefixRows = append(pl.PrefixRows, lay.PrefixLen)
		g, a := qi21.BlockFlops(c, lay.PrefixLen, 0)
		pl.PrefillFlops += float64(c.Layers) * (g + a)
		g, a = qi21.BlockFlops(c, lay.T, lay.PrefixLen)
		pl.StepFlops += float64(c.Layers) * (g + a)
	}
	pl.Memory = p.ledger(layouts...)
	pl.limit = pl.Memory.DeviceBudget
	if p.denAt.Device != "" {
		pl.limit = max(pl.limit, p.backendBudget())
	}
	return pl, nil
}

// checkMemory refuses a plan whose caches and activations exceed the device budget (a run that
// would swap the machine to a standstill), saying what to change.
func (pl *Plan) checkMemory() error {
	budget := pl.Memory.DeviceBudget
	if pl.limit > 0 {
		budget = pl.limit
	}
	if budget <= 0 || pl.NeedBytes() <= budget {
		return nil
	}
	return fmt.Errorf("%w: %d×%d with %d prompt program(s) and %d prefix rows needs %.1f GB of K/V cache and activations; this machine has %.1f GB: use a smaller size, fewer or smaller condition images, or CFG 1",
		ErrMemory, pl.Width, pl.Height, pl.Programs, pl.PrefixRows[0], float64(pl.NeedBytes())/1e9, float64(budget)/1e9)
}
