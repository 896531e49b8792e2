// Package emutest gives tests the emulated Metal device (kernels/emu) the one way every test
// package takes it: skipped only when clang is missing and the emulator is not required
// (EASEL_REQUIRE_EMULATOR=1, which make test sets on Linux, turns that into a failure); any other
// error fails the test.
//
// With EASEL_TEST_DEVICE=system (make mac-check) the same tests run on the Mac's own GPU
// (metal.SystemDevice) instead: the emulator's parity tests then check the real device against the
// CPU. A test that needs what only the emulator has (an injected fault, chosen memory limits, a
// device that cannot time its encoders) is skipped there, saying so.
package emutest

import (
	"errors"
	"os"
	"testing"

	"easel/engine/ml/metal"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// DeviceEnv selects the device: unset or "emulator" for kernels/emu, "system" for the Mac's GPU.
const DeviceEnv = "EASEL_TEST_DEVICE"

// Device is emu.NewDevice(opts) for a test, or the system device under DeviceEnv=system.
func Device(tb testing.TB, opts emu.Options) device.Device {
	tb.Helper()
	switch v := os.Getenv(DeviceEnv); v {
	case "", "emulator":
	case "system":
		return systemDevice(tb, opts)
	default:
		tb.Fatalf("%s=%q: use system (the Mac's GPU) or emulator", DeviceEnv, v)
	}
	d, err := emu.NewDevice(opts)
	if errors.Is(err, emu.ErrNoCompiler) {
		tb.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// systemDevice is metal.SystemDevice, shared by the tests of one process (one command queue);
// a test whose options only the emulator honours is skipped.
func systemDevice(tb testing.TB, opts emu.Options) device.Device {
	tb.Helper()
	if need := emulatorOnly(opts); need != "" {
		tb.Skipf("%s=system: this test needs the emulator's %s", DeviceEnv, need)
	}
	if system.dev == nil && system.err == nil {
		system.dev, system.err = metal.SystemDevice()
	}
	if system.err != nil {
		tb.Fatalf("%s=system: %v", DeviceEnv, system.err)
	}
	return system.dev
}

var system struct {
	dev device.Device
	err error
}

// emulatorOnly names what of opts a real GPU cannot give, "" when nothing.
func emulatorOnly(opts emu.Options) string {
	switch {
	case opts.Fault != nil:
		return "fault injection"
	case opts.Limits != (device.Limits{}):
		return "chosen memory limits"
	case opts.NoEncoderTiming:
		return "untimed encoders"
	}
	return ""
}

// EmulatorOnly skips the test under EASEL_TEST_DEVICE=system: it needs what only the emulator
// has (need names it, e.g. "live-buffer counts").
func EmulatorOnly(tb testing.TB, need string) {
	tb.Helper()
	if os.Getenv(DeviceEnv) == "system" {
		tb.Skipf("%s=system: this test needs the emulator's %s", DeviceEnv, need)
	}
}
