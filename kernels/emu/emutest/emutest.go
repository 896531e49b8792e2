// Package emutest gives tests the emulated Metal device (kernels/emu) the one way every test
// package takes it: skipped only when clang is missing and the emulator is not required
// (EASEL_REQUIRE_EMULATOR=1, which make test sets, turns that into a failure); any other error
// fails the test.
package emutest

import (
	"errors"
	"testing"

	"easel/kernels/device"
	"easel/kernels/emu"
)

// Device is emu.NewDevice(opts) for a test.
func Device(tb testing.TB, opts emu.Options) device.Device {
	tb.Helper()
	d, err := emu.NewDevice(opts)
	if errors.Is(err, emu.ErrNoCompiler) {
		tb.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
