package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"easel/engine/qi21"
	"easel/engine/sched"
)

// DenoiseInput is everything the denoising loop needs.
type DenoiseInput struct {
	// Positive is the prompt; Negative the negative prompt, used when CFG > 1 (required then).
	Positive, Negative *Conditioning
	CFG                float64
	// CondLatents are the condition images' packed normalized latents, concatenated in order,
	// and CondShapes their latent grids.
	CondLatents []float32
	CondShapes  [][2]int
	// H, W is the target's latent grid.
	H, W int
	// Noise is the starting latents, packed [H·W, 64] (not modified); with Init, the noise the
	// image's latents are mixed with.
	Noise []float32
	// Schedule is the part of the schedule the loop walks (sched.Schedule.From for a run that
	// starts from an image).
	Schedule sched.Schedule
	// Init, when not nil, starts the loop from an image's latents noised to the schedule's first
	// σ, and with a mask keeps what the mask keeps after every step (see InitImage).
	Init *DenoiseInit
	// Stop, when closed, ends the loop after the step it is in: the latents returned are that
	// step's x0 estimate (see Request.Stop).
	Stop <-chan struct{}
	// Resume, when not nil, continues a batch from a saved state (Request.Resume).
	Resume *Resume
}

// stopped reports whether a Stop channel is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// StepReport describes one finished step to DenoiseHooks.Step.
type StepReport struct {
	// Index is the step's place among the steps run (0-based) and Steps how many run: a run that
	// starts from an image skips the schedule's first steps and counts from its first step run.
	Index, Steps int
	// Image is the image of a batch the step belongs to (0-based; 0 for a single image).
	Image int
	Sigma float32 // σ the step started from
	// Latents are the packed latents after the step, X0 the step's x0 estimate x − σ·v; both are
	// the loop's own buffers: copy what you keep.
	Latents, X0 []float32
}

// DenoiseHooks are called on the running goroutine; either may be nil.
type DenoiseHooks struct {
	// Prefilled runs once both programs are prefilled, with the programs (positive first).
	Prefilled func(progs []Program)
	// Notice runs with a sentence for the user about where a program runs (a device's decline).
	Notice func(string)
	// Recovered runs with a device's recovery during the prefill or a step (once per kind per
	// run; its Notice is the sentence). Without it, the sentence goes to Notice.
	Recovered func(Recovery)
	// Start runs before an image's first step (image 0 right after Prefilled, each later image
	// of a batch after the one before it finished).
	Start func(image int)
	// Step runs after every step.
	Step func(StepReport)
}

// guided reports whether the input asks for CFG.
func (in *DenoiseInput) guided() bool { return in.CFG > 1 }

// layout builds one prompt's joint layout: its image slots plus T/4 target slots, and the
// condition and target grids.
func (in *DenoiseInput) layout(c *Conditioning) (*qi21.Layout, error) {
	mask := make([]bool, 0, len(c.ImageMask)+in.H*in.W/4)
	mask = append(mask, c.ImageMask...)
	for range in.H * in.W / 4 {
		mask = append(mask, true)
	}
	shapes := append(slices.Clone(in.CondShapes), [2]int{in.H, in.W})
	return qi21.NewLayout(mask, shapes)
}

// Denoise prefills one program per prompt and walks the schedule with Euler steps (spec §5.3,
// §6.12), combining the two velocities under CFG as v = v_neg + s·(v_cond − v_neg) (spec §7).
// It returns the final packed latents. The programs are released on every path, and then a
// device's buffers over the denoiser's weights (Denoiser.ReleaseWeights).
func (p *Pipeline) Denoise(ctx context.Context, in DenoiseInput, hooks DenoiseHooks) ([]float32, error) {
	return p.DenoiseBatch(ctx, in, 1, nil, hooks, nil)
}

