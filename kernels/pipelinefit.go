package kernels

import (
	"fmt"

	"easel/kernels/device"
)

// A compiled pipeline may allow fewer threads per threadgroup than Metal's 1024
// (MTLComputePipelineState.maxTotalThreadsPerThreadgroup drops for a kernel that uses many
// registers), and dispatching more than it allows is an error on the device that the emulator,
// which allows 1024 everywhere, never shows. The variants are checked with FitsPipeline; the
// baseline kernels with FitsBaseline, against the threadgroup their grid function dispatches.

// baselineThreads is the threads per threadgroup each baseline kernel's grid function dispatches
// (grids.go, vaegrids.go; fixed by the kernel code, whatever the problem size).
var baselineThreads = func() map[string]int {
	count := func(_ device.Size, t device.Size) int { return t.Count() }
	m := map[string]int{
		"qi_fragprobe":    count(FragProbeGrid()),
		"qi_flash":        count(FlashGrid(1, 1)),
		"qi_qkrope":       count(QkRopeGrid(1, 1)),
		"qi_rowop":        count(RowOpGrid(1)),
		"qi_swiglu":       count(SwigluGrid(1)),
		"qi_kvcopy":       count(KvCopyGrid(64, 1)),
		"qi_embed":        count(EmbedGrid(64, 1)),
		"qi_final":        count(FinalGrid(1)),
		"qi_amax":         count(AmaxGrid()),
		"qi_lora_lnscale": count(LoraLNScaleGrid(1)),
		"vae_conv":        count(ConvGrid(1, 1)),
		"vae_transpose":   count(TransposeGrid(1, 1)),
		"vae_amax":        count(FloatAmaxGrid(1)),
		"ops_linear":      count(LinearGrid(1, 1)),
		"ops_mm":          count(BatchGrid(1, 1, 1)),
		"ops_headrope":    count(HeadGrid(1, 1)),
	}
	for _, fn := range []string{"qi_mm_q4tp", "qi_mm_q8"} {
		m[fn] = count(MmGrid(1, 64, 1))
	}
	for _, fn := range []string{"qi_lora_down_h", "qi_lora_down_f", "qi_lora_up", "qi_lora_up_h"} {
		m[fn] = count(LoraGrid(1, 1))
	}
	for _, fn := range []string{"vae_chnorm", "vae_elt", "vae_upsample", "vae_shuffle"} {
		m[fn] = count(ElementGrid(1))
	}
	for _, fn := range []string{"ops_softmax", "ops_rownorm"} {
		m[fn] = count(RowGrid(1))
	}
	for _, fn := range DecodeKernels {
		m[fn] = count(DecodeGrid(1))
	}
	return m
}()

// BaselineThreads is the threads per threadgroup the baseline kernel fn is dispatched with;
// false for a name that is not a baseline kernel.
func BaselineThreads(fn string) (int, bool) {
	n, ok := baselineThreads[fn]
	return n, ok
}

// FitsBaseline reports whether the pipeline p of the baseline kernel fn allows the threadgroup
// fn is dispatched with; an error (the network then declines to the CPU) when it does not, or
// when fn is not a known baseline kernel.
func FitsBaseline(fn string, p device.Pipeline) error {
	n, ok := baselineThreads[fn]
	if !ok {
		return fmt.Errorf("kernels: %s is not a baseline kernel with a known threadgroup size", fn)
	}
	if max := p.MaxTotalThreadsPerThreadgroup(); n > max {
		return fmt.Errorf("kernel %s is dispatched with %d threads per threadgroup; its pipeline on this device allows %d", fn, n, max)
	}
	return nil
}
