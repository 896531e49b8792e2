package qi21

import (
	"math"

	"easel/engine/ml"
	"easel/engine/quant"
)

// group is a contiguous range of a pass's rows that share one modulation (the prefix at t = 0,
// the target at σ).
type group struct {
	row0, rows int
	mod        *modulation
}

// scratch holds one pass's activations.
type scratch struct {
	xn, q, k, v, attn, y, gate, up ml.Tensor
}

// free releases the activations.
func (s *scratch) free(be ml.Backend) {
	for _, t := range []ml.Tensor{s.xn, s.q, s.k, s.v, s.attn, s.y, s.gate, s.up} {
		be.Free(t)
	}
}

func newScratch(e *ml.Scope, c Config, rows int) *scratch {
	D, F := c.Hidden(), c.MLPHidden()
	return &scratch{
		xn: e.New(rows, D), q: e.New(rows, D), k: e.New(rows, D), v: e.New(rows, D),
		attn: e.New(rows, D), y: e.New(rows, D), gate: e.New(rows, F), up: e.New(rows, F),
	}
}

// pass is one run of rows through the blocks: the whole joint sequence (Forward), the prefix
// (Prefill: block-causal, keeping K/V), or the target (Step: against the cached prefix).
type pass struct {
	x       ml.Tensor // [rows, D], the residual stream
	rows    int
	groups  []group
	rope    *ml.Rope
	visible []int32     // nil: every key visible
	prefixK []ml.Tensor // per layer [prefix, D], or nil
	prefixV []ml.Tensor
	keepK   []ml.Tensor // per layer destinations for this pass's K and V, or nil
	keepV   []ml.Tensor
	// keepHalf keeps this pass's K and V in half instead (Prefill), and prefixHalf is the cached
	// prefix in half (Step), widened one layer at a time into widen.
	keepHalf   *halfCache
	prefixHalf *halfCache
	widen      []float32
	s          *scratch
}

// rowOp applies the gated residual x += tanh(gate)·y (when y is given) and the modulated
// LayerNorm dst = LN(x)·(1 + scale) (when dst is given) group by group.
func (m *Model) rowOp(e *ml.Scope, p *pass, y ml.Tensor, gate func(*modulation) ml.Tensor, dst ml.Tensor, scale func(*modulation) ml.Tensor) {
	D := m.Config.Hidden()
	for _, g := range p.groups {
		var yg, gt, dg, sc ml.Tensor
		if y != nil {
			yg, gt = e.Rows(y, g.row0, g.rows, D), gate(g.mod)
		}
		if dst != nil {
			dg, sc = e.Rows(dst, g.row0, g.rows, D), scale(g.mod)
		}
		e.Do(e.B.GatedResidualModNorm(e.Rows(p.x, g.row0, g.rows, D), yg, gt, dg, sc, m.Config.Eps))
	}
}

func scale1(md *modulation) ml.Tensor { return md.scale1 }
func gate1(md *modulation) ml.Tensor  { return md.gate1 }
func scale2(md *modulation) ml.Tensor { return md.scale2 }
func gate2(md *modulation) ml.Tensor  { return md.gate2 }
func final(md *modulation) ml.Tensor  { return md.final }

// block is spec §6.6–6.7 for block l:
//
//	h  = LN(x)·(1 + s1);  q, k, v = to_q/k/v(h);  q, k = RoPE(RMSNorm(q)), RoPE(RMSNorm(k))
//	x += tanh(g1) · to_out(softmax(q·[K_prefix; k]ᵀ/√d + visibility)·[V_prefix; v])
//	h2 = LN(x)·(1 + s2);  x += tanh(g2) · out(SiLU(gate_layer(h2)) ⊙ proj(h2))
func (m *Model) block(e *ml.Scope, l int, p *pass) {
	c, blk, s := m.Config, &m.Blocks[l], p.s
	m.rowOp(e, p, nil, nil, s.xn, scale1)
	m.linearBatch(e, []ml.Tensor{s.q, s.k, s.v}, s.xn, []*quant.Tensor{blk.ToQ, blk.ToK, blk.ToV})
	e.Do(e.B.HeadNormRoPE(s.q, c.Heads, c.HeadDim, blk.NormQ, c.Eps, p.rope))
	e.Do(e.B.HeadNormRoPE(s.k, c.Heads, c.HeadDim, blk.NormK, c.Eps, p.rope))
	if p.keepK != nil {
		e.Do(e.B.Copy(p.keepK[l], s.k))
		e.Do(e.B.Copy(p.keepV[l], s.v))
	}
	if p.keepHalf != nil {
		p.keepHalf.store(e, l, s.k, s.v)
	}
	var pk, pv ml.Tensor
	if p.prefixK != nil {
		pk, pv = p.prefixK[l], p.prefixV[l]
	}
	if p.prefixHalf != nil {
		pk, pv = p.prefixHalf.load(e, l, p.widen)
		defer e.B.Free(pk)
		defer e.B.Free(pv)
	}
	spec := ml.AttnSpec{Heads: c.Heads, KVHeads: c.Heads, HeadDim: c.HeadDim, Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Visible: p.visible}
	e.Do(e.B.Attention(s.attn, s.q, s.k, s.v, pk, pv, spec))
	m.linear(e, s.y, s.attn, blk.ToOut)
	m.rowOp(e, p, s.y, gate1, s.xn, scale2)
	m.linearBatch(e, []ml.Tensor{s.gate, s.up}, s.xn, []*quant.Tensor{blk.Gate, blk.Up})
	e.Do(e.B.SwiGLU(s.gate, s.gate, s.up))
	m.linear(e, s.y, s.gate, blk.Down)
	m.rowOp(e, p, s.y, gate2, nil, nil)
}

// output is spec §6.10: proj_out(LN(x)·(1 + norm_out scale)) over the pass's rows.
func (m *Model) output(e *ml.Scope, p *pass) []float32 {
	m.rowOp(e, p, nil, nil, p.s.xn, final)
	out := e.New(p.rows, m.Config.OutChannels)
	m.linear(e, out, p.s.xn, m.Weights.ProjOut)
	return e.Download(out)
}

// run sends the pass through every block.
func (m *Model) run(e *ml.Scope, p *pass) {
	for l := range m.Blocks {
		if e.Err() != nil {
			return
		}
		m.block(e, l, p)
	}
}
