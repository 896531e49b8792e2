package pipelinemetal

import (
	"testing"

	"easel/engine/pipeline/pipelinetest"
)

// TestEmuResumeIsExactOnMetal: engine/pipeline's resume check with the DiT on the emulated device:
// a run resumed from the state after a step ends as the uninterrupted run bit for bit (plain and
// inpainting; CFG, condition images and batches take minutes on the emulator, the CPU test has them).
func TestEmuResumeIsExactOnMetal(t *testing.T) {
	p := q8Pipeline(t, onMetal(emuDevice(t, 0, 0)))
	reqs := pipelinetest.ResumeRequests()
	pipelinetest.CheckResumeIsExact(t, p, reqs["plain"], pipelinetest.StateAt{Step: 2})
	pipelinetest.CheckResumeIsExact(t, p, reqs["inpaint"], pipelinetest.StateAt{Step: 1})
}
