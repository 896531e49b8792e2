package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"easel/engine/mmapfile"
	"easel/engine/procmem"
	"easel/engine/vae"
)

// Cell is one image of a grid (app/grid): the settings that change neither the prompt's prefill
// nor the images' latents, so every cell of one request shares them. Zero fields keep the
// request's value.
type Cell struct {
	Seed              uint64
	VariationSeed     uint64
	VariationStrength float64
	Steps             int     // 0: the request's (a set Steps drops the request's Sigmas)
	CFG               float64 // 0: the request's
	Strength          float64 // the start image's strength; 0: the request's
}

// runCells is Run for a request with Cells: the first cell's result, every cell's in its Batch.
// On an error the finished cells were delivered in Finished events.
func (p *Pipeline) runCells(ctx context.Context, req Request, events chan<- Event) (*Result, error) {
	cells := req.Cells
	req.Cells = nil
	results, err := p.RunCells(ctx, req, cells, events)
	if err != nil {
		return nil, err
	}
	results[0].Batch = results
	return results[0], nil
}

// request is req with the cell's settings, as a single Run of that cell would take it.
func (c Cell) request(req Request) Request {
	r := req
	r.Count, r.Noise, r.Cells = 0, nil, nil
	r.Seed, r.VariationSeed, r.VariationStrength = c.Seed, c.VariationSeed, c.VariationStrength
	if c.Steps != 0 {
		r.Steps, r.Sigmas = c.Steps, nil
	}
	if c.CFG != 0 {
		r.CFG = c.CFG
	}
	if c.Strength != 0 && r.Init != nil {
		in := *r.Init
		in.Strength = c.Strength
		r.Init = &in
	}
	return r
}

// RunCells makes one image per cell from one request: the prompt (and the negative one when any
// cell uses CFG), the condition images and the start image are encoded once and the denoiser
// prefilled once; then each cell walks its own schedule from its own noise and is decoded, in
// order. Cell i is bit for bit Run(cells[i].request(req)) — the single run of its settings.
//
// Events are Run's, with Image the cell's index, Images the number of cells, and Seed and Steps
// the cell's; a Finished event carries each cell's result. On an error (cancelling included) the
// cells finished before it are returned with it.
func (p *Pipeline) RunCells(ctx context.Context, req Request, cells []Cell, events chan<- Event) ([]*Result, error) {
	em := newEmitter(events, req.Preview)
	defer em.close()
	if len(cells) == 0 {
		return nil, fmt.Errorf("%w: a grid of no cells", ErrSettings)
	}
	if req.Noise != nil || req.Count > 1 {
		return nil, fmt.Errorf("%w: a grid's cells take no injected noise and no batch count", ErrSettings)
	}
	reqs := make([]Request, len(cells))
	sets := make([]settings, len(cells))
	guided := false
	for i, c := range cells {
		reqs[i] = c.request(req)
		set, err := p.resolve(&reqs[i])
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		plan, err := p.plan(&reqs[i], set)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		if err := plan.checkMemory(); err != nil {
			return nil, fmt.Errorf("cell %d: %w", i+1, err)
		}
		sets[i], guided = set, guided || set.guided()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.guard.begin(ctx)
	defer p.guard.end()
	defer mmapfile.Guard()()
	for _, n := range p.placements() {
		n.startRun()
	}
	r := &run{p: p, req: &reqs[0], em: em, start: time.Now(), timings0: p.classTimes(), gpu0: p.gpuClasses(),
		steps: sets[0].stepsRun(), images: len(cells), device0: p.deviceTime()}
	var done []*Result
	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				if fault, ok := mmapfile.AsFault(v); ok {
					err = fault
					return
				}
				err = fmt.Errorf("internal error (a bug; please report it with this message): %v", v)
			}
		}()
		return r.cells(ctx, reqs, sets, guided, func(res *Result) { done = append(done, res) })
	}()
	if err != nil {
		var fault *mmapfile.FaultError
		if errors.As(err, &fault) {
			return done, &ModelFileError{Stage: r.where(), Fault: fault}
		}
		if ctx.Err() != nil {
			return done, fmt.Errorf("pipeline: cancelled while %s: %w", r.where(), ctx.Err())
		}
		return done, fmt.Errorf("pipeline: %s: %w", r.where(), err)
	}
	return done, nil
}

// atCell points the run's events at cell i: its request (shifted so ImageSeeds(i), which events
// read, gives the cell's own seeds) and its steps.
func (r *run) atCell(i int, req Request, set settings) {
	if req.VariationStrength > 0 {
		req.VariationSeed -= uint64(i)
	} else {
		req.Seed -= uint64(i)
	}
	r.req, r.image, r.steps, r.stepsDone = &req, i, set.stepsRun(), 0
}

