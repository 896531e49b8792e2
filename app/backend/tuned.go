package backend

import (
	"path/filepath"

	"easel/app"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
	"easel/kernels/device"
)

// TuningDir is the app-support folder's tuning/, where `easel bench dit-metal --tune` caches the
// kernel-variant choice (metal.TuneCache); "" when there is no app-support folder.
func TuningDir() string {
	dir, err := settings.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tuning")
}

// TunedVariants is the most recent kernel-variant choice cached for dev on this OS build and
// app version, or nil (the baseline kernels run). A choice tuned on one geometry class is used
// for all: the classes are the published model's sizes, whose ranking is expected to agree.
func TunedVariants(dev device.Device) *metal.TuneReport {
	d := TuningDir()
	if d == "" || dev == nil {
		return nil
	}
	r := metal.TuneCache{Dir: d}.Latest()
	if r == nil || r.Key.Device != dev.Name() || r.Key.AppVersion != app.Version || r.Key.OSBuild != diagnose.HostBuild() {
		return nil
	}
	return r
}
