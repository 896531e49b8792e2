package qi21metal

import (
	"fmt"
	"math"
	"slices"
	"time"

	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/kernels"
	"easel/kernels/device"
)

// VariantBench is one variant of one op class run on one block of the real geometry: its device
// time for the class, the rate that gives, and its parity with the baseline on the same inputs.
// The table `easel bench dit-metal --variants` prints, the one a Mac owner pastes into an issue.
type VariantBench struct {
	Class   string `json:"class"`
	Variant string `json:"variant"`
	Codec   string `json:"codec"`
	About   string `json:"about"`
	// Skipped says why the variant did not run (no tensor API, failed to compile or fit).
	Skipped string `json:"skipped,omitempty"`
	// DeviceMS is the median device time of the class's command buffers per block (on the
	// emulator: its CPU time, not a GPU figure).
	DeviceMS float64 `json:"device_ms"`
	TFLOPS   float64 `json:"tflop_per_s"`
	// PeakFraction is TFLOPS over the chip's published FP16 peak (metal.PeakTFLOPS); absent when
	// the peak is unknown or on the emulator.
	PeakFraction float64 `json:"peak_fraction,omitempty"`
	// Parity compares the block's output with the baseline's on the same inputs:
	// "bit-identical", "within" (relative error ≤ ParityBound) or "FAILED".
	Parity string  `json:"parity"`
	RelErr float64 `json:"rel_err"`
}

// ParityBound is the largest relative L2 difference of a block's output from the baseline's that
// BenchVariants calls within parity (a variant that changes the accumulation order, e.g. the
// 64-key attention or the tensor-op GEMM on a Mac, differs by rounding only: about 1e-6).
const ParityBound = 1e-3

// BenchVariants runs block 0 of m over n target and p prefix rows with the baseline, then with
// each variant of each op class (the other class at its baseline), reps times each, one command
// buffer per class; peak is the chip's FP16 peak in TFLOP/s (0: unknown).
func BenchVariants(dev device.Device, m *qi21.Model, n, p, reps int, cpuClock func() time.Duration, peak float64) ([]VariantBench, error) {
	base, err := BenchBlockWith(dev, m, n, p, reps, cpuClock, BenchOptions{Profile: true})
	if err != nil {
		return nil, err
	}
	var out []VariantBench
	add := func(class, name, about string, r *BlockBench, err error) {
		vb := VariantBench{Class: class, Variant: name, Codec: base.Codec, About: about}
		if err != nil {
			vb.Skipped = err.Error()
			out = append(out, vb)
			return
		}
		flops := r.GemmFlops
		vb.DeviceMS = r.GemmMS
		if class == ClassAttn {
			flops, vb.DeviceMS = r.AttnFlops, r.AttnMS
		}
		if vb.DeviceMS > 0 {
			vb.TFLOPS = flops / (vb.DeviceMS / 1e3) / 1e12
			if peak > 0 {
				vb.PeakFraction = vb.TFLOPS / peak
			}
		}
		vb.RelErr = relL2(r.out, base.out)
		switch {
		case slices.Equal(r.out, base.out):
			vb.Parity = "bit-identical"
		case vb.RelErr <= ParityBound:
			vb.Parity = "within"
		default:
			vb.Parity = "FAILED"
		}
		out = append(out, vb)
	}
	for _, v := range kernels.GemmVariants {
		r := base
		err = nil
		if v.Name != base.Gemm {
			r, err = benchVariant(dev, m, n, p, reps, cpuClock, BenchOptions{Gemm: v.Name, Profile: true})
		}
		add(ClassGemm, v.Name, v.About, r, err)
	}
	for _, v := range kernels.FlashVariants {
		r := base
		err = nil
		if v.Name != base.Attn {
			r, err = benchVariant(dev, m, n, p, reps, cpuClock, BenchOptions{Attn: v.Name, Profile: true})
		}
		add(ClassAttn, v.Name, v.About, r, err)
	}
	return out, nil
}

// benchVariant is BenchBlockWith where a variant that cannot run here is an error to report.
func benchVariant(dev device.Device, m *qi21.Model, n, p, reps int, cpuClock func() time.Duration, opts BenchOptions) (*BlockBench, error) {
	if v, ok := kernels.GemmVariantNamed(opts.Gemm); ok && v.TensorOps && !metal.HasTensorOps(dev) {
		return nil, fmt.Errorf("%s has no Metal 4 tensor operations", dev.Name())
	}
	return BenchBlockWith(dev, m, n, p, reps, cpuClock, opts)
}

// relL2 is ‖a − b‖ / ‖b‖.
func relL2(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}
