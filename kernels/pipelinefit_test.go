package kernels_test

import (
	"strings"
	"testing"

	"easel/kernels"
)

// fakePipeline is a compiled pipeline with a chosen threadgroup limit, as a register-heavy
// kernel gets on a real GPU.
type fakePipeline struct {
	fn  string
	max int
}

func (p fakePipeline) Function() string                   { return p.fn }
func (p fakePipeline) MaxTotalThreadsPerThreadgroup() int { return p.max }
func (p fakePipeline) ThreadExecutionWidth() int          { return 32 }

// TestEveryBaselineKernelHasItsThreadgroup: every kernel of a baseline library (not a variant's)
// has the threadgroup its grid dispatches, so FitsBaseline can check its pipeline.
func TestEveryBaselineKernelHasItsThreadgroup(t *testing.T) {
	variantFile := map[string]bool{"gemmvar.metal": true, "gemmtensor.metal": true, "flashvar.metal": true}
	for _, lib := range kernels.Libraries {
		if variantFile[lib.File] {
			continue
		}
		for _, fn := range lib.Kernels {
			n, ok := kernels.BaselineThreads(fn)
			if !ok || n < 32 || n > 1024 {
				t.Errorf("%s of %s: threadgroup %d (known %v)", fn, lib.File, n, ok)
			}
		}
	}
}

// TestFitsBaselineRefusesAPipelineThatAllowsFewerThreads: qi_flash dispatches 256 threads; a
// pipeline allowing 192 must be refused, one allowing 256 accepted.
func TestFitsBaselineRefusesAPipelineThatAllowsFewerThreads(t *testing.T) {
	if err := kernels.FitsBaseline("qi_flash", fakePipeline{"qi_flash", 256}); err != nil {
		t.Fatal(err)
	}
	err := kernels.FitsBaseline("qi_flash", fakePipeline{"qi_flash", 192})
	if err == nil || !strings.Contains(err.Error(), "256") || !strings.Contains(err.Error(), "192") {
		t.Fatalf("a 192-thread pipeline for a 256-thread kernel: %v", err)
	}
	if kernels.FitsBaseline("qi_nonesuch", fakePipeline{"qi_nonesuch", 1024}) == nil {
		t.Fatal("an unknown kernel passed")
	}
}