// DenoiseBatch is Denoise for n images of one prompt: it prefills the programs once (the prompt's
// and condition images' K/V do not depend on the noise) and walks the schedule for each image
// in turn, image i from the starting noise noise(i) (in.Noise when noise is nil). Each image's
// walk is the single image's, so image i is bit for bit the single run from noise(i).
// finished runs after every image but the last with its final latents, while the programs are
// still live (the caller decodes it there, and may keep the slice); the last image's latents are
// returned once the programs are released, as Denoise returns its one.
func (p *Pipeline) DenoiseBatch(ctx context.Context, in DenoiseInput, n int, noise func(image int) ([]float32, error), hooks DenoiseHooks, finished func(image int, latents []float32) error) ([]float32, error) {
	if in.Positive == nil {
		return nil, errors.New("denoise: no prompt conditioning")
	}
	if in.guided() && in.Negative == nil {
		return nil, errors.New("denoise: CFG above 1 needs the negative prompt's conditioning")
	}
	if in.H <= 0 || in.W <= 0 || in.H%2 != 0 || in.W%2 != 0 {
		return nil, fmt.Errorf("%w: latent grid %d×%d: both sides must be even (the image a multiple of 32 pixels)", ErrSize, in.H, in.W)
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: a batch of %d images", ErrSettings, n)
	}
	ch := p.dit.Config.InChannels
	if noise == nil && len(in.Noise) != in.H*in.W*ch {
		return nil, fmt.Errorf("%w: %d values for a %d×%d grid of %d channels", ErrNoise, len(in.Noise), in.H, in.W, ch)
	}
	conds := []*Conditioning{in.Positive}
	if in.guided() {
		conds = append(conds, in.Negative)
	}
	var progs []Program
	defer func() {
		for _, prog := range progs {
			p.den.Release(prog)
		}
		p.releaseDeviceWeights()
	}()
	for i, c := range conds {
		lay, err := in.layout(c)
		if err != nil {
			return nil, fmt.Errorf("prompt %d layout: %w", i+1, err)
		}
		if got := lay.CondLatents() * ch; got != len(in.CondLatents) {
			return nil, fmt.Errorf("%w: the prompt has room for %d condition latent values, the images gave %d", ErrImages, got, len(in.CondLatents))
		}
		p.denAt.takeNotices() // a failed prefill's declines are not this prompt's
		prog, err := p.den.Prefill(ctx, lay, c.Embeddings, in.CondLatents)
		if err != nil {
			return nil, err
		}
		progs = append(progs, prog)
		p.reportDenoiserDeclines(hooks, 0, 0, 0, n)
	}
	if hooks.Prefilled != nil {
		hooks.Prefilled(progs)
	}
	var last []float32
	for img := range n {
		if r := in.Resume; r != nil && img < r.Image {
			// Finished before the state was saved: only decoded again.
			if last = r.Finished[img]; img < n-1 && finished != nil {
				if err := finished(img, last); err != nil {
					return nil, err
				}
			}
			continue
		}
		one := in
		if noise != nil {
			var err error
			if one.Noise, err = noise(img); err != nil {
				return nil, err
			}
			if len(one.Noise) != in.H*in.W*ch {
				return nil, fmt.Errorf("%w: image %d: %d values for a %d×%d grid of %d channels", ErrNoise, img+1, len(one.Noise), in.H, in.W, ch)
			}
		}
		if hooks.Start != nil {
			hooks.Start(img)
		}
		x, err := p.walk(ctx, progs, one, img, n, hooks)
		if err != nil {
			if n > 1 {
				err = fmt.Errorf("image %d of %d: %w", img+1, n, err)
			}
			return nil, err
		}
		if img < n-1 && finished != nil {
			if err := finished(img, x); err != nil {
				return nil, err
			}
		}
		last = x
	}
	return last, nil
}

// walk runs the schedule once from in.Noise on the prefilled programs: image img of images.
func (p *Pipeline) walk(ctx context.Context, progs []Program, in DenoiseInput, img, images int, hooks DenoiseHooks) ([]float32, error) {
	ch := p.dit.Config.InChannels
	x := slices.Clone(in.Noise)
	first := 0
	if r := in.Resume; r != nil && r.Image == img {
		x, first = slices.Clone(r.Latents), r.Step
	}
	var blend *blender
	if in.Init != nil {
		if len(in.Init.Latents) != len(in.Noise) {
			return nil, fmt.Errorf("%w: the image to start from has %d latent values for a %d×%d grid of %d channels", ErrSize, len(in.Init.Latents), in.H, in.W, ch)
		}
		if first == 0 {
			if err := sched.Renoise(x, in.Init.Latents, in.Noise, in.Schedule.Sigmas[0]); err != nil {
				return nil, err
			}
		}
		var err error
		if blend, err = newBlender(in.Init, in.Noise, ch, in.Schedule); err != nil {
			return nil, err
		}
	}
	x0 := make([]float32, len(x))
	scale := float32(in.CFG)
	for i := first; i < in.Schedule.Steps(); i++ {
		if i > first && stopped(in.Stop) {
			return x0, nil // interrupted: the image as far as it got
		}
		sigma := in.Schedule.Sigmas[i]
		v, err := p.den.Step(ctx, progs[0], x, sigma)
		if err != nil {
			return nil, fmt.Errorf("step %d of %d: %w", i+1, in.Schedule.Steps(), err)
		}
		if in.guided() {
			vNeg, err := p.den.Step(ctx, progs[1], x, sigma)
			if err != nil {
				return nil, fmt.Errorf("step %d of %d, negative prompt: %w", i+1, in.Schedule.Steps(), err)
			}
			guide(v, vNeg, scale)
		}
		p.reportDenoiserDeclines(hooks, i+1, in.Schedule.Steps(), img, images) // a step the device declined goes on on the CPU
		for j := range x {
			x0[j] = x[j] - float32(sigma*v[j])
		}
		if err := in.Schedule.Step(i, x, v); err != nil {
			return nil, err
		}
		if blend != nil {
			if err := blend.apply(x, sigma, in.Schedule.Sigmas[i+1]); err != nil {
				return nil, err
			}
		}
		if hooks.Step != nil {
			hooks.Step(StepReport{Index: i, Steps: in.Schedule.Steps(), Image: img, Sigma: sigma, Latents: x, X0: x0})
		}
	}
	return x, nil
}

// reportDenoiserDeclines hands the device's declines of the denoiser's calls so far, and its
// recoveries (placed at step of steps of image, step 0 for a prefill), to the hooks.
func (p *Pipeline) reportDenoiserDeclines(hooks DenoiseHooks, step, steps, image, images int) {
	for _, n := range p.denAt.takeNotices() {
		if hooks.Notice != nil {
			hooks.Notice(n)
		}
	}
	for _, r := range p.denAt.takeRecoveries(step, steps, image, images) {
		switch {
		case hooks.Recovered != nil:
			hooks.Recovered(r)
		case hooks.Notice != nil:
			hooks.Notice(r.Notice)
		}
	}
}

// guide overwrites v (the prompt's velocity) with v_neg + s·(v − v_neg), each operation rounded
// to float32 as torch computes it (the conversion keeps the compiler from fusing a multiply-add).
func guide(v, vNeg []float32, s float32) {
	for j := range v {
		v[j] = vNeg[j] + float32(s*(v[j]-vNeg[j]))
	}
}