// cells is RunCells after the cells are checked.
func (r *run) cells(ctx context.Context, reqs []Request, sets []settings, guided bool, finished func(*Result)) error {
	p, req, set := r.p, &reqs[0], sets[0]
	loras, used, loraNotes, err := p.requestLoRAs(req)
	if err != nil {
		return err
	}
	r.enter(StageEncodingPrompt)
	for _, n := range loraNotes {
		r.notice(n)
	}
	p.prefetch(denoiserWeights)
	for _, n := range []string{p.DenoiserNotice(), p.TextEncoderNotice(), p.VAENotice()} {
		if n != "" {
			r.notice(n)
		}
	}
	conds, err := p.PrepareImages(req.Images, set.resolution)
	if err != nil {
		return err
	}
	vision := VisionInputs(conds)
	pos, err := r.encode(ctx, req.Prompt, conds, vision)
	if err != nil {
		return err
	}
	var neg *Conditioning
	if guided {
		if neg, err = r.encode(ctx, req.NegativePrompt, conds, vision); err != nil {
			return fmt.Errorf("negative prompt: %w", err)
		}
	}
	p.release(textEncoderWeights, visionWeights)
	in := DenoiseInput{Positive: pos, Negative: neg, H: set.h, W: set.w}
	var initLatents []float32
	if len(conds) > 0 || set.init != nil {
		r.enter(StageEncodingImages)
		p.prefetch(vaeWeights)
		if len(conds) > 0 {
			in.CondLatents, in.CondShapes, err = p.EncodeConditionImages(ctx, VAEInputs(conds))
			r.declineNotices(p.vaeAt)
			if err != nil {
				return err
			}
		}
		if set.init != nil {
			initLatents, err = p.encodeInit(ctx, set.init.image, set.h, set.w)
			r.declineNotices(p.vaeAt)
			if err != nil {
				return err
			}
		}
	}

	r.enter(StagePrefill)
	if err := p.dit.SetLoRAs(loras); err != nil {
		return err
	}
	if guided {
		in.CFG = 2 // prefill both programs; each cell walks with its own scale
	}
	hooks := DenoiseHooks{Notice: r.notice, Recovered: r.recovery}
	progs, err := p.prefillPrograms(ctx, in, hooks, len(reqs))
	release := func() {
		for _, prog := range progs {
			p.den.Release(prog)
		}
		progs = nil
		p.releaseDeviceWeights()
		p.releaseDenoiser()
	}
	defer release()
	if err != nil {
		return err
	}
	r.progs = progs
	for i := range reqs {
		cr, cs := &reqs[i], sets[i]
		one := in
		one.CFG, one.Schedule = cs.cfg, cs.schedule
		if cs.init != nil {
			if one.Schedule, err = cs.schedule.From(cs.init.start); err != nil {
				return fmt.Errorf("%w: %v", ErrSettings, err)
			}
			one.Init = &DenoiseInit{Latents: initLatents, Mask: cs.init.mask}
		}
		if cr.VariationStrength > 0 {
			one.Noise, err = p.VariationNoise(cr.Seed, cr.VariationSeed, cr.VariationStrength, cs.h, cs.w)
		} else {
			one.Noise, err = p.Noise(cr.Seed, cs.h, cs.w)
		}
		if err != nil {
			return err
		}
		r.atCell(i, *cr, cs)
		r.enter(StageDenoising)
		var memory Memory
		x, err := p.walk(ctx, progs[:1+btoi(one.guided())], one, i, len(reqs), DenoiseHooks{Notice: r.notice, Recovered: r.recovery,
			Step: func(s StepReport) {
				r.stepsDone = s.Index + 1
				now := time.Now()
				ev := r.event()
				ev.LastStepTime, r.lastStep = now.Sub(r.lastStep), now
				ev.Sigma = s.Sigma
				if r.em.out != nil {
					ev.Preview = &Preview{X0: slices.Clone(s.X0), H: cs.h, W: cs.w}
				}
				memory = ev.Memory
				r.em.emit(ev)
			}})
		if err != nil {
			return fmt.Errorf("cell %d of %d: %w", i+1, len(reqs), err)
		}
		if i == len(reqs)-1 {
			r.progs = nil
			release()
		}
		r.enter(StageDecoding)
		p.prefetch(vaeWeights)
		decoded, err := p.Decode(ctx, x, cs.h, cs.w)
		r.declineNotices(p.vaeAt)
		if err != nil {
			return err
		}
		img, err := vae.ToRGBA(decoded)
		if err != nil {
			return err
		}
		res := &Result{Image: img, Decoded: decoded, Latents: x, Width: cs.width, Height: cs.height, Steps: cs.steps,
			StepsRun: one.Schedule.Steps(), CFG: cs.cfg, Seed: cr.Seed, Index: i, Sigmas: one.Schedule.Sigmas,
			Resolution: cs.resolution, LoRAs: used, Memory: memory}
		if cs.init != nil {
			res.Strength = cr.Init.Strength
		}
		if cr.VariationStrength > 0 {
			res.VariationSeed, res.VariationStrength = cr.VariationSeed, cr.VariationStrength
		}
		res.StageTimes, res.StageDeviceTimes, res.Timings = r.stageTimes, r.stageDev, r.timings()
		res.StagePeakMemory, res.PeakMemoryMethod = r.stagePeak, procmem.Method(r.memExact)
		finished(res)
		ev := r.event()
		ev.Finished = res
		r.em.emit(ev)
	}
	r.enter(StageDone)
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prefillPrograms prefills the positive prompt's program, and the negative one's under CFG, as
// DenoiseBatch does; images is the number of images that will walk them (for recoveries' places).
func (p *Pipeline) prefillPrograms(ctx context.Context, in DenoiseInput, hooks DenoiseHooks, images int) ([]Program, error) {
	ch := p.dit.Config.InChannels
	conds := []*Conditioning{in.Positive}
	if in.guided() {
		conds = append(conds, in.Negative)
	}
	var progs []Program
	for i, c := range conds {
		lay, err := in.layout(c)
		if err != nil {
			return progs, fmt.Errorf("prompt %d layout: %w", i+1, err)
		}
		if got := lay.CondLatents() * ch; got != len(in.CondLatents) {
			return progs, fmt.Errorf("%w: the prompt has room for %d condition latent values, the images gave %d", ErrImages, got, len(in.CondLatents))
		}
		p.denAt.takeNotices()
		prog, err := p.den.Prefill(ctx, lay, c.Embeddings, in.CondLatents)
		if err != nil {
			return progs, err
		}
		progs = append(progs, prog)
		p.reportDenoiserDeclines(hooks, 0, 0, 0, images)
	}
	return progs, nil
}
