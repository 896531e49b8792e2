package qi21

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// txtIn is spec §6.4: zero-centred RMSNorm, in_layer, GELU-tanh, out_layer, over [n, context].
func (m *Model) txtIn(e *ml.Scope, text ml.Tensor, n int) ml.Tensor {
	c, w := m.Config, &m.Weights
	D := c.Hidden()
	normed := e.New(n, c.ContextDim)
	e.Do(e.B.RMSNorm(normed, text, w.TextNorm, c.Eps, true))
	h := e.New(n, D)
	m.linear(e, h, normed, w.TxtIn)
	e.Do(e.B.GELUTanh(h, h))
	out := e.New(n, D)
	m.linear(e, out, h, w.TxtOut)
	return out
}

// joint assembles joint rows [r0, r1) of the layout: txt_in over the prompt's text rows and
// img_in over latents (latent rows starting at latent0 of the layout's conditions-then-target
// order), copied run by run into place.
func (m *Model) joint(e *ml.Scope, lay *Layout, text []float32, latents []float32, latent0, r0, r1 int) ml.Tensor {
	c := m.Config
	D := c.Hidden()
	out := e.New(r1-r0, D)
	var txt ml.Tensor
	needText := false
	for _, run := range lay.Runs {
		needText = needText || (run.Text && run.Row < r1 && run.Row+run.Len > r0)
	}
	if needText {
		gathered := make([]float32, 0, lay.TextRows()*c.ContextDim)
		for _, p := range lay.TextPositions {
			gathered = append(gathered, text[p*c.ContextDim:(p+1)*c.ContextDim]...)
		}
		txt = m.txtIn(e, e.Upload(gathered, lay.TextRows(), c.ContextDim), lay.TextRows())
	}
	nLat := len(latents) / c.InChannels
	var img ml.Tensor
	if nLat > 0 {
		img = e.New(nLat, D)
		m.linear(e, img, e.Upload(latents, nLat, c.InChannels), m.Weights.ImgIn)
	}
	for _, run := range lay.Runs {
		lo, hi := max(run.Row, r0), min(run.Row+run.Len, r1)
		if lo >= hi {
			continue
		}
		src, srcRow := txt, run.Src+lo-run.Row
		if !run.Text {
			src, srcRow = img, srcRow-latent0
			if srcRow < 0 || srcRow+hi-lo > nLat {
				e.Do(fmt.Errorf("qi21: joint rows %d..%d need latent rows %d..%d, only %d given", lo, hi, srcRow+latent0, srcRow+latent0+hi-lo, nLat))
				continue
			}
		}
		e.Do(e.B.Copy(e.Rows(out, lo-r0, hi-lo, D), e.Rows(src, srcRow, hi-lo, D)))
	}
	return out
}

// ropeFor uploads the RoPE tables of the given joint rows.
func (m *Model) ropeFor(e *ml.Scope, positions [][]int) *ml.Rope {
	cos, sin, err := ml.RopeTable(positions, m.Config.AxesDims, ropeTheta)
	e.Do(err)
	half := m.Config.HeadDim / 2
	return &ml.Rope{Cos: e.Upload(cos, len(positions), half), Sin: e.Upload(sin, len(positions), half), Pairs: ml.Interleaved}
}

// timestepEmbedding is the sinusoidal embedding of t (σ scale) as diffusers' Timesteps(256,
// flip_sin_to_cos, shift 0, scale 1000) computes it in float32: cos first, then sin.
func timestepEmbedding(t float32) []float32 {
	half := timestepChannels / 2
	out := make([]float32, timestepChannels)
	lnPeriod := float32(-math.Log(10000))
	for j := 0; j < half; j++ {
		exponent := lnPeriod * float32(j) / float32(half)
		freq := float32(math.Exp(float64(exponent)))
		arg := 1000 * (t * freq)
		out[j] = float32(math.Cos(float64(arg)))
		out[half+j] = float32(math.Sin(float64(arg)))
	}
	return out
}

// modulation is the shared per-block modulation of one timestep (spec §6.5) — four one-row views
// of Linear(SiLU(temb)) — and the final norm's scale (§6.10).
type modulation struct {
	all                          ml.Tensor // [1, 4D]
	scale1, gate1, scale2, gate2 ml.Tensor // [D] views of all
	final                        ml.Tensor // [D]
}

// modulationAt runs the timestep embedder at t (σ; 0 for the prefix) and the two heads it feeds.
func (m *Model) modulationAt(e *ml.Scope, t float32) *modulation {
	w := &m.Weights
	D := m.Config.Hidden()
	h := e.New(1, D)
	m.linear(e, h, e.Upload(timestepEmbedding(t), 1, timestepChannels), w.TimeIn)
	e.Do(e.B.SiLU(h, h))
	temb := e.New(1, D)
	m.linear(e, temb, h, w.TimeOut)
	e.Do(e.B.SiLU(temb, temb))
	md := &modulation{all: e.New(1, 4*D), final: e.New(1, D)}
	m.linear(e, md.all, temb, w.Modulation)
	m.linear(e, md.final, temb, w.NormOut)
	chunk := func(i int) ml.Tensor {
		v, err := e.B.Slice(md.all, i*D, D)
		e.Do(err)
		return v
	}
	md.scale1, md.gate1, md.scale2, md.gate2 = chunk(0), chunk(1), chunk(2), chunk(3)
	return md
}
