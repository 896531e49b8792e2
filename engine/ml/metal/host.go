package metal

import (
	"fmt"
	"math"

	"easel/engine/ml"
	"easel/engine/qi21"
)

// The denoiser's host work — what runs once per prompt or once per step on a few rows — on the
// model's own backend (the CPU): txt_in and img_in of the prefix rows, the timestep modulation,
// RoPE tables. It restates engine/qi21's unexported embed.go (same ops, same order) because
// qi21 does not export these pieces; the parity tests hold the two together.

// ropeTheta and timestepChannels are qi21's (spec §6.1, §6.5).
const (
	ropeTheta        = 10000
	timestepChannels = 256
)

// hostOps runs a sequence of backend ops keeping the first error.
type hostOps struct {
	be  ml.Backend
	err error
}

func (h *hostOps) do(err error) {
	if h.err == nil && err != nil {
		h.err = err
	}
}

func (h *hostOps) new(shape ...int) ml.Tensor {
	t, err := h.be.New(shape...)
	h.do(err)
	return t
}

func (h *hostOps) upload(v []float32, shape ...int) ml.Tensor {
	t, err := h.be.Upload(v, shape...)
	h.do(err)
	return t
}

func (h *hostOps) download(t ml.Tensor) []float32 {
	if h.err != nil {
		return nil
	}
	v, err := h.be.Download(t)
	h.do(err)
	return v
}

// prefixRows is the joint sequence's prefix [PrefixLen, D] before the first block: txt_in over
// the prompt's text rows and img_in over the condition latents, placed run by run.
func prefixRows(m *qi21.Model, lay *qi21.Layout, text, cond []float32) ([]float32, error) {
	c, w := m.Config, &m.Weights
	D, lp := c.Hidden(), lay.PrefixLen
	h := &hostOps{be: m.Backend()}
	var txt []float32
	if n := lay.TextRows(); n > 0 {
		gathered := make([]float32, 0, n*c.ContextDim)
		for _, p := range lay.TextPositions {
			gathered = append(gathered, text[p*c.ContextDim:(p+1)*c.ContextDim]...)
		}
		normed := h.new(n, c.ContextDim)
		h.do(h.be.RMSNorm(normed, h.upload(gathered, n, c.ContextDim), w.TextNorm, c.Eps, true))
		mid := h.new(n, D)
		h.do(h.be.Linear(mid, normed, w.TxtIn))
		h.do(h.be.GELUTanh(mid, mid))
		out := h.new(n, D)
		h.do(h.be.Linear(out, mid, w.TxtOut))
		txt = h.download(out)
	}
	var img []float32
	if n := len(cond) / c.InChannels; n > 0 {
		out := h.new(n, D)
		h.do(h.be.Linear(out, h.upload(cond, n, c.InChannels), w.ImgIn))
		img = h.download(out)
	}
	if h.err != nil {
		return nil, fmt.Errorf("metal: the prefix rows on the host: %w", h.err)
	}
	x := make([]float32, lp*D)
	for _, run := range lay.Runs {
		lo, hi := run.Row, min(run.Row+run.Len, lp)
		if lo >= hi {
			continue
		}
		src := txt
		if !run.Text {
			src = img
		}
		s0 := run.Src * D
		if s0+(hi-lo)*D > len(src) {
			return nil, fmt.Errorf("metal: joint rows %d..%d need source rows %d..%d, only %d given", lo, hi, run.Src, run.Src+hi-lo, len(src)/D)
		}
		copy(x[lo*D:hi*D], src[s0:s0+(hi-lo)*D])
	}
	return x, nil
}

// modulation is one timestep's shared modulation [s1|g1|s2|g2] (4D) and 1 + the final norm's
// scale (D), the vectors the row ops and qi_final read.
func modulation(m *qi21.Model, t float32) (mods, fs []float32, err error) {
	w := &m.Weights
	D := m.Config.Hidden()
	h := &hostOps{be: m.Backend()}
	hid := h.new(1, D)
	h.do(h.be.Linear(hid, h.upload(timestepEmbedding(t), 1, timestepChannels), w.TimeIn))
	h.do(h.be.SiLU(hid, hid))
	temb := h.new(1, D)
	h.do(h.be.Linear(temb, hid, w.TimeOut))
	h.do(h.be.SiLU(temb, temb))
	all := h.new(1, 4*D)
	h.do(h.be.Linear(all, temb, w.Modulation))
	final := h.new(1, D)
	h.do(h.be.Linear(final, temb, w.NormOut))
	mods, fs = h.download(all), h.download(final)
	if h.err != nil {
		return nil, nil, fmt.Errorf("metal: the modulation at t=%v on the host: %w", t, h.err)
	}
	for i := range fs {
		fs[i]++
	}
	return mods, fs, nil
}

// timestepEmbedding is diffusers' Timesteps(256, flip_sin_to_cos, shift 0, scale 1000) in
// float32, as qi21 computes it: cos first, then sin.
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

// ropeTables are the cos and sin tables [rows, HeadDim/2] of the given joint rows.
func ropeTables(c qi21.Config, positions [][]int) (cos, sin []float32, err error) {
	return ml.RopeTable(positions, c.AxesDims, ropeTheta)
}
