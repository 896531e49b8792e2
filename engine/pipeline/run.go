package pipeline

import (
	"context"
	"errors"
	"fmt"
	"image"
	"runtime/debug"
	"slices"
	"time"

	"easel/engine/condimage"
	"easel/engine/ml"
	"easel/engine/mmapfile"
	"easel/engine/procmem"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
)

// Result is a finished generation.
type Result struct {
	// Image is the RGBA output, 8 bits per channel, not premultiplied (spec §9).
	Image *image.NRGBA
	// Decoded is the VAE's output before the 8-bit conversion, [4, H, W] in [−1, 1].
	Decoded *vae.Image
	// Latents are the final packed latents [h·w, 64].
	Latents []float32
	// Width, Height are the image size; Steps, CFG, Seed and Sigmas what was actually used
	// (Steps is the schedule's step count; Sigmas are those walked, with the terminal 0).
	Width, Height int
	Steps         int
	// StepsRun is the number of steps run: Steps, or fewer when an init image's Strength skipped
	// the schedule's first steps. Strength is the init image's (0 without one).
	StepsRun int
	Strength float64
	CFG      float64
	Seed     uint64
	Sigmas   []float32
	// Interrupted is set when Request.Stop ended the loop early: the image is the x0 estimate of
	// step StepsDone of StepsRun.
	Interrupted bool
	StepsDone   int
	// Index is the image's place in its batch (0-based; 0 for a single image). Seed is its own
	// seed; VariationSeed and VariationStrength its variation (0 strength: none).
	Index             int
	NoiseSeed         *uint64 // the seed the noise was drawn from when not Seed (Request.NoiseSeed)
	VariationSeed     uint64
	VariationStrength float64
	// Batch, on a batch's result (Request.Count above 1), is every image of the batch in order,
	// this one first; nil for a single image.
	Batch []*Result
	// Resolution is the output_resolution condition images were sized for.
	Resolution int
	// StageTimes is the wall time spent in each stage, indexed by Stage (StageDone is the total).
	StageTimes [numStages]time.Duration
	// StageDeviceTimes is the device (Metal GPU) time of each stage, indexed by Stage: the text
	// encoder's in encoding the prompt, the denoiser's in prefill and denoising, the VAE's in
	// encoding images and decoding; 0 for the stages that ran on the backend.
	StageDeviceTimes [numStages]time.Duration
	// Timings is the backend's per-class op time over the run, plus the Metal text encoder's and
	// VAE's GPU time per class in profiling mode (EASEL_METAL_PROF=1).
	Timings [ml.NumClasses]ml.ClassTime
	// GPUClasses is the device networks' GPU time per class over the run, in every mode, and how
	// it was measured (zero when nothing ran on a device).
	GPUClasses ml.GPUClasses
	// StagePeakMemory is the process's peak memory footprint during each stage, indexed by Stage
	// (engine/procmem: phys_footprint on macOS, the resident set on Linux; the most over a batch's
	// images); PeakMemoryMethod says how it was measured.
	StagePeakMemory  [numStages]int64
	PeakMemoryMethod string
	// Memory is the ledger at the end of denoising (both programs still counted).
	Memory Memory
	// LoRAs are the request's LoRAFiles as applied.
	LoRAs []LoRAUsed
	// Recoveries are the devices' recoveries during the run (a GPU overflow, watchdog stop or
	// out-of-memory a retry fixed, a step moved to the CPU), one per kind and network with its
	// count; each was also sent once as a notice event (Event.Recovery).
	Recoveries []Recovery
}

