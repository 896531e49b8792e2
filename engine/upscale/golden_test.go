package upscale_test

import (
	"context"
	"image"
	"math"
	"path/filepath"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/upscale"
	"easel/internal/golden"
)

func refCases(t testing.TB) []*golden.UpscaleCase {
	t.Helper()
	cases, err := golden.UpscaleCases()
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// checkConfig compares what Detect read from the tensors with the case's meta.
func checkConfig(t *testing.T, rc *golden.UpscaleCase, cfg *upscale.Config) {
	t.Helper()
	if string(cfg.Arch) != rc.Str("arch") || cfg.Scale != rc.Int("scale") || cfg.Features != rc.Int("num_feat") {
		t.Fatalf("detected %s; meta says %v", cfg, rc.Meta)
	}
	switch cfg.Arch {
	case upscale.RRDBNet:
		if cfg.Blocks != rc.Int("num_block") || cfg.Growth != rc.Int("num_grow_ch") {
			t.Fatalf("detected %s; meta says %v", cfg, rc.Meta)
		}
	case upscale.SRVGGNetCompact:
		if cfg.Convs != rc.Int("num_conv") {
			t.Fatalf("detected %s; meta says %v", cfg, rc.Meta)
		}
	}
}

// inputPlanes is the case's RGB as [3, H, W] in [0, 1].
func inputPlanes(img *image.NRGBA) upscale.Planes {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	p := upscale.Planes{C: 3, H: h, W: w, Data: make([]float32, 3*h*w)}
	for i := 0; i < h*w; i++ {
		for c := 0; c < 3; c++ {
			p.Data[c*h*w+i] = float32(img.Pix[4*i+c]) / 255
		}
	}
	return p
}

// checkF32 compares with output_f32 to 1e-4 of its range.
func checkF32(t *testing.T, what string, got upscale.Planes, want []float32, shape []int) {
	t.Helper()
	if len(shape) != 3 || got.C != shape[0] || got.H != shape[1] || got.W != shape[2] {
		t.Fatalf("%s: output %d×%d×%d, want %v", what, got.C, got.H, got.W, shape)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range want {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	d := golden.MaxAbsErr(got.Data, want)
	if rel := d / (hi - lo); !(rel <= 1e-4) {
		t.Fatalf("%s: output_f32 differs by %.3g (%.3g of its range %.3g), want ≤ 1e-4 of it", what, d, rel, hi-lo)
	}
	t.Logf("%s: output_f32 within %.2g of its range", what, d/(hi-lo))
}

// checkU8 compares a picture with output_u8 within limit levels.
func checkU8(t *testing.T, what string, got *image.NRGBA, rc *golden.UpscaleCase, limit int) {
	t.Helper()
	worst, off, err := rc.U8Diff(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if worst > limit {
		t.Fatalf("%s: output_u8 differs by up to %d levels (%d values differ), want ≤ %d", what, worst, off, limit)
	}
	t.Logf("%s: output_u8 within %d level(s), %d of %d values differ", what, worst, off, len(rc.OutU8))
}

// TestGoldenCPU runs every case's every weight file on the CPU backend: the detected geometry is
// the meta's, the network output matches output_f32, the picture output_u8, and the files of one
// case give the same picture.
func TestGoldenCPU(t *testing.T) {
	for _, rc := range refCases(t) {
		t.Run(rc.Name, func(t *testing.T) {
			var first *image.NRGBA
			for _, file := range rc.Files {
				layout := rc.Layouts[file]
				m, err := upscale.Open(cpu.New(), file)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				checkConfig(t, rc, m.Config())
				if m.Config().Layout != layout {
					t.Fatalf("%s: detected the %s layout, meta says %s", file, m.Config().Layout, layout)
				}
				what := filepath.Base(file)
				in := inputPlanes(rc.Input)
				if u := max(1, m.Config().Unshuffle); in.H%u == 0 && in.W%u == 0 {
					out, err := m.Run(context.Background(), in, upscale.Tiling{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					checkF32(t, what, out, rc.OutF32, rc.OutShape)
				}
				pic, err := m.Picture(context.Background(), rc.Input, upscale.Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkU8(t, what, pic, rc, 1)
				if first == nil {
					first = pic
				} else if string(first.Pix) != string(pic.Pix) {
					t.Fatalf("%s gives another picture than the case's other weight files", what)
				}
			}
		})
	}
}
