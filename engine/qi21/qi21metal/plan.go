package qi21metal

import (
	"easel/engine/ml/metal"
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
// error is a *metal.Declined sentence naming the buffer or the totals.
func (p memoryPlan) fit(what string, resident, maxBuffer, workingSet int64) error {
	for _, b := range p {
		if b.bytes > maxBuffer {
			size, limit := metal.FormatBytePair(b.bytes, maxBuffer)
			return metal.Decline("%s needs a buffer of %s for %s, more than this GPU's largest buffer (%s)", what, size, b.what, limit)
		}
	}
	if need := resident + p.total(); need > workingSet {
		size, limit := metal.FormatBytePair(need, workingSet)
		return metal.Decline("%s needs %s of GPU memory (%s already in use, %s more), more than this GPU's recommended working set (%s)", what, size, metal.FormatBytes(resident), metal.FormatBytes(p.total()), limit)
	}
	return nil
}

func (p memoryPlan) String() string {
	var s []string
	for _, b := range p {
		s = append(s, fmt.Sprintf("%s %s", b.what, metal.FormatBytes(b.bytes)))
	}
	return strings.Join(s, ", ")
}

// activationRows is how many rows the activation buffers hold for a pass of rows: rounded up to
// the GEMM's 128-row tiles, plus a spare tile the kernels may read past the last row (the seed's
// margin).
func activationRows(rows int) int {
	return (rows+127)/128*128 + 128
}

// The buffers of a program, in programPlan order. From firstTemporary on they live only during
// the prefill.
const (
	bufKV         = iota // half [layers][prefix][2D]: every layer's K | V
	bufX                 // f32 [rows][D]: the residual stream
	bufXN                // half [rows][D]: the modulated LayerNorm
	bufPanel             // half [rows][3D]: q | k | v
	bufAttn              // half [rows][D]: attention output
	bufY                 // f32 [rows][D]: a projection's output
	bufGateUp            // f32 [2][rows][F]
	bufHidden            // half [rows][F]: SwiGLU
	bufTargetRope        // f32 cos [T][HeadDim/2] then sin
	bufStepMods          // f32 [s1|g1|s2|g2|fs]
	bufTokens            // f32 [T][in]: a step's latent tokens
	bufVelocity          // f32 [T][out]
	bufPrefixRope        // f32 cos [prefix][HeadDim/2] then sin
	bufVisible           // uint [prefix]: visible keys per prefix row
	bufPrefixMods        // f32 [s1|g1|s2|g2] at t = 0
	numProgramBuffers
	firstTemporary = bufPrefixRope
)

// programPlan is the device memory of one program: the prefix K/V of every layer (half), the
// activations sized for the larger of the prefix and the target, the target's inputs and output,
// and the prefill's temporaries (prefix RoPE tables, visibility, t = 0 modulation).
func programPlan(c qi21.Config, prefix, target int) memoryPlan {
	D, F := int64(c.Hidden()), int64(c.MLPHidden())
	lp, n := int64(max(prefix, 1)), int64(target)
	a := int64(activationRows(max(prefix, target)))
	half := int64(c.HeadDim / 2)
	plan := make(memoryPlan, numProgramBuffers)
	plan[bufKV] = plannedBuffer{"the prefix K/V", int64(c.Layers) * lp * 2 * D * 2}
	plan[bufX] = plannedBuffer{"the residual stream", a * D * 4}
	plan[bufXN] = plannedBuffer{"the normalized rows", a * D * 2}
	plan[bufPanel] = plannedBuffer{"the qkv panel", a * 3 * D * 2}
	plan[bufAttn] = plannedBuffer{"the attention output", a * D * 2}
	plan[bufY] = plannedBuffer{"the block output", a * D * 4}
	plan[bufGateUp] = plannedBuffer{"the gate/up activations", 2 * a * F * 4}
	plan[bufHidden] = plannedBuffer{"the SwiGLU hidden layer", a * F * 2}
	plan[bufTargetRope] = plannedBuffer{"the target RoPE tables", 2 * n * half * 4}
	plan[bufStepMods] = plannedBuffer{"the step modulation", 5 * D * 4}
	plan[bufTokens] = plannedBuffer{"the latent tokens", n * int64(c.InChannels) * 4}
	plan[bufVelocity] = plannedBuffer{"the velocity", n * int64(c.OutChannels) * 4}
	plan[bufPrefixRope] = plannedBuffer{"the prefix RoPE tables", 2 * lp * half * 4}
	plan[bufVisible] = plannedBuffer{"the visibility", lp * 4}
	plan[bufPrefixMods] = plannedBuffer{"the prefix modulation", 4 * D * 4}
	return plan
}

// PlanProgramFor is what one program of prefix and target rows holds on the device
// besides its prefix K/V (Denoiser.ActivationBytes without a device): for planning before a run.
func PlanProgramFor(c qi21.Config, prefix, target int) int64 {
	plan := programPlan(c, prefix, target)
	return plan.total() - plan[bufKV].bytes
}

// AuxiliaryBytes is the device memory a denoiser of geometry c holds between its runs, once
// ReleaseWeights has dropped the weight arena, without LoRAs: the auxiliary float buffer (the q/k
// norm weights, img_in and proj_out in float with their zero biases and, for 8-bit block
// projections, their row scales and column fields), laid out as New lays it out. For planning
// before a run; q8 says the block projections are q8_2f or q8_row rather than q4tp.
func AuxiliaryBytes(c qi21.Config, q8 bool) int64 {
	n := 0
	add := func(k int) { n = (n+3)/4*4 + k } // auxBuilder.add's 16-byte alignment
	D, F := c.Hidden(), c.MLPHidden()
	for range c.Layers {
		if q8 {
			for _, rc := range [7][2]int{{D, D}, {D, D}, {D, D}, {D, D}, {F, D}, {F, D}, {D, F}} {
				add(rc[0])
				add(rc[1])
			}
		}
		add(c.HeadDim)
		add(c.HeadDim)
	}
	add(D*c.InChannels + D)
	add(c.OutChannels*D + c.OutChannels)
	return int64(4 * max(n, 4))
}
