package emutest

import (
	"testing"

	"easel/kernels/device"
	"easel/kernels/emu"
)

// TestEmulatorOnlyOptionsAreNamed: under EASEL_TEST_DEVICE=system a test asking for what only
// the emulator has is skipped with the reason; plain options run on the GPU.
func TestEmulatorOnlyOptionsAreNamed(t *testing.T) {
	for _, c := range []struct {
		opts emu.Options
		want string
	}{
		{emu.Options{}, ""},
		{emu.Options{Order: emu.Reverse, Workers: 2}, ""},
		{emu.Options{Fault: &emu.Fault{}}, "fault injection"},
		{emu.Options{Limits: device.Limits{MaxBufferLength: 1}}, "chosen memory limits"},
		{emu.Options{NoEncoderTiming: true}, "untimed encoders"},
	} {
		if got := emulatorOnly(c.opts); got != c.want {
			t.Errorf("emulatorOnly(%+v) = %q, want %q", c.opts, got, c.want)
		}
	}
}
