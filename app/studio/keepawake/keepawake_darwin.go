//go:build darwin

package keepawake

import (
	"sync"

	"github.com/progrium/darwinkit/macos/foundation"
)

// Hold keeps the system from idle sleep until release is called (once; later calls do nothing).
func Hold(reason string) (release func()) {
	pi := foundation.ProcessInfo_ProcessInfo()
	act := pi.BeginActivityWithOptionsReason(foundation.ActivityIdleSystemSleepDisabled, reason)
	act.Retain()
	var once sync.Once
	return func() {
		once.Do(func() {
			pi.EndActivity(act)
			act.Release()
		})
	}
}
