package qi21metal

import (
	"context"
	"fmt"
	"time"

	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
)

// TuneGeometry is the geometry class the denoiser's variants are timed on: the model's width,
// heads and MLP, the block codec, and the target and prefix rows rounded up to powers of two
// (a step at 1024² and one at 1152² share a class).
func TuneGeometry(c qi21.Config, codec quant.DType, target, prefix int) string {
	return fmt.Sprintf("qi21 D%d H%d F%d %v rows%d prefix%d", c.Hidden(), c.Heads, c.MLPHidden(), codec, pow2Ceil(target), pow2Ceil(prefix))
}

func pow2Ceil(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// DeclareVariants declares the denoiser's op classes and variants in reg, timed on block 0 of m
// (a one-block model of the real geometry and codec, such as qi21.NewRandomBlockModel builds: the
// time does not depend on the values) over target and prefix rows. Prepare compiles a variant
// and checks its limits; Check runs the block with the variant and with the baseline on the same
// inputs and requires parity (bit-identical or within ParityBound); Time is the class's median
// device time over reps runs. Each variant's block runs once per tuning: the check and the time
// read the same runs.
func DeclareVariants(reg *metal.Registry, m *qi21.Model, target, prefix, reps int) error {
	if m == nil || len(m.Blocks) != 1 {
		return fmt.Errorf("qi21metal.DeclareVariants needs a one-block model")
	}
	// Each variant's block runs once per tuning (reps repetitions, profiled so the class times are
	// known): its check and its timing read the same run, and the baseline's serves every check.
	runs := map[BenchOptions]*BlockBench{}
	run := func(dev device.Device, opts BenchOptions) (*BlockBench, error) {
		if r, ok := runs[opts]; ok {
			return r, nil
		}
		profiled := opts
		profiled.Profile = true
		r, err := BenchBlockWith(dev, m, target, prefix, reps, nil, profiled)
		if err != nil {
			return nil, err
		}
		runs[opts] = r
		return r, nil
	}
	check := func(opts BenchOptions) func(context.Context, device.Device) error {
		return func(ctx context.Context, dev device.Device) error {
			base, err := run(dev, BenchOptions{})
			if err != nil {
				return err
			}
			r, err := run(dev, opts)
			if err != nil {
				return err
			}
			if e := relL2(r.out, base.out); e > ParityBound {
				return fmt.Errorf("its block output is %.3g from the baseline's (bound %g)", e, ParityBound)
			}
			return nil
		}
	}
	timer := func(class string, opts BenchOptions) func(context.Context, device.Device) (time.Duration, error) {
		return func(ctx context.Context, dev device.Device) (time.Duration, error) {
			r, err := run(dev, opts)
			if err != nil {
				return 0, err
			}
			ms := r.GemmMS
			if class == ClassAttn {
				ms = r.AttnMS
			}
			return time.Duration(ms * float64(time.Millisecond)), nil
		}
	}
	for i, v := range kernels.GemmVariants {
		opts := BenchOptions{Gemm: v.Name}
		if i == 0 {
			opts = BenchOptions{}
		}
		vv := metal.Variant{Class: ClassGemm, Name: v.Name, About: v.About, TensorOps: v.TensorOps,
			Prepare: func(dev device.Device) error { _, err := compileGemmVariant(dev, v); return err },
			Time:    timer(ClassGemm, opts)}
		if i > 0 {
			vv.Check = check(opts)
		}
		if err := reg.Declare(vv); err != nil {
			return err
		}
	}
	for i, v := range kernels.FlashVariants {
		opts := BenchOptions{Attn: v.Name}
		if i == 0 {
			opts = BenchOptions{}
		}
		vv := metal.Variant{Class: ClassAttn, Name: v.Name, About: v.About,
			Prepare: func(dev device.Device) error { _, err := compileFlashVariant(dev, v); return err },
			Time:    timer(ClassAttn, opts)}
		if i > 0 {
			vv.Check = check(opts)
		}
		if err := reg.Declare(vv); err != nil {
			return err
		}
	}
	return nil
}

// ApplyTuning makes the denoiser run the variants r chose (the baseline for a class r does not
// name). A choice that cannot be used here (it needs the tensor API, fails to compile or fit) is an
// error and the denoiser keeps its kernels.
func (d *Denoiser) ApplyTuning(r *metal.TuneReport) error {
	return d.UseVariants(r.Chosen(ClassGemm), r.Chosen(ClassAttn))
}
