package upscalers_test

import (
	"context"
	"strings"
	"testing"

	"easel/app/upscalers"
	"easel/internal/testdevice"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// TestEmuDeclineRunsOnTheCPU: on a device whose working set has room for the biases but not for a
// tile, the upscale runs on the CPU with a notice naming the need, and gives the CPU's picture
// exactly; on a device with room it runs there, within the emulator's bound of the reference.
func TestEmuDeclineRunsOnTheCPU(t *testing.T) {
	c, file := smallest(t)
	cpuOnly, err := upscalers.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := cpuOnly.Upscale(context.Background(), c.Input, upscalers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	small := testdevice.Device(t, emu.Options{Limits: device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: 64 << 10}})
	r, err := upscalers.Open(file, small)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, rep, err := r.Upscale(context.Background(), c.Input, upscalers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Device != "CPU" || !strings.Contains(rep.Notice, "Metal declined the upscaler") || !strings.Contains(rep.Notice, "working set") {
		t.Fatalf("ran on %s with notice %q; want the CPU after a decline", rep.Device, rep.Notice)
	}
	if string(got.Pix) != string(want.Pix) {
		t.Fatal("the declined upscale is not the CPU's picture")
	}
	roomy, err := upscalers.Open(file, testdevice.Device(t, emu.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer roomy.Close()
	got, rep, err = roomy.Upscale(context.Background(), c.Input, upscalers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Device == "CPU" || rep.Notice != "" {
		t.Fatalf("ran on %s (%q); want the device", rep.Device, rep.Notice)
	}
	if worst, _, err := c.U8Diff(got); err != nil || worst > 1 {
		t.Fatalf("the device's picture is %d levels from the reference (%v)", worst, err)
	}
}
