package backend

import (
	"context"
	"fmt"

	"easel/app"
	"easel/app/diagnose"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/ml/metalops"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
)

// SelfTest runs the first-use self-test of the Metal device with the model file f (the text
// encoder's and VAE's kernels on small slices, the denoiser on a small prompt, each against the
// CPU), or reads its cached report from cacheDir (keyed by the device, OS build, app version and
// the model file's name, size and date). Options then declines the stages whose kernels failed
// (the CPU runs them; the notice names the kernel and the error) and runs the denoiser under the
// guards the self-test found. progress, when not nil, is told before each check. Without Metal
// it does nothing.
func (c *Choice) SelfTest(ctx context.Context, f *cmf.File, cacheDir string, progress metal.SelfTestProgress) (r *metal.SelfTestReport, cached bool, err error) {
	if !c.Metal() {
		return nil, false, nil
	}
	key, err := metal.SelfTestKey{Device: c.Device.Name(), OSBuild: diagnose.HostBuild(), AppVersion: app.Version, Build: metal.BuildID()}.ModelKey(f.Path())
	if err != nil {
		return nil, false, err
	}
	cache := metal.SelfTestCache{Dir: cacheDir}
	if r := cache.Load(key); r != nil {
		c.selfTest = r
		return r, true, nil
	}
	knobs, err := metal.KnobsFromEnv()
	if err != nil {
		return nil, false, err
	}
	checks, done := metalops.SelfTestChecks()
	defer done()
	m, err := qi21.Load(f, cpu.New())
	if err != nil {
		return nil, false, fmt.Errorf("the self-test's CPU denoiser: %w", err)
	}
	guards := knobs.Guards
	checks = append(checks, qi21metal.SelfTestChecks(m, f.Bytes(), &knobs, &guards)...)
	if r, err = metal.RunSelfTest(ctx, c.Device, key, checks, progress); err != nil {
		return nil, false, err
	}
	if guards != knobs.Guards {
		r.Guards = &guards
	}
	if cacheDir != "" {
		_ = cache.Save(r) // not cached: it runs again next time
	}
	c.selfTest = r
	return r, false, nil
}
