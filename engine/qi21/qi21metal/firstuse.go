package qi21metal

import (
	"context"
	"os"

	"easel/engine/ml/metal"
)

// The first-use autotuner as the denoiser sees it: before a run's first prefill the denoiser
// names the run's geometry class (TuneGeometry of its target and prefix rows) and runs the
// variants the tuner gives for that class — a cached choice, or one tuned there and then over the
// variants DeclareVariants declares on block 0 of the model itself.

// Tuner gives the kernel variants to run for a geometry class: the cached choice, or a choice
// tuned now over the variants declare declares (reps: the runs each variant's time is the median
// of). A nil report means the baseline kernels. It returns an error only when ctx is cancelled
// (the prefill then fails with it); a tuning that fails is its own notice and a nil report.
type Tuner func(ctx context.Context, geometry string, declare func(reg *metal.Registry, reps int) error) (*metal.TuneReport, error)

// defaultTuneReps is how many runs a variant's time is the median of when Options.TuneReps is 0.
const defaultTuneReps = 3

// Geometry is the geometry class whose tuned variants the denoiser runs ("" before the first
// tuned prefill, or without a tuner).
func (d *Denoiser) Geometry() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.geometry
}

// tuneFor runs the variants chosen for the class of target and prefix rows, asking the tuner
// when the class changed since the last run. It does nothing while a program is live (the
// second prompt of a run under CFG steps with the first, on the same kernels) or without a tuner.
func (d *Denoiser) tuneFor(ctx context.Context, target, prefix int) error {
	if d.tune == nil || len(d.model.Blocks) == 0 {
		return nil
	}
	geometry := TuneGeometry(d.cfg, d.model.Blocks[0].ToQ.DType, target, prefix)
	d.mu.Lock()
	busy, same := d.live > 0, d.geometry == geometry
	d.mu.Unlock()
	if busy || same {
		return nil
	}
	declare := func(reg *metal.Registry, reps int) error {
		if reps < 1 {
			reps = d.tuneReps
		}
		return DeclareVariants(reg, d.model.BlockModel(0), target, prefix, reps)
	}
	r, err := d.tune(ctx, geometry, declare)
	if err != nil {
		return err
	}
	if err := d.useChosenVariants(r, os.Getenv); err != nil {
		return err
	}
	d.mu.Lock()
	d.geometry = geometry
	d.mu.Unlock()
	return nil
}