// Run makes one image, or a batch of Request.Count images of one prompt (its result is the first
// image's, with every image's in Result.Batch). Events (see Event for the delivery policy) go to events, which Run
// closes after the last one; events may be nil. A bad request fails before any work with an error
// wrapping ErrSize, ErrImages, ErrSettings or ErrNoise, and one whose K/V cache and activations
// exceed the device budget with ErrMemory (Plan tells the cost beforehand). Cancelling ctx stops
// the run within one backend op; the error then wraps ctx.Err() (context.Canceled) and names the
// stage. Runs on one Pipeline are serialized.
func (p *Pipeline) Run(ctx context.Context, req Request, events chan<- Event) (*Result, error) {
	if len(req.Cells) > 0 {
		return p.runCells(ctx, req, events) // a grid's cells (cells.go)
	}
	em := newEmitter(events, req.Preview)
	defer em.close()
	set, err := p.resolve(&req)
	if err != nil {
		return nil, err
	}
	plan, err := p.plan(&req, set)
	if err != nil {
		return nil, err
	}
	if err := plan.checkMemory(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.guard.begin(ctx)
	defer p.guard.end()
	defer mmapfile.Guard()() // a read of a vanished model file faults into an error, see generateSafely

	for _, n := range p.placements() {
		n.startRun()
	}
	r := &run{p: p, req: &req, em: em, start: time.Now(), timings0: p.classTimes(), gpu0: p.gpuClasses(), steps: set.stepsRun(), images: req.Batch(), device0: p.deviceTime()}
	res, err := r.generateSafely(ctx, &req, set)
	if err != nil {
		var fault *mmapfile.FaultError
		if !errors.As(err, &fault) {
			// A device reading the mapping (Metal) does not fault on this goroutine: it fails.
			// If the file changed under it, that is the reason to report.
			if c, ok := p.model.(interface{ Changed() error }); ok {
				if changed := c.Changed(); changed != nil && errors.As(changed, &fault) {
					err = fault
				}
			}
		}
		if fault != nil {
			// The message is whole (the file, what happened, what to do); the stage is context.
			return nil, &ModelFileError{Stage: r.where(), Fault: fault}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pipeline: cancelled while %s: %w", r.where(), ctx.Err())
		}
		return nil, fmt.Errorf("pipeline: %s: %w", r.where(), err)
	}
	return res, nil
}

// ModelFileError is a run stopped because the model file changed or became unreadable while it
// was mapped (a drive unplugged, the file truncated or replaced). Its message is the fault's:
// the file, its size then and now, and what to do. errors.As finds the *mmapfile.FaultError.
type ModelFileError struct {
	Stage string // where the run was ("denoising (step 3 of 20)")
	Fault *mmapfile.FaultError
}

func (e *ModelFileError) Error() string {
	return fmt.Sprintf("stopped while %s: %v", e.Stage, e.Fault)
}

// Unwrap is the fault.
func (e *ModelFileError) Unwrap() error { return e.Fault }

// generateSafely is generate with a panic in any network turned into an error, so a bug there
// fails one image instead of the app, and a fault reading the model file's mapping (Run guards
// this goroutine, mmapfile.Group the backend's workers) into its *mmapfile.FaultError.
func (r *run) generateSafely(ctx context.Context, req *Request, set settings) (res *Result, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if fault, ok := mmapfile.AsFault(v); ok {
			// The model file went away under its mapping (on this goroutine or a backend worker's).
			// The unwinding released what the run held (the programs, the backend's scratch).
			res, err = nil, fault
			return
		}
		res, err = nil, fmt.Errorf("internal error (a bug; please report it with this message): %v\n%s", v, debug.Stack())
	}()
	return r.generate(ctx, req, set)
}

