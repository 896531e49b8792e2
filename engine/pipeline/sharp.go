package pipeline

import (
	"context"
	"image"
	"math"
	"sync"
	"time"

	"easel/engine/ml/cpu"
	"easel/engine/vae"
)

// SharpBudget is the share of the denoising time the sharp preview may cost. After step n it
// starts a decode only when the decode time spent so far plus the expected one stay within
// SharpBudget · n · (mean step time): in steady state one step in k = ⌈decode / (SharpBudget ·
// step)⌉, both times measured during the run. Before the first decode is measured, the expected
// time comes from two probes timed when the run starts, decodes of a 1×1 and a 2×2 grid: a fixed
// cost plus a cost per counted FLOP, extrapolated to the real decode's FLOPs (a small decode is
// mostly fixed cost, so one probe alone overstates a large one many times). The probes' time
// counts as spent.
const SharpBudget = 0.05

// SharpStats are the sharp preview's costs so far in a run, for the timing panel (its own class:
// the decodes run on their own backend, outside Event.Timings).
type SharpStats struct {
	// Decodes finished and Superseded (cancelled because a newer step's arrived first).
	Decodes, Superseded int
	// Time is the wall time spent decoding (superseded decodes included); Last is the latest
	// finished decode's.
	Time, Last time.Duration
	// Every is the current k: about one step in Every is decoded.
	Every int
	// Downsample is the factor the latents are averaged down by before decoding (1, 2 or 4).
	Downsample int
}

// SharpImage is a real VAE decode of a step's x0 estimate at reduced resolution.
type SharpImage struct {
	Image *image.NRGBA
	// Step is the step (1-based) whose x0 it shows; Downsample the latent reduction factor.
	Step, Downsample int
}

// sharpDownsample is the latent reduction for an h×w grid: ×4 from 512 px on the longer side,
// ×2 from 128 px, else none (the decode is already cheap).
func sharpDownsample(h, w int) int {
	switch n := max(h, w); {
	case n >= 32:
		return 4
	case n >= 8:
		return 2
	}
	return 1
}

// SharpGrid is the latent grid a sharp preview of an h×w grid decodes (in one piece, on its own
// CPU VAE, while the denoiser runs): app/memplan counts that decode in the denoiser's stage.
func SharpGrid(h, w int) (sh, sw int) {
	f := sharpDownsample(h, w)
	return ceilDiv(h, f), ceilDiv(w, f)
}

// sharpDecoder owns a VAE of its own (on its own CPU backend, so it never waits for the pipeline's
// and its time stays out of the run's timings) and a goroutine that decodes the latest offered
// x0. The denoiser's goroutine only copies and hands over latents.
type sharpDecoder struct {
	model  *vae.Model
	guard  *cancellable
	factor int
	h, w   int

	mu       sync.Mutex
	pending  *sharpJob
	cancel   context.CancelFunc // of the decode in flight
	ready    *SharpImage        // finished, not yet handed to an event
	stats    SharpStats
	flops    float64       // one decode's counted work, for the first estimate
	estimate float64       // seconds the first decode is expected to take, from the probes (0 until they ran)
	probed   chan struct{} // closed once the probe has run
	busy     bool          // a decode is queued or running
	closed   bool
	wake     chan struct{}
	done     chan struct{}
	// settled, when set (tests), is called after each decode finishes or is cancelled, with the
	// step it was for.
	settled func(step int)
}

type sharpJob struct {
	step int
	x0   []float32
}

// sharpModel is the pipeline's second VAE for sharp previews, bound on first use.
func (p *Pipeline) sharpModel() (*vae.Model, *cancellable, error) {
	p.sharpOnce.Do(func() {
		be, guard := wrapBackend(cpu.New())
		p.sharpGuard = guard
		p.sharpVAE, p.sharpErr = vae.Load(be, p.model)
	})
	return p.sharpVAE, p.sharpGuard, p.sharpErr
}

// newSharpDecoder starts the decoding goroutine for an h×w latent grid.
func newSharpDecoder(m *vae.Model, guard *cancellable, h, w int) *sharpDecoder {
	d := &sharpDecoder{model: m, guard: guard, factor: sharpDownsample(h, w), h: h, w: w,
		wake: make(chan struct{}, 1), done: make(chan struct{}), probed: make(chan struct{})}
	d.stats.Every, d.stats.Downsample = 1, d.factor
	if plan, err := m.PlanDecode(ceilDiv(h, d.factor), ceilDiv(w, d.factor), nil); err == nil {
		d.flops = plan.ConvFLOPs
	}
	go d.loop()
	return d
}

