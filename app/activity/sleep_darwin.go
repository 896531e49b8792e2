//go:build darwin

package activity

/*
#cgo LDFLAGS: -framework IOKit
int easelObserveSystemPower(void);
*/
import "C"

import "errors"

// observeSleep registers for the system's power notices with IOKit (IORegisterForSystemPower,
// delivered on a dispatch queue of their own: sleep_darwin.c), which reach a command-line
// process as well as the window, with no run loop needed. On "will sleep" the callback runs
// WillSleep and only then allows the sleep (the Mac waits for it; each sleeper bounds its wait
// by FlushTimeout); on "has powered on" it runs DidWake. Untested on a Mac
// (docs/ARCHITECTURE.md, §10 on checkpoints and §11 on studio workers).
func observeSleep() {
	if C.easelObserveSystemPower() != 0 {
		errNoPowerNotices = errors.New("macOS refused the sleep notices (IORegisterForSystemPower): a running job cannot write its checkpoint before the Mac sleeps")
	}
}

// easelSystemPower is called by sleep_darwin.c on the notices' queue: 0 the Mac will sleep, 1 it
// has woken.
//
//export easelSystemPower
func easelSystemPower(notice C.int) {
	if notice == 0 {
		WillSleep()
		return
	}
	DidWake()
}