// generate is Run after the request is checked.
func (r *run) generate(ctx context.Context, req *Request, set settings) (*Result, error) {
	p := r.p
	loras, used, loraNotes, err := p.requestLoRAs(req)
	if err != nil {
		return nil, err
	}
	r.enter(StageEncodingPrompt)
	for _, n := range loraNotes {
		r.notice(n)
	}
	p.prefetch(denoiserWeights)
	if n := p.DenoiserNotice(); n != "" {
		r.notice(n)
	}
	if n := p.TextEncoderNotice(); n != "" {
		r.notice(n)
	}
	if n := p.VAENotice(); n != "" {
		r.notice(n)
	}
	conds, err := p.PrepareImages(req.Images, set.resolution)
	if err != nil {
		return nil, err
	}
	vision := VisionInputs(conds)
	pos, err := r.encode(ctx, req.Prompt, conds, vision)
	if err != nil {
		return nil, err
	}
	var neg *Conditioning
	if set.guided() {
		if neg, err = r.encode(ctx, req.NegativePrompt, conds, vision); err != nil {
			return nil, fmt.Errorf("negative prompt: %w", err)
		}
	}
	p.release(textEncoderWeights, visionWeights)
	var condLatents []float32
	var condShapes [][2]int
	var init *DenoiseInit
	if len(conds) > 0 || set.init != nil {
		r.enter(StageEncodingImages)
		p.prefetch(vaeWeights)
		if len(conds) > 0 {
			condLatents, condShapes, err = p.EncodeConditionImages(ctx, VAEInputs(conds))
			r.declineNotices(r.p.vaeAt)
			if err != nil {
				return nil, err
			}
		}
		if set.init != nil {
			lat, err := p.encodeInit(ctx, set.init.image, set.h, set.w)
			r.declineNotices(r.p.vaeAt)
			if err != nil {
				return nil, err
			}
			init = &DenoiseInit{Latents: lat, Mask: set.init.mask}
		}
	}
	schedule := set.schedule
	var strength float64
	if set.init != nil {
		if schedule, err = schedule.From(set.init.start); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSettings, err)
		}
		strength = req.Init.Strength
	}
	// Image i's starting noise: the injected noise, or its seed's (moved towards its variation
	// seed). A batch draws each image's noise when it starts.
	noiseFor := func(i int) ([]float32, error) {
		if req.Noise != nil {
			return req.Noise, nil
		}
		_, v := req.ImageSeeds(i)
		s := req.noiseSeed(i)
		if req.VariationStrength > 0 {
			return p.VariationNoise(s, v, req.VariationStrength, set.h, set.w)
		}
		return p.Noise(s, set.h, set.w)
	}
	n := req.Batch()

	var sharp *sharpDecoder
	startSharp := func() {
		if !req.SharpPreview || r.em.out == nil {
			return
		}
		m, guard, err := p.sharpModel()
		if err != nil {
			r.notice(fmt.Sprintf("No sharp preview: %v", err))
		} else {
			sharp = newSharpDecoder(m, guard, set.h, set.w)
		}
	}
	stopSharp := func() {
		if sharp != nil {
			sharp.close() // the final decode replaces any sharp preview still running
			sharp = nil
		}
	}
	defer stopSharp()
	startSharp()

	// finish decodes image i's latents into its Result and reports it.
	var results []*Result
	var memory Memory
	var finished [][]float32 // the images' final latents, for Request.OnStep
	finish := func(i int, latents []float32) error {
		finished = append(finished, latents)
		r.enter(StageDecoding)
		p.prefetch(vaeWeights)
		decoded, err := p.Decode(ctx, latents, set.h, set.w)
		r.declineNotices(r.p.vaeAt)
		if err != nil {
			return err
		}
		img, err := vae.ToRGBA(decoded)
		if err != nil {
			return err
		}
		s, v := req.ImageSeeds(i)
		res := &Result{
			Image: img, Decoded: decoded, Latents: latents,
			Width: set.width, Height: set.height, Steps: set.steps, StepsRun: schedule.Steps(), Strength: strength, CFG: set.cfg, Seed: s,
			Index: i, Sigmas: schedule.Sigmas, Resolution: set.resolution, LoRAs: used, NoiseSeed: req.NoiseSeeds(i),
		}
		if req.VariationStrength > 0 {
			res.VariationSeed, res.VariationStrength = v, req.VariationStrength
		}
		res.StepsDone = r.stepsDone
		res.Interrupted = stopped(req.Stop) && r.stepsDone < schedule.Steps()
		results = append(results, res)
		if n > 1 {
			ev := r.event()
			ev.Finished = res
			r.em.emit(ev)
		}
		return nil
	}

	r.enter(StagePrefill)
	if err := p.dit.SetLoRAs(loras); err != nil {
		return nil, err
	}
	in := DenoiseInput{Positive: pos, Negative: neg, CFG: set.cfg, CondLatents: condLatents, CondShapes: condShapes,
		H: set.h, W: set.w, Schedule: schedule, Init: init, Stop: req.Stop, Resume: req.Resume}
	if n == 1 {
		if in.Noise, err = noiseFor(0); err != nil {
			return nil, err
		}
	}
	var noises func(int) ([]float32, error)
	if n > 1 {
		noises = noiseFor
	}
	latents, err := p.DenoiseBatch(ctx, in, n, noises, DenoiseHooks{
		Prefilled: func(progs []Program) { r.progs = progs },
		Start: func(i int) {
			if i > 0 {
				stopSharp()
				startSharp()
			}
			r.image, r.stepsDone = i, 0
			if req.Resume != nil && req.Resume.Image == i {
				r.stepsDone = req.Resume.Step
			}
			r.enter(StageDenoising)
			if req.Resume != nil && req.Resume.Image == i && r.em.out != nil {
				// A resumed image shows where it stopped at once: its saved latents.
				ev := r.event()
				ev.Preview = &Preview{X0: slices.Clone(req.Resume.Latents), H: set.h, W: set.w}
				r.em.emit(ev)
			}
		},
		Notice:    r.notice,
		Recovered: r.recovery,
		Step: func(s StepReport) {
			r.stepsDone = s.Index + 1
			now := time.Now()
			ev := r.event()
			ev.LastStepTime, r.lastStep = now.Sub(r.lastStep), now
			ev.Sigma = s.Sigma
			if r.em.out != nil {
				ev.Preview = &Preview{X0: slices.Clone(s.X0), H: set.h, W: set.w}
			}
			if sharp != nil {
				img, stats := sharp.take()
				ev.Preview.Sharp, ev.Sharp = img, &stats
				sharp.offer(r.stepsDone, s.X0, ev.StepTime)
			}
			memory = ev.Memory
			r.em.emit(ev)
			if req.OnStep != nil {
				req.OnStep(StepState{Image: s.Image, Images: n, Step: s.Index + 1, Steps: s.Steps, Sigmas: schedule.Sigmas,
					Latents: s.Latents, Finished: finished})
			}
		},
	}, finish)
	if err != nil {
		return nil, err
	}
	r.progs = nil
	p.releaseDenoiser()
	stopSharp()
	if err := finish(n-1, latents); err != nil {
		return nil, err
	}
	r.enter(StageDone)
	r.stageTimes[StageDone] = time.Since(r.start)
	timings, gpu := r.timings(), r.p.gpuClasses().Minus(r.gpu0)
	recoveries := p.Recoveries()
	for _, res := range results {
		res.StageTimes, res.StageDeviceTimes, res.Timings, res.Memory = r.stageTimes, r.stageDev, timings, memory
		res.Recoveries = recoveries
		res.GPUClasses = gpu
		res.StagePeakMemory, res.PeakMemoryMethod = r.stagePeak, procmem.Method(r.memExact)
	}
	if n > 1 {
		results[0].Batch = results
	}
	return results[0], nil
}

// encode builds and encodes one prompt.
func (r *run) encode(ctx context.Context, text string, conds []*condimage.ConditionImage, vision []qwen3vl.VisionInput) (*Conditioning, error) {
	prompt, err := r.p.BuildPrompt(text, conds)
	if err != nil {
		return nil, err
	}
	c, err := r.p.EncodePrompt(ctx, prompt.IDs, prompt.Drop, vision)
	r.declineNotices(r.p.textAt)
	return c, err
}
