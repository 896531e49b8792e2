package upscalemetal_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"easel/engine/upscale"
	"easel/engine/upscale/upscalemetal"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// The emulated device's bounds (docs/METAL.md §6.7): the convolutions stage half operands, so the
// network output is a few half roundoffs from the reference, and the picture at most one level.
const (
	f32Bound = 2e-3 // of output_f32's range
	u8Bound  = 1    // levels of output_u8
)

// smallCases are the reference cases with the smallest outputs, one per architecture and unshuffle
// factor and the one with alpha (the emulator is slow; the largest case is for tiling, on the CPU).
func smallCases(t *testing.T) []*golden.UpscaleCase {
	cases, err := golden.UpscaleCases()
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	for i, c := range cases {
		if len(c.OutU8) > len(cases[largest].OutU8) {
			largest = i
		}
	}
	if len(cases) > 1 {
		cases = append(cases[:largest:largest], cases[largest+1:]...)
	}
	return cases
}

// TestEmuGolden runs every small case on the emulated device against its reference.
func TestEmuGolden(t *testing.T) {
	dev := testdevice.Device(t, emu.Options{})
	for _, rc := range smallCases(t) {
		t.Run(rc.Name, func(t *testing.T) {
			file := rc.Files[0]
			s, err := upscale.ReadState(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, canon, err := upscale.Detect(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(cfg.Arch) != rc.Str("arch") || cfg.Scale != rc.Int("scale") {
				t.Fatalf("detected %s, meta says %v", cfg, rc.Meta)
			}
			u, err := upscalemetal.New(dev, cfg, canon)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			w, h := rc.Input.Rect.Dx(), rc.Input.Rect.Dy()
			if un := max(1, cfg.Unshuffle); w%un == 0 && h%un == 0 {
				in := upscale.Planes{C: 3, H: h, W: w, Data: make([]float32, 3*h*w)}
				for i := 0; i < h*w; i++ {
					for c := 0; c < 3; c++ {
						in.Data[c*h*w+i] = float32(rc.Input.Pix[4*i+c]) / 255
					}
				}
				out, err := u.RunPlanes(context.Background(), in, upscale.Tiling{})
				if err != nil {
					t.Fatal(err)
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, v := range rc.OutF32 {
					lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
				}
				rel := golden.MaxAbsErr(out.Data, rc.OutF32) / (hi - lo)
				if !(rel <= f32Bound) {
					t.Fatalf("%s: output_f32 differs by %.3g of its range, bound %g", filepath.Base(file), rel, f32Bound)
				}
				t.Logf("%s: output_f32 within %.2g of its range", filepath.Base(file), rel)
			}
			pic, err := u.Picture(context.Background(), rc.Input, upscale.Options{})
			if err != nil {
				t.Fatal(err)
			}
			worst, off, err := rc.U8Diff(pic)
			if err != nil {
				t.Fatal(err)
			}
			if worst > u8Bound {
				t.Fatalf("%s: output_u8 differs by up to %d levels (%d values), bound %d", filepath.Base(file), worst, off, u8Bound)
			}
			t.Logf("%s: output_u8 within %d level(s), %d of %d values differ", filepath.Base(file), worst, off, len(rc.OutU8))
		})
	}
}
