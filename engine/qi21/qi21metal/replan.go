package qi21metal

import (
	"fmt"

	"easel/engine/ml/metal"
)

// The out-of-memory re-plan of a step. A program's activation buffers are planned for the larger
// of its prefix and its target (programPlan: the prefill runs the prefix through them), but its
// steps run only the target's rows. After a GPU out-of-memory error in a step, before the one
// retry, the program gives back the difference: its activation buffers are released and made
// again for the target's rows. The buffers are scratch (every step recomputes them from the
// latent tokens and the cached prefix K/V), so the step's velocity is bit for bit the same.
// Nothing else of the denoiser's can shrink: the weight arena is read in place from the model
// file's mapping, the K/V cache is the prompt's, and the small step buffers are the step's own.

// shrinkActivations re-plans p's activation buffers for its target rows and says what it did
// ("" when they already are the target's). When the smaller buffers cannot be made, p keeps none
// and its steps decline (the Runner then moves the prompt to the CPU).
func (d *Denoiser) shrinkActivations(p *Program) string {
	rows := activationRows(p.target)
	if p.a == nil || p.a.rows <= rows {
		return ""
	}
	full := programPlan(d.cfg, p.prefix, p.target)[bufX : bufHidden+1]
	small := programPlan(d.cfg, p.target, p.target)[bufX : bufHidden+1]
	for i := bufX; i <= bufHidden; i++ {
		p.owned[i].Release()
		p.owned[i] = nil
	}
	p.a = nil
	bufs, err := alloc(d.dev, small)
	d.mu.Lock()
	d.resident -= full.total()
	p.bytes -= full.total()
	if err == nil {
		d.resident += small.total()
		p.bytes += small.total()
	}
	d.mu.Unlock()
	if err != nil {
		return fmt.Sprintf("released the step's activation buffers (%s) but could not make smaller ones (%v)", metal.FormatBytes(full.total()), err)
	}
	copy(p.owned[bufX:bufHidden+1], bufs)
	p.a = &activations{rows: rows, x: bufs[bufX-bufX], xn: bufs[bufXN-bufX], panel: bufs[bufPanel-bufX],
		attn: bufs[bufAttn-bufX], y: bufs[bufY-bufX], gu: bufs[bufGateUp-bufX], hid: bufs[bufHidden-bufX]}
	return fmt.Sprintf("re-planned the step's activation buffers for its %d target rows instead of %d prefix rows (%s less GPU memory)",
		p.target, p.prefix, metal.FormatBytes(full.total()-small.total()))
}
