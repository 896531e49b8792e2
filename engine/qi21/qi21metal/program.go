package qi21metal

import (
	"context"
	"easel/engine/ml/metal"
	"fmt"
	"math"
	"strings"
	"time"

	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/kernels/device"
)

// Program is one prompt's prefix on the device: every layer's K/V (half) and the buffers the
// target rows' steps reuse.
type Program struct {
	d      *Denoiser
	layout *qi21.Layout
	// guards are the half guards the prefill ran under (its cached V is stored under the qkv
	// guard), widened by the steps' overflow watch where they may be
	guards  metal.Guards
	prefix  int
	target  int
	bytes   int64
	a       *activations
	pkv     device.Buffer
	ropeCos device.Buffer
	ropeSin device.Buffer
	// ropeSinOff is the byte offset of the sin table in ropeSin (cos and sin share a buffer)
	ropeSinOff int
	mods       device.Buffer // f32 [s1|g1|s2|g2 | fs]
	xtok       device.Buffer
	out        device.Buffer
	owned      []device.Buffer
	closed     bool
}

// Layout is the joint layout the program was prefilled with.
func (p *Program) Layout() *qi21.Layout { return p.layout }

// alloc makes the plan's buffers in order; on failure it releases what it made.
func alloc(dev device.Device, plan memoryPlan) ([]device.Buffer, error) {
	bufs := make([]device.Buffer, 0, len(plan))
	for _, b := range plan {
		buf, err := dev.NewBuffer(int(b.bytes))
		if err != nil {
			for _, x := range bufs {
				x.Release()
			}
			return nil, fmt.Errorf("metal: allocating %s (%s): %w", b.what, metal.FormatBytes(b.bytes), err)
		}
		bufs = append(bufs, buf)
	}
	return bufs, nil
}

// Prefill runs the prefix (text rows from text [L, context], condition images from condLatents
// [CondLatents, in]) through every block at t = 0 under block-causal visibility and keeps each
// layer's K and V on the device. It makes the weight arena again when ReleaseWeights dropped it.
// Before allocating the program it checks its buffers against the device's limits; a *metal.Declined
// error means the caller should prefill on the CPU instead.
func (d *Denoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, condLatents []float32) (*Program, error) {
	c := d.cfg
	if lay == nil {
		return nil, fmt.Errorf("qi21metal.Prefill: no layout")
	}
	if len(text) != lay.TextLen*c.ContextDim {
		return nil, fmt.Errorf("qi21metal.Prefill: %d prompt values for %d rows of %d (the layout's L)", len(text), lay.TextLen, c.ContextDim)
	}
	if len(condLatents) != lay.CondLatents()*c.InChannels {
		return nil, fmt.Errorf("qi21metal.Prefill: %d condition latent values, the layout needs %d rows of %d", len(condLatents), lay.CondLatents(), c.InChannels)
	}
	lp, n := lay.PrefixLen, lay.T
	if lp < 1 || n < 1 {
		return nil, metal.Decline("the layout has %d prefix and %d target rows; the device path needs both", lp, n)
	}
	if err := d.tuneFor(ctx, n, lp); err != nil {
		return nil, err
	}
	plan := programPlan(c, lp, n)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("qi21metal.Prefill: the denoiser is closed")
	}
	if d.live >= qi21.MaxPrograms {
		d.mu.Unlock()
		return nil, fmt.Errorf("qi21metal.Prefill: %d programs are already live (positive and negative prompt); release one first", d.live)
	}
	if err := d.acquireWeights(); err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("qi21metal.Prefill: %w", err)
	}
	if err := d.syncLoRA(); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	if err := plan.fit(fmt.Sprintf("a prompt of %d prefix and %d target rows", lp, n), d.resident, d.maxBuffer, d.wset); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	d.live++
	d.resident += plan.total()
	d.mu.Unlock()

	prog, err := d.prefill(ctx, lay, text, condLatents, plan)
	if err != nil {
		d.mu.Lock()
		d.live--
		d.resident -= plan.total()
		d.mu.Unlock()
		return nil, err
	}
	return prog, nil
}

