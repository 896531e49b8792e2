package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"easel/app"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
	"easel/engine/qi21/qi21metal"
	"easel/kernels/device"
)

// The kernel variants the denoiser runs, per geometry class. On first Metal use per device, OS
// build, app version and geometry class — right after the self-test passed for the denoiser —
// the denoiser's first prefill of a run asks Choice's tuner for its class: a cached choice is
// used as it is; a class never tuned is tuned there and then ("Tuning for this Mac…": each
// variant that passes its check is timed on block 0 of the model over the run's rows, the
// fastest per op class is kept and cached). EASEL_METAL_VARIANT_<CLASS> still overrides the
// choice, EASEL_METAL_AUTOTUNE=off turns the tuning off (cached choices are still used), and
// `easel bench dit-metal --tune` re-tunes a class on demand.

// TunedClasses are the op classes the denoiser's variants are chosen for.
var TunedClasses = []string{qi21metal.ClassGemm, qi21metal.ClassAttn}

// AutoTuneEnv is the environment variable that turns first-use tuning off ("off", "0", "false",
// "no"); cached choices are still used.
const AutoTuneEnv = "EASEL_METAL_AUTOTUNE"

// AutoTuneOff reports whether AutoTuneEnv turns first-use tuning off.
func AutoTuneOff() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(AutoTuneEnv))) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// TuningDir is the app-support folder's tuning/, where the kernel-variant choices are cached
// (metal.TuneCache, one file per device, OS build, app version and geometry class); "" when there
// is no app-support folder.
func TuningDir() string {
	dir, err := settings.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tuning")
}

// tuneKey is the cache key of a choice for dev and geometry class on this OS build and app version.
func tuneKey(dev device.Device, geometry string) metal.TuneKey {
	return metal.TuneKey{Device: dev.Name(), OSBuild: diagnose.HostBuild(), AppVersion: app.Version, Build: metal.BuildID(), Geometry: geometry}
}

// TunedVariants is the kernel-variant choice cached in dir for dev and the geometry class on
// this OS build and app version, or nil (never tuned: the baseline kernels run, or the class is
// tuned on first use).
func TunedVariants(dir string, dev device.Device, geometry string) *metal.TuneReport {
	if dir == "" || dev == nil {
		return nil
	}
	return metal.TuneCache{Dir: dir}.Load(tuneKey(dev, geometry))
}

// TunedFor lists the choices cached in dir for a device named dev on this OS build and app
// version, one per geometry class, most recent first (the Settings dialog's read-only section).
func TunedFor(dir, dev string) []*metal.TuneReport {
	var rs []*metal.TuneReport
	for _, r := range (metal.TuneCache{Dir: dir}).All() {
		if r.Key.Device == dev && r.Key.AppVersion == app.Version && r.Key.Build == metal.BuildID() && r.Key.OSBuild == diagnose.HostBuild() {
			rs = append(rs, r)
		}
	}
	return rs
}

// TuneProgressText is the progress line of a tuning run: "Tuning for this Mac… gemm: swizzle (3
// of 8)", or "" once it is done.
func TuneProgressText(done, total int, class, variant string) string {
	if variant == "" {
		return ""
	}
	return fmt.Sprintf("Tuning for this Mac… %s: %s (%d of %d)", class, variant, done+1, total)
}

// tuning is the choice's side of the tuner: the report the denoiser last got, for the timing
// panel and the CLI.
type tuning struct {
	mu   sync.Mutex
	last *metal.TuneReport
	// geometry is the class last asked for; tuned says the report was made in this process.
	geometry string
	tuned    bool
}

// Tuning is the kernel-variant choice the denoiser last ran with (nil: the baseline kernels),
// the geometry class it was for, and whether it was tuned in this process (false: cached).
func (c *Choice) Tuning() (r *metal.TuneReport, geometry string, tunedNow bool) {
	c.tuning.mu.Lock()
	defer c.tuning.mu.Unlock()
	return c.tuning.last, c.tuning.geometry, c.tuning.tuned
}

func (c *Choice) used(r *metal.TuneReport, geometry string, tunedNow bool) {
	c.tuning.mu.Lock()
	c.tuning.last, c.tuning.geometry, c.tuning.tuned = r, geometry, tunedNow
	c.tuning.mu.Unlock()
}

func (c *Choice) notify(format string, args ...any) {
	if c.TuneNotice != nil {
		c.TuneNotice(fmt.Sprintf(format, args...))
	}
}

// SetAutoTune turns tuning on first use on or off from the next run on (the Settings dialog's
// "GPU tuning"); choices already cached still run.
func (c *Choice) SetAutoTune(on bool) { c.noAutoTune.Store(!on) }

// autoTune reports whether a class never tuned is tuned on first use: there is a folder to cache
// the choice in, the self-test ran and passed for the denoiser, and neither SetAutoTune nor
// AutoTuneEnv turns it off.
func (c *Choice) autoTune() bool {
	return c.TuneDir != "" && c.selfTest != nil && c.selfTest.Decline(metal.StageDenoiser) == nil && !c.noAutoTune.Load() && !AutoTuneOff()
}

// tuner is the denoiser's qi21metal.Tuner: the cached choice for the class (in TuneDir, else the
// app-support folder's tuning/), or a tuning run when autoTune allows it. A cancelled run caches
// nothing and fails the prefill; any other failure is a notice and the baseline kernels.
func (c *Choice) tuner() qi21metal.Tuner {
	dir := c.TuneDir
	if dir == "" {
		dir = TuningDir()
	}
	reps := 0 // qi21metal's default
	if c.Asked == Emulator {
		reps = 1 // the emulator's times are CPU time: one run is enough to exercise the choice
	}
	return func(ctx context.Context, geometry string, declare func(*metal.Registry, int) error) (*metal.TuneReport, error) {
		if r := TunedVariants(dir, c.Device, geometry); r != nil {
			c.used(r, geometry, false)
			return r, nil
		}
		c.used(nil, geometry, false)
		if !c.autoTune() {
			return nil, nil
		}
		reg := &metal.Registry{}
		if err := declare(reg, reps); err != nil {
			c.notify("the kernels could not be tuned for this Mac (%v); the baseline kernels run", err)
			return nil, nil
		}
		if allForced(reg) {
			return nil, nil // every class is forced by its variable: nothing to choose
		}
		r, err := metal.Tune(ctx, c.Device, tuneKey(c.Device, geometry), reg, nil, c.TuneProgress)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // cancelled: nothing cached
			}
			c.notify("tuning the kernels for this Mac failed (%v); the baseline kernels run", err)
			return nil, nil
		}
		if err := (metal.TuneCache{Dir: dir}).Save(r); err != nil {
			c.notify("the kernel choice for this Mac is not remembered (%v); it is tuned again next time", err)
		}
		c.used(r, geometry, true)
		return r, nil
	}
}

// allForced reports whether every class of reg is forced by its EASEL_METAL_VARIANT_ variable.
func allForced(reg *metal.Registry) bool {
	for _, class := range reg.Classes() {
		if strings.TrimSpace(os.Getenv(metal.ForceEnv(class))) == "" {
			return false
		}
	}
	return true
}
