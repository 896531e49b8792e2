//go:build !(linux && amd64 && cgo)

package emu

import (
	"fmt"
	"runtime"

	"easel/kernels/device"
)

// NewDevice reports that the emulator needs linux/amd64 with cgo (its fibers switch x86-64
// stacks and it loads kernels with dlopen).
func NewDevice(opts Options) (device.Device, error) {
	return nil, unavailable(fmt.Errorf("the Metal emulator runs on linux/amd64 with cgo, not %s/%s: %w",
		runtime.GOOS, runtime.GOARCH, ErrNoCompiler))
}