func (d *Denoiser) prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32, plan memoryPlan) (*Program, error) {
	c := d.cfg
	D, lp, n := c.Hidden(), lay.PrefixLen, lay.T
	x, err := d.model.PrefixRows(ctx, lay, text, cond)
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Prefill: the prefix rows on the host: %w", err)
	}
	mods0, _, err := d.model.Modulation(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Prefill: the host: %w", err)
	}
	vis, err := ml.BlockCausalVisibility(lay.ImageIDs[:lp])
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Prefill: %w", err)
	}
	pcos, psin, err := d.model.RopeTables(lay.Positions[:lp])
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Prefill: %w", err)
	}
	tcos, tsin, err := d.model.RopeTables(lay.Positions[lp:])
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Prefill: %w", err)
	}

	bufs, err := alloc(d.dev, plan)
	if err != nil {
		return nil, err
	}
	p := &Program{d: d, layout: lay, prefix: lp, target: n, bytes: plan.total(), owned: bufs[:firstTemporary],
		a: &activations{rows: activationRows(max(lp, n)), x: bufs[bufX], xn: bufs[bufXN], panel: bufs[bufPanel],
			attn: bufs[bufAttn], y: bufs[bufY], gu: bufs[bufGateUp], hid: bufs[bufHidden]},
		pkv: bufs[bufKV], mods: bufs[bufStepMods], xtok: bufs[bufTokens], out: bufs[bufVelocity],
		ropeCos: bufs[bufTargetRope], ropeSin: bufs[bufTargetRope], ropeSinOff: 4 * len(tcos)}
	defer func() {
		for _, b := range bufs[firstTemporary:] {
			b.Release()
		}
	}()
	copy(device.View[float32](p.ropeCos), tcos)
	copy(device.View[float32](p.ropeCos)[len(tcos):], tsin)
	prefixRope, visible, prefixMods := bufs[bufPrefixRope], bufs[bufVisible], bufs[bufPrefixMods]
	copy(device.View[float32](prefixRope), pcos)
	copy(device.View[float32](prefixRope)[len(pcos):], psin)
	for i, v := range vis {
		device.View[uint32](visible)[i] = uint32(v)
	}
	copy(device.View[float32](prefixMods), mods0)

	p.guards = d.Guards()
	err = d.runWatched("prefill", &p.guards, nil, nil, func(g metal.Guards) ([]float32, []float32, error) {
		copy(device.View[float32](p.a.x), x) // again on a retry: a stopped pass left it part-way
		e := d.newEncoder(ctx, g)
		e.rowOp(p.a, lp, prefixMods, -1, 0, pow2(-g.Attn))
		e.recordAmax(p.a.xn, lp*D, 0, 0)
		e.blocks(&pass{a: p.a, rows: lp, ropeCos: prefixRope, ropeSin: prefixRope, ropeSinOff: 4 * len(pcos),
			mods: prefixMods, pkv: p.pkv, prefix: lp, vis: visible})
		watch, err := d.finishPass(e, "prefill")
		return watch, nil, err
	})
	if err != nil {
		p.release()
		return nil, fmt.Errorf("qi21metal.Prefill: %w", err)
	}
	return p, nil
}

// Step runs the target rows x [T, in] at σ against the program's cached prefix and returns the
// velocity [T, out].
func (d *Denoiser) Step(ctx context.Context, p *Program, x []float32, sigma float32) ([]float32, error) {
	if p == nil || p.d != d {
		return nil, fmt.Errorf("qi21metal.Step: the program was not prefilled by this denoiser")
	}
	if p.closed {
		return nil, fmt.Errorf("qi21metal.Step: the program was released")
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("qi21metal.Step: the denoiser is closed")
	}
	c := d.cfg
	D, n := c.Hidden(), p.target
	if len(x) != n*c.InChannels {
		return nil, fmt.Errorf("qi21metal.Step: %d latent values, the layout needs %d rows of %d", len(x), n, c.InChannels)
	}
	mods, fs, err := d.model.Modulation(ctx, sigma)
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Step: the host: %w", err)
	}
	mv := device.View[float32](p.mods)
	copy(mv, mods)
	copy(mv[4*D:], fs)
	copy(device.View[float32](p.xtok), x)

	var out []float32
	// The prefix V in the program's K/V cache is stored under its qkv guard: a step cannot widen it.
	replan := func() string { return d.shrinkActivations(p) }
	err = d.runWatched("step", &p.guards, []int{siteQKV}, replan, func(g metal.Guards) ([]float32, []float32, error) {
		if p.a == nil {
			return nil, nil, metal.Decline("the GPU ran out of memory for the denoiser's step, and its activation buffers could not be made again smaller; close other apps or choose a smaller size to run it on the GPU")
		}
		e := d.newEncoder(ctx, g)
		e.embed(p.xtok, p.a.x, n)
		e.rowOp(p.a, n, p.mods, -1, 0, pow2(-g.Attn))
		e.recordAmax(p.a.xn, n*D, 0, 0)
		e.blocks(&pass{a: p.a, rows: n, ropeCos: p.ropeCos, ropeSin: p.ropeSin, ropeSinOff: p.ropeSinOff,
			mods: p.mods, pkv: p.pkv, prefix: p.prefix})
		e.final(p.a.x, p.mods, 4*4*D, p.out, p.a.y, n)
		watch, err := d.finishPass(e, "step")
		if err != nil {
			return nil, nil, err
		}
		out = make([]float32, n*c.OutChannels)
		copy(out, device.View[float32](p.out))
		return watch, out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("qi21metal.Step: %w", err)
	}
	return out, nil
}

