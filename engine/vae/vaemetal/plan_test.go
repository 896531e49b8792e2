package vaemetal

import (
	"testing"

	"easel/engine/ml/metalops"
	"easel/engine/vae"
	"easel/kernels/device"
)

// The config-only plans (what app/memplan counts) are the device model's own dry run plus the
// score buffer: the device backend's channel norm is the one PlanDecodeFor assumes, so the plan
// of the model bound to the device and the free functions agree, in one piece, in tiles and for
// an encode.
func TestEmuPlanForMatchesTheDeviceModel(t *testing.T) {
	_, gpu, _ := models(t, device.Limits{})
	m := gpu.Model()
	cfg := m.Config()
	for _, c := range []struct {
		h, w   int
		tiling *vae.Tiling
	}{{6, 4, nil}, {12, 9, nil}, {12, 9, &vae.Tiling{Tile: 8, Overlap: 4}}} {
		p, err := m.PlanDecode(c.h, c.w, c.tiling)
		if err != nil {
			t.Fatal(err)
		}
		th, tw := c.h, c.w
		if c.tiling != nil {
			th, tw = min(c.h, c.tiling.Tile), min(c.w, c.tiling.Tile)
		}
		want := p.PeakActivationBytes + metalops.AttentionScratchBytes(th*tw, th*tw, 1)
		got, err := PlanDecodeFor(cfg, c.h, c.w, c.tiling)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("decode %d×%d tiling %v: PlanDecodeFor %d, the device model's dry run %d", c.h, c.w, c.tiling, got, want)
		}
	}
	s := cfg.Scale()
	p, err := m.PlanEncode(6*s, 4*s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PlanEncodeFor(cfg, 6*s, 4*s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := p.PeakActivationBytes + metalops.AttentionScratchBytes(24, 24, 1); got != want {
		t.Errorf("encode: PlanEncodeFor %d, the device model's dry run %d", got, want)
	}
	tiling := vae.Tiling{Tile: 4, Overlap: 2}
	if p, err = m.PlanEncodeTiled(12*s, 9*s, tiling); err != nil {
		t.Fatal(err)
	}
	if got, err = PlanEncodeFor(cfg, 12*s, 9*s, &tiling); err != nil {
		t.Fatal(err)
	}
	if want := p.PeakActivationBytes + metalops.AttentionScratchBytes(16, 16, 1); got != want {
		t.Errorf("tiled encode: PlanEncodeFor %d, the device model's dry run %d", got, want)
	}
}
