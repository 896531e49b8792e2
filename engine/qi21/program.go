package qi21

import (
	"context"
	"fmt"

	"easel/engine/ml"
)

// Program is one prompt's prepared prefix: every layer's keys and values of the text and
// condition-image rows (after q/k-norm and RoPE), and what the target rows' steps need.
type Program struct {
	model  *Model
	layout *Layout
	k, v   []ml.Tensor // per layer [PrefixLen, D], float32 (Model.FloatKV)
	half   *halfCache  // the same in half precision (the default)
	rope   *ml.Rope    // the target rows' tables
	closed bool
}

// Layout is the joint layout the program was prefilled with.
func (p *Program) Layout() *Layout { return p.layout }

// Prefill runs the prefix (text rows from text [L, context], condition images from
// condLatents [CondLatents, in]) through every block at t = 0 under block-causal visibility and
// keeps each layer's K and V. At most MaxPrograms programs live at once; Release them when done.
// A cancelled ctx stops it at the next linear layer or attention (and no program is kept).
func (m *Model) Prefill(ctx context.Context, lay *Layout, text, condLatents []float32) (*Program, error) {
	if err := m.checkInputs("Prefill", lay, text, condLatents, lay.CondLatents()); err != nil {
		return nil, err
	}
	if text == nil {
		return nil, fmt.Errorf("qi21.Prefill: no prompt embeddings")
	}
	m.mu.Lock()
	if m.live >= MaxPrograms {
		m.mu.Unlock()
		return nil, fmt.Errorf("qi21.Prefill: %d programs are already live (positive and negative prompt); release one first", m.live)
	}
	m.live++
	m.mu.Unlock()
	kept := false
	defer func() { // also when prefill panics (the model file faulted): the slot is free again
		if !kept {
			m.mu.Lock()
			m.live--
			m.mu.Unlock()
		}
	}()
	prog, err := m.prefill(ctx, lay, text, condLatents)
	if err != nil {
		return nil, fmt.Errorf("qi21.Prefill: %w", err)
	}
	kept = true
	return prog, nil
}

func (m *Model) prefill(ctx context.Context, lay *Layout, text, condLatents []float32) (*Program, error) {
	e := ml.NewScope(ml.WithContext(m.be, ctx))
	D, lp := m.Config.Hidden(), lay.PrefixLen
	prog := &Program{model: m, layout: lay}
	if m.FloatKV {
		prog.k, prog.v = make([]ml.Tensor, len(m.Blocks)), make([]ml.Tensor, len(m.Blocks))
		for l := range m.Blocks {
			prog.k[l], prog.v[l] = e.New(lp, D), e.New(lp, D)
		}
	} else {
		prog.half = newHalfCache(len(m.Blocks), lp, D)
	}
	if lp > 0 {
		vis, err := ml.BlockCausalVisibility(lay.ImageIDs[:lp])
		e.Do(err)
		s := newScratch(e, m.Config, lp)
		p := &pass{
			x:        m.joint(e, lay, text, condLatents, 0, 0, lp),
			rows:     lp,
			groups:   []group{{0, lp, m.modulationAt(e, 0)}},
			rope:     m.ropeFor(e, lay.Positions[:lp]),
			visible:  vis,
			keepK:    prog.k,
			keepV:    prog.v,
			keepHalf: prog.half,
			s:        s,
		}
		m.run(e, p)
		s.free(e.B)
		e.B.Free(p.x)
	}
	prog.rope = m.ropeFor(e, lay.Positions[lp:])
	if e.Err() != nil {
		prog.free()
		return nil, e.Err()
	}
	return prog, nil
}

// Step runs the target rows x [T, in] at σ against the program's cached prefix and returns the
// velocity [T, out]. A cancelled ctx stops it at the next linear layer or attention.
func (m *Model) Step(ctx context.Context, prog *Program, x []float32, sigma float32) ([]float32, error) {
	if prog == nil || prog.model != m {
		return nil, fmt.Errorf("qi21.Step: the program was not prefilled by this model")
	}
	lay := prog.layout
	if err := m.checkInputs("Step", lay, nil, x, lay.T); err != nil {
		return nil, err
	}
	e := ml.NewScope(ml.WithContext(m.be, ctx))
	m.stepMu.Lock()
	defer m.stepMu.Unlock()
	if prog.closed {
		return nil, fmt.Errorf("qi21.Step: the program was released")
	}
	if m.stepScratch == nil || m.stepRows != lay.T {
		if m.stepScratch != nil {
			m.stepScratch.free(m.be)
		}
		m.stepScratch, m.stepRows = newScratch(e, m.Config, lay.T), lay.T
		if e.Err() != nil {
			m.stepScratch = nil
			return nil, fmt.Errorf("qi21.Step: %w", e.Err())
		}
	}
	p := &pass{
		x:       m.joint(e, lay, nil, x, lay.CondLatents(), lay.PrefixLen, lay.S),
		rows:    lay.T,
		groups:  []group{{0, lay.T, m.modulationAt(e, sigma)}},
		rope:    prog.rope,
		s:       m.stepScratch,
		prefixK: prog.k,
		prefixV: prog.v,
	}
	if prog.half != nil {
		if n := lay.PrefixLen * m.Config.Hidden(); len(m.widen) < n {
			m.widen = make([]float32, n)
		}
		p.prefixHalf, p.widen = prog.half, m.widen
	}
	if lay.PrefixLen == 0 {
		p.prefixK, p.prefixV, p.prefixHalf = nil, nil, nil
	}
	m.run(e, p)
	out := m.output(e, p)
	e.B.Free(p.x)
	if e.Err() != nil {
		return nil, fmt.Errorf("qi21.Step: %w", e.Err())
	}
	return out, nil
}

// Release drops a program's cache (after a step running on it has finished). Releasing twice is
// harmless.
func (m *Model) Release(prog *Program) {
	if prog == nil || prog.model != m {
		return
	}
	m.stepMu.Lock()
	defer m.stepMu.Unlock()
	if prog.closed {
		return
	}
	prog.free()
	m.mu.Lock()
	m.live--
	last := m.live == 0
	m.mu.Unlock()
	if last && m.stepScratch != nil {
		m.stepScratch.free(m.be)
		m.stepScratch = nil
	}
	if last {
		m.widen = nil
	}
}

func (p *Program) free() {
	p.closed = true
	be := p.model.be
	for l := range p.k {
		be.Free(p.k[l])
		be.Free(p.v[l])
	}
	p.half = nil
}

// CacheBytes is the size of the program's prefix K/V cache (every layer's keys and values of the
// prefix rows, in half unless Model.FloatKV): for the memory ledger.
func (p *Program) CacheBytes() int64 {
	if p.half != nil {
		return p.half.bytes()
	}
	c := p.model.Config
	return int64(c.Layers) * 2 * int64(p.layout.PrefixLen) * int64(c.Hidden()) * int64(p.KVElementBytes())
}

// KVElementBytes is the size of one cached key or value: 2 (half), or 4 under Model.FloatKV.
func (p *Program) KVElementBytes() int { return p.model.KVElementBytes() }

// ActivationBytes is the size of the target-row activations a step uses (float32). The model's
// programs share one set: steps run one at a time.
func (p *Program) ActivationBytes() int64 {
	c := p.model.Config
	return int64(p.layout.T) * (6*int64(c.Hidden()) + 2*int64(c.MLPHidden())) * 4
}
