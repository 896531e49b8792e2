package metal

import (
	"fmt"
	"strings"

	"easel/engine/qi21"
)

// plannedBuffer is one device buffer the denoiser will allocate.
type plannedBuffer struct {
	what  string
	bytes int64
}

// memoryPlan is a set of buffers allocated together.
type memoryPlan []plannedBuffer

func (p memoryPlan) total() int64 {
	var n int64
	for _, b := range p {
		n += b.bytes
	}
	return n
}

// fit checks the plan before anything is allocated: every buffer against the device's largest
// buffer, and the plan plus what is already resident against its recommended working set. The
// error is a *Declined sentence naming the buffer or the totals.
func (p memoryPlan) fit(what string, resident, maxBuffer, workingSet int64) error {
	for _, b := range p {
		if b.bytes > maxBuffer {
			size, limit := gbPair(b.bytes, maxBuffer)
			return decline("%s needs a buffer of %s for %s, more than this GPU's largest buffer (%s)", what, size, b.what, limit)
		}
	}
	if need := resident + p.total(); need > workingSet {
		size, limit := gbPair(need, workingSet)
		return decline("%s needs %s of GPU memory (%s already in use, %s more), more than this GPU's recommended working set (%s)", what, size, gb(resident), gb(p.total()), limit)
	}
	return nil
}

func (p memoryPlan) String() string {
	var s []string
	for _, b := range p {
		s = append(s, fmt.Sprintf("%s %s", b.what, gb(b.bytes)))
	}
	return strings.Join(s, ", ")
}

// activationRows is how many rows the activation buffers hold for a pass of rows: rounded up to
// the GEMM's 128-row tiles, plus a spare tile the kernels may read past the last row (the seed's
// margin).
func activationRows(rows int) int {
	return (rows+127)/128*128 + 128
}

// programPlan is the device memory of one program: the prefix K/V of every layer (half), the
// activations sized for the larger of the prefix and the target, the target's inputs and output,
// and the prefill's temporaries (prefix RoPE tables, visibility, t = 0 modulation).
func programPlan(c qi21.Config, prefix, target int) memoryPlan {
	D, F := int64(c.Hidden()), int64(c.MLPHidden())
	lp, n := int64(prefix), int64(target)
	a := int64(activationRows(max(prefix, target)))
	half := int64(c.HeadDim / 2)
	return memoryPlan{
		{"the prefix K/V", int64(c.Layers) * max(lp, 1) * 2 * D * 2},
		{"the residual stream", a * D * 4},
		{"the normalized rows", a * D * 2},
		{"the qkv panel", a * 3 * D * 2},
		{"the attention output", a * D * 2},
		{"the block output", a * D * 4},
		{"the gate/up activations", 2 * a * F * 4},
		{"the SwiGLU hidden layer", a * F * 2},
		{"the target RoPE tables", 2 * n * half * 4},
		{"the step modulation", 5 * D * 4},
		{"the latent tokens", n * int64(c.InChannels) * 4},
		{"the velocity", n * int64(c.OutChannels) * 4},
		{"the prefix RoPE tables", 2 * max(lp, 1) * half * 4},
		{"the visibility", max(lp, 1) * 4},
		{"the prefix modulation", 4 * D * 4},
	}
}