// Release drops a program's device memory. Releasing twice is harmless.
func (d *Denoiser) Release(p *Program) {
	if p == nil || p.d != d || p.closed {
		return
	}
	p.release()
	d.mu.Lock()
	d.live--
	d.resident -= p.bytes
	d.mu.Unlock()
}

func (p *Program) release() {
	p.closed = true
	for _, b := range p.owned {
		if b != nil { // nil: released by a re-plan that could not make its replacement
			b.Release()
		}
	}
	p.owned = nil
}

// newEncoder starts a pass under the guards g, with the overflow watch's slots (one per block and
// half site; without them, if they cannot be made, only the velocity is checked).
func (d *Denoiser) newEncoder(ctx context.Context, g metal.Guards) *encoder {
	e := &encoder{rec: newRecorder(ctx, d.dev, d.knobs.Profile), d: d, guards: g, perBuffer: d.blocksPerBuffer(), gemmChunks: d.gemmChunks()}
	if b, err := d.dev.NewBuffer(4 * len(amaxSites) * (len(d.blocks) + 1)); err == nil {
		e.amax = b
	}
	return e
}

// finishPass waits for the pass, records its GPU time (per class in profiling mode) and, with
// EASEL_METAL_AMAX, the largest stored value per half site, logs them when asked, and returns the
// overflow watch's slots (one per block and site; nil without them).
func (d *Denoiser) finishPass(e *encoder, what string) ([]float32, error) {
	st, err := e.rec.finish()
	st.LoRAFlops = e.loraFlops
	for _, b := range append(e.loraOld, e.loraT) {
		if b != nil {
			b.Release()
		}
	}
	if err == nil {
		err = e.loraErr
	}
	var watch []float32
	if e.amax != nil {
		for _, bits := range device.View[uint32](e.amax) {
			watch = append(watch, math.Float32frombits(bits))
		}
		e.amax.Release()
		if d.knobs.Amax {
			st.Amax = foldSites(watch)
		}
	}
	d.mu.Lock()
	d.last = st
	d.deviceTime += st.GPU
	d.mu.Unlock()
	d.gpu.AddClasses(st.Classes)
	if err != nil {
		return nil, err
	}
	if d.knobs.Profile {
		for cl, t := range st.ByClass {
			if t > 0 {
				d.timings.Add(ml.Class(cl), t, 0)
			}
		}
	}
	if d.logf != nil && (d.knobs.Profile || d.knobs.Amax) {
		d.logf("metal %s on %s: %s", what, d.dev.Name(), st.describe(e.guards))
	}
	return watch, nil
}

// describe is one report line.
func (st PassStats) describe(g metal.Guards) string {
	s := fmt.Sprintf("%.1f ms device time in %d command buffers", ms(st.GPU), st.CommandBuffers)
	var parts []string
	for cl, t := range st.ByClass {
		if t > 0 {
			parts = append(parts, fmt.Sprintf("%v %.1f", ml.Class(cl), ms(t)))
		}
	}
	if len(parts) > 0 {
		s += " · " + strings.Join(parts, " · ")
	}
	if len(st.Amax) > 0 {
		var a []string
		for i, v := range st.Amax {
			a = append(a, fmt.Sprintf("%s %.3g", amaxSites[i], v))
		}
		s += fmt.Sprintf(" · amax (stored; guards attn %d qkv %d ao %d ffn %d hid %d): %s", g.Attn, g.QKV, g.AO, g.FFN, g.Hid, strings.Join(a, " · "))
	}
	return s
}

func ms(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