// offer is called after every step n (1-based) with its x0 and the mean step time so far: when
// the budget allows a decode (SharpBudget) the step is queued, superseding a decode still
// running or waiting.
func (d *sharpDecoder) offer(step int, x0 []float32, stepTime time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	expect := d.stats.Last.Seconds()
	if expect == 0 {
		if d.estimate <= 0 {
			return // the probes have not run yet: nothing to estimate the cost from
		}
		expect = d.estimate
	}
	if stepTime > 0 {
		d.stats.Every = max(1, int(math.Ceil(expect/(SharpBudget*stepTime.Seconds()))))
	}
	spent := d.stats.Time.Seconds()
	if d.busy {
		spent += expect
	}
	if d.closed || spent+expect > SharpBudget*float64(step)*stepTime.Seconds() {
		return
	}
	d.busy = true
	if d.cancel != nil {
		d.cancel() // the decode in flight is stale now
	}
	if d.pending != nil {
		d.stats.Superseded++
	}
	d.pending = &sharpJob{step: step, x0: downsampleTokens(x0, d.h, d.w, d.factor)}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// take returns a finished image not yet handed out (nil when none) and the stats.
func (d *sharpDecoder) take() (*SharpImage, SharpStats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	img := d.ready
	d.ready = nil
	return img, d.stats
}

// close stops the goroutine (cancelling a decode in flight) and waits for it.
func (d *sharpDecoder) close() {
	d.mu.Lock()
	d.closed = true
	d.pending = nil
	if d.cancel != nil {
		d.cancel()
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	<-d.done
}

// probe times decodes of 1×1 and 2×2 grids of zero latents and sets the estimate for the real
// decode: the line through the two (time against counted FLOPs), or the 2×2 decode's time per
// FLOP when timing noise makes that line fall.
func (d *sharpDecoder) probe() {
	defer close(d.probed)
	var secs, flops [2]float64
	for i, n := range []int{1, 2} {
		plan, err := d.model.PlanDecode(n, n, nil)
		if err != nil || plan.ConvFLOPs <= 0 {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			cancel()
			return
		}
		d.cancel = cancel
		d.mu.Unlock()
		start := time.Now()
		_, err = d.decode(ctx, make([]float32, n*n*d.model.Config().ZDim), n, n)
		took := time.Since(start)
		cancel()
		d.mu.Lock()
		d.cancel = nil
		d.stats.Time += took
		d.mu.Unlock()
		if err != nil {
			return
		}
		secs[i], flops[i] = took.Seconds(), plan.ConvFLOPs
	}
	est := secs[1] / flops[1] * d.flops
	if slope := (secs[1] - secs[0]) / (flops[1] - flops[0]); slope > 0 && flops[1] > flops[0] {
		est = secs[1] + slope*(d.flops-flops[1])
	}
	d.mu.Lock()
	d.estimate = max(est, secs[1])
	d.mu.Unlock()
}

func (d *sharpDecoder) loop() {
	defer close(d.done)
	d.probe()
	hs, ws := ceilDiv(d.h, d.factor), ceilDiv(d.w, d.factor)
	for range d.wake {
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return
		}
		job := d.pending
		d.pending = nil
		if job == nil {
			d.mu.Unlock()
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		d.cancel = cancel
		d.mu.Unlock()

		start := time.Now()
		img, err := d.decode(ctx, job.x0, hs, ws)
		took := time.Since(start)
		cancel()

		d.mu.Lock()
		d.cancel = nil
		d.stats.Time += took
		d.busy = d.pending != nil
		switch {
		case err == nil:
			d.ready = &SharpImage{Image: img, Step: job.step, Downsample: d.factor}
			d.stats.Decodes++
			d.stats.Last = took
		case ctx.Err() != nil:
			d.stats.Superseded++
		}
		settled := d.settled
		d.mu.Unlock()
		if settled != nil {
			settled(job.step)
		}
	}
}

// decode runs the VAE decoder on reduced latents, answering to ctx between ops.
func (d *sharpDecoder) decode(ctx context.Context, tokens []float32, h, w int) (*image.NRGBA, error) {
	d.guard.begin(ctx)
	defer d.guard.end()
	zn, err := vae.FromTokens(tokens, h, w)
	if err != nil {
		return nil, err
	}
	out, err := d.model.Decode(ctx, zn)
	if err != nil {
		return nil, err
	}
	return vae.ToRGBA(out)
}

// downsampleTokens averages packed tokens [h·w, C] over f×f blocks (edge blocks over what they
// hold) into [⌈h/f⌉·⌈w/f⌉, C]; f = 1 copies.
func downsampleTokens(tokens []float32, h, w, f int) []float32 {
	c := len(tokens) / (h * w)
	hs, ws := ceilDiv(h, f), ceilDiv(w, f)
	out := make([]float32, hs*ws*c)
	for by := range hs {
		for bx := range ws {
			dst := out[(by*ws+bx)*c : (by*ws+bx+1)*c]
			n := 0
			for y := by * f; y < min(h, by*f+f); y++ {
				for x := bx * f; x < min(w, bx*f+f); x++ {
					for ch, v := range tokens[(y*w+x)*c : (y*w+x+1)*c] {
						dst[ch] += v
					}
					n++
				}
			}
			for ch := range dst {
				dst[ch] /= float32(n)
			}
		}
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
