package vaemetal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"easel/engine/ml/metal"
	"easel/kernels/device"
)

// A device with room for the weights but not for a decode's activations declines each call; the
// Runner then decodes and encodes on the CPU, and the result is the CPU's, bit for bit.
func TestEmuVAEForcedDeclineGivesTheCPUResult(t *testing.T) {
	_, probe, _ := models(t, device.Limits{})
	resident := probe.ResidentBytes() + probe.WeightBytes()
	cpuModel, gpu, _ := models(t, device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: resident + 1024})
	var reasons []string
	r, err := NewRunner(gpu, cpuModel, func(d *metal.Declined) {
		reasons = append(reasons, d.Reason)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range vaeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			reasons = nil
			_, err := gpu.Decode(ctx, c.zn)
			t.Log(err)
			if !isDeclined(err) || !strings.Contains(err.Error(), "recommended working set") {
				t.Fatalf("decode on a device without room: %v, want a decline naming the working set", err)
			}
			want, err := cpuModel.Decode(ctx, c.zn)
			if err != nil {
				t.Fatal(err)
			}
			got, onDevice, err := r.Decode(ctx, c.zn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if onDevice || len(reasons) != 1 {
				t.Errorf("the runner ran on the device %v, with %d declines logged; want the CPU after one", onDevice, len(reasons))
			}
			if !slices.Equal(got.Pix, want.Pix) {
				t.Error("the declined decode differs from the CPU decode")
			}
			tiling := tilingFor(c.zn)
			wantT, err := cpuModel.DecodeTiled(ctx, c.zn, tiling)
			if err != nil {
				t.Fatal(err)
			}
			gotT, _, err := r.Decode(ctx, c.zn, &tiling)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotT.Pix, wantT.Pix) {
				t.Error("the declined tiled decode differs from the CPU tiled decode")
			}
			wantMode, wantNorm, err := cpuModel.Encode(ctx, c.img)
			if err != nil {
				t.Fatal(err)
			}
			mode, norm, onDevice, err := r.Encode(ctx, c.img, nil)
			if err != nil {
				t.Fatal(err)
			}
			if onDevice || !slices.Equal(mode.Data, wantMode.Data) || !slices.Equal(norm.Data, wantNorm.Data) {
				t.Errorf("the declined encode ran on the device (%v) or differs from the CPU encode", onDevice)
			}
			encTiling := encodeTilingFor(c.img)
			wantMode, wantNorm, err = cpuModel.EncodeTiled(ctx, c.img, encTiling)
			if err != nil {
				t.Fatal(err)
			}
			mode, norm, onDevice, err = r.Encode(ctx, c.img, &encTiling)
			if err != nil {
				t.Fatal(err)
			}
			if onDevice || !slices.Equal(mode.Data, wantMode.Data) || !slices.Equal(norm.Data, wantNorm.Data) {
				t.Errorf("the declined tiled encode ran on the device (%v) or differs from the CPU tiled encode", onDevice)
			}
		})
	}
}

func isDeclined(err error) bool {
	var d *metal.Declined
	return errors.As(err, &d)
}

// Devices too small for the weights decline the model with a sentence naming the limit.
func TestEmuVAEDeclinesTheModel(t *testing.T) {
	f := tinyFile(t)
	for _, tc := range []struct {
		limits device.Limits
		want   string
	}{
		{device.Limits{MaxBufferLength: 16 << 10, RecommendedMaxWorkingSetSize: 1 << 30}, "largest buffer"},
		{device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: 64 << 10}, "recommended working set"},
	} {
		_, err := New(emuDevice(t, tc.limits), f, f.Bytes())
		t.Logf("limits %+v: %v", tc.limits, err)
		if !isDeclined(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("limits %+v: %v, want a decline naming the %s", tc.limits, err, tc.want)
		}
	}
}
