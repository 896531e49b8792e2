package qi21metal

import (
	"easel/engine/ml/metal"
	"fmt"
	"math"

	"easel/kernels"
	"easel/kernels/device"
)

// pipelines are the compiled kernels of the denoiser.
type pipelines struct {
	mmQ4TP, mmQ8, flashBaseline, qkrope, rowop, swiglu, embed, final, kvcopy, amax, probe device.Pipeline
	loraDownH, loraDownF, loraUp, loraUpH, loraLNScale                                    device.Pipeline

	// The GEMM and attention kernels the passes dispatch (variants.go): the chosen variants and
	// the baselines (the seed's kernels above) for dispatches a variant does not fit.
	gemm, gemmBase   gemmKernels
	flash, flashBase flashKernels
	// variantsAnyN lets a variant run below the rows it is meant for (tests exercise every
	// variant on the tiny model's few rows).
	variantsAnyN bool
}

// buildPipelines compiles the embedded .metal files and looks every kernel up.
func buildPipelines(dev device.Device) (*pipelines, error) {
	libs := map[string]device.Library{}
	get := func(file, fn string) (device.Pipeline, error) {
		lib, ok := libs[file]
		if !ok {
			src, err := kernels.Source(file)
			if err != nil {
				return nil, err
			}
			if lib, err = dev.NewLibrary(file, src); err != nil {
				return nil, fmt.Errorf("metal: compiling %s on %s: %w", file, dev.Name(), err)
			}
			libs[file] = lib
		}
		p, err := dev.Pipeline(lib, fn)
		if err != nil {
			return nil, fmt.Errorf("metal: pipeline %s of %s: %w", fn, file, err)
		}
		if err := kernels.FitsBaseline(fn, p); err != nil { // as the variants are (variants.go)
			return nil, fmt.Errorf("metal: %w", err)
		}
		return p, nil
	}
	p := &pipelines{}
	for _, k := range []struct {
		dst      *device.Pipeline
		file, fn string
	}{
		{&p.mmQ4TP, "gemm.metal", "qi_mm_q4tp"},
		{&p.mmQ8, "gemm.metal", "qi_mm_q8"},
		{&p.flashBaseline, "flash.metal", "qi_flash"},
		{&p.qkrope, "qkrope.metal", "qi_qkrope"},
		{&p.rowop, "rowop.metal", "qi_rowop"},
		{&p.swiglu, "swiglu.metal", "qi_swiglu"},
		{&p.embed, "embed.metal", "qi_embed"},
		{&p.final, "final.metal", "qi_final"},
		{&p.kvcopy, "kvcopy.metal", "qi_kvcopy"},
		{&p.amax, "amax.metal", "qi_amax"},
		{&p.probe, "fragprobe.metal", "qi_fragprobe"},
		{&p.loraDownH, "lora.metal", "qi_lora_down_h"},
		{&p.loraDownF, "lora.metal", "qi_lora_down_f"},
		{&p.loraUp, "lora.metal", "qi_lora_up"},
		{&p.loraUpH, "lora.metal", "qi_lora_up_h"},
		{&p.loraLNScale, "lora.metal", "qi_lora_lnscale"},
	} {
		var err error
		if *k.dst, err = get(k.file, k.fn); err != nil {
			return nil, err
		}
	}
	base := kernels.GemmVariants[0]
	p.gemmBase = gemmKernels{v: base, p: map[string]device.Pipeline{base.Q4TP: p.mmQ4TP, base.Q8: p.mmQ8}}
	p.flashBase = flashKernels{v: kernels.FlashVariants[0], p: p.flashBaseline}
	p.gemm, p.flash = p.gemmBase, p.flashBase
	return p, nil
}

// checkFragmentLayout runs qi_fragprobe and declines when the GPU's simdgroup 8×8 fragment
// layout is not the one the GEMM and flash epilogues address. The output starts as NaN, so a
// probe that did not run fails too.
func checkFragmentLayout(dev device.Device, p *pipelines) error {
	out, err := dev.NewBuffer(192 * 4)
	if err != nil {
		return fmt.Errorf("metal: fragment probe buffer: %w", err)
	}
	defer out.Release()
	v := device.View[float32](out)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	cb, err := dev.NewCommandBuffer()
	if err != nil {
		return fmt.Errorf("metal: fragment probe: %w", err)
	}
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p.probe)
	enc.SetBuffer(out, 0, 0)
	enc.Dispatch(device.Size{Width: 1, Height: 1, Depth: 1}, device.Size{Width: 32, Height: 1, Depth: 1})
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		return fmt.Errorf("metal: fragment probe: %w", err)
	}
	for l := 0; l < 32; l++ {
		if v[4*l] != v[4*l+2] || v[4*l+1] != v[4*l+3] {
			return metal.Decline("this GPU's simdgroup fragment layout differs from the one the kernels assume (lane %d holds %v, %v; expected %v, %v)", l, v[4*l], v[4*l+1], v[4*l+2], v[4*l+3])
		}
	}
	return nil
}
