package setup

import (
	"path/filepath"
	"strings"

	"easel/app/backend"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
)

// Diagnostics is `easel diagnose`'s report as the window sees it with the backend setting b (the
// Help menu's Copy Diagnostics): the machine, the GPU or why Metal is unavailable, the self-test
// per kernel as cached (it is not run here), the guards, the last job's times, declines and
// retries — nothing personal — for an issue.
func Diagnostics(b settings.Backend) string {
	o := diagnose.Options{Guards: metal.DefaultGuards}
	if k, err := metal.KnobsFromEnv(); err == nil {
		o.Guards = k.Guards
	}
	if dir, err := settings.Dir(); err == nil {
		o.Dir = dir
		o.SelfTest = metal.SelfTestCache{Dir: filepath.Join(dir, "selftest")}.Latest()
		o.SelfTestCached = o.SelfTest != nil
	}
	if c, err := backend.Choose(b); err != nil {
		o.Backend, o.Why = err.Error(), err.Error()
	} else {
		o.Backend = c.Reason
		if c.Metal() {
			o.Device = c.Device
		} else {
			// "… on the CPU because WHY", or the whole sentence when the setting asked for the CPU.
			if _, why, ok := strings.Cut(c.Reason, " because "); ok && why != "" {
				o.Why = why
			} else {
				o.Why = c.Reason
			}
		}
	}
	return diagnose.Build(o).Text()
}
