package qi21metal

import (
	"fmt"

	"easel/engine/ml/metal"
	"easel/kernels"
	"easel/kernels/device"
)

// The denoiser's kernel variants (kernels/variants.go, docs/METAL.md §7): the op classes "gemm"
// (the seven projections of a block) and "attn" (the attention) can each run their baseline
// kernels or a variant that gives the same results by other means. The autotuner chooses per
// Mac (DeclareVariants); UseVariants sets a choice. A dispatch the chosen variant does not fit
// (an alignment, or fewer rows than it is meant for) runs the baseline.

// Op classes of the denoiser's variants.
const (
	ClassGemm = "gemm"
	ClassAttn = "attn"
)

// gemmKernels are one GEMM variant's compiled functions.
type gemmKernels struct {
	v kernels.GemmVariant
	p map[string]device.Pipeline
}

func (g gemmKernels) pipeline(q8, halfOut bool) device.Pipeline {
	return g.p[g.v.Function(q8, halfOut)]
}

// flashKernels is one attention variant's compiled function.
type flashKernels struct {
	v kernels.FlashVariant
	p device.Pipeline
}

// compileGemmVariant compiles v's library and checks every function against v's needs: a
// pipeline that allows fewer threads than v dispatches, or threadgroup memory past 32 KiB, is an
// error (the variant is skipped, never dispatched).
func compileGemmVariant(dev device.Device, v kernels.GemmVariant) (gemmKernels, error) {
	g := gemmKernels{v: v, p: map[string]device.Pipeline{}}
	lib, err := compileLibrary(dev, v.File)
	if err != nil {
		return g, err
	}
	for _, fn := range v.Functions() {
		p, err := dev.Pipeline(lib, fn)
		if err != nil {
			return g, fmt.Errorf("metal: pipeline %s of %s: %w", fn, v.File, err)
		}
		if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, p.MaxTotalThreadsPerThreadgroup()); err != nil {
			return g, err
		}
		g.p[fn] = p
	}
	return g, nil
}

// compileFlashVariant is compileGemmVariant for an attention variant.
func compileFlashVariant(dev device.Device, v kernels.FlashVariant) (flashKernels, error) {
	lib, err := compileLibrary(dev, v.File)
	if err != nil {
		return flashKernels{v: v}, err
	}
	p, err := dev.Pipeline(lib, v.Function)
	if err != nil {
		return flashKernels{v: v}, fmt.Errorf("metal: pipeline %s of %s: %w", v.Function, v.File, err)
	}
	if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, p.MaxTotalThreadsPerThreadgroup()); err != nil {
		return flashKernels{v: v}, err
	}
	return flashKernels{v: v, p: p}, nil
}

func compileLibrary(dev device.Device, file string) (device.Library, error) {
	src, err := kernels.Source(file)
	if err != nil {
		return nil, err
	}
	lib, err := dev.NewLibrary(file, src)
	if err != nil {
		return nil, fmt.Errorf("metal: compiling %s on %s: %w", file, dev.Name(), err)
	}
	return lib, nil
}

// UseVariants makes the denoiser run the GEMM variant gemm and the attention variant attn (""
// or "base": the baseline). A variant whose library needs the tensor API the device lacks, that
// fails to compile, or that does not fit the device's pipelines is an error, and the denoiser
// keeps what it ran before.
func (d *Denoiser) UseVariants(gemm, attn string) error {
	if gemm == "" {
		gemm = "base"
	}
	if attn == "" {
		attn = "base"
	}
	gv, ok := kernels.GemmVariantNamed(gemm)
	if !ok {
		return fmt.Errorf("qi21metal: no GEMM variant %q", gemm)
	}
	fv, ok := kernels.FlashVariantNamed(attn)
	if !ok {
		return fmt.Errorf("qi21metal: no attention variant %q", attn)
	}
	if gv.TensorOps && !metal.HasTensorOps(d.dev) {
		return fmt.Errorf("qi21metal: GEMM variant %s needs Metal 4 tensor operations, which %s lacks", gemm, d.dev.Name())
	}
	g, f := d.pipes.gemmBase, d.pipes.flashBase
	var err error
	if gv.Name != g.v.Name {
		if g, err = compileGemmVariant(d.dev, gv); err != nil {
			return err
		}
	}
	if fv.Name != f.v.Name {
		if f, err = compileFlashVariant(d.dev, fv); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.pipes.gemm, d.pipes.flash = g, f
	d.mu.Unlock()
	return nil
}

// Variants are the GEMM and attention variants the denoiser runs.
func (d *Denoiser) Variants() (gemm, attn string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pipes.gemm.v.Name, d.pipes.flash.v.Name
}

// gemmFor is the GEMM kernels for one dispatch: the chosen variant, or the baseline where the
// variant does not fit the shape or is not meant for n rows.
func (p *pipelines) gemmFor(s kernels.GemmShape, anyN bool) gemmKernels {
	if p.gemm.v.Fits(s) != nil || (!anyN && !p.gemm.v.Meant(s.N)) {
		return p.gemmBase
	}
	return p.gemm
}

// flashFor is the attention kernels for a panel of model width h bound with the prefix cache at
// byte offset kvOff: the chosen variant, or the baseline where it does not fit.
func (p *pipelines) flashFor(h, kvOff int) flashKernels {
	if p.flash.v.Fits(h, 3*h, 0, kvOff) != nil {
		return p.flashBase
	}
	return p.flash
}
