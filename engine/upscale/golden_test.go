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

// refCase is one upscale_* reference case, every fact read from its meta.
type refCase struct {
	name     string
	meta     map[string]any
	input    *image.NRGBA
	channels int
	outF32   []float32
	outShape []int
	outU8    []uint8
	files    map[string]string // weight file path → its layout
}

func refCases(t testing.TB) []refCase {
	t.Helper()
	paths, err := golden.RefCases("upscale")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no upscale_* reference cases: %v", err)
	}
	var out []refCase
	for _, p := range paths {
		c, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		rc := refCase{name: c.Name, meta: c.Meta, files: map[string]string{}}
		in, err := c.Tensor("input_u8")
		if err != nil {
			t.Fatal(err)
		}
		h, w, ch := in.Shape[0], in.Shape[1], in.Shape[2]
		if hw := ints(t, c.Meta, "input_hw"); hw[0] != h || hw[1] != w || num(t, c.Meta, "channels") != ch {
			t.Fatalf("%s: input_u8 %v disagrees with meta input_hw %v, channels %v", c.Name, in.Shape, hw, c.Meta["channels"])
		}
		rc.channels = ch
		rc.input = image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := 0; i < h*w; i++ {
			for k := 0; k < 4; k++ {
				v := uint8(255)
				if k < ch {
					v = in.Data[i*ch+k]
				}
				rc.input.Pix[4*i+k] = v
			}
		}
		if rc.outF32, rc.outShape, err = c.Float32s("output_f32"); err != nil {
			t.Fatal(err)
		}
		u8, err := c.Tensor("output_u8")
		if err != nil {
			t.Fatal(err)
		}
		rc.outU8 = append([]uint8(nil), u8.Data...)
		ws, _ := c.Meta["weights"].(map[string]any)
		for layout, files := range ws {
			for _, f := range files.([]any) {
				rc.files[filepath.Join(filepath.Dir(p), f.(string))] = layout
			}
		}
		if len(rc.files) == 0 {
			t.Fatalf("%s: meta names no weight files", c.Name)
		}
		c.Close()
		out = append(out, rc)
	}
	return out
}

func num(t testing.TB, meta map[string]any, key string) int {
	v, ok := meta[key].(float64)
	if !ok {
		t.Fatalf("meta has no number %q: %v", key, meta)
	}
	return int(v)
}

func ints(t testing.TB, meta map[string]any, key string) []int {
	a, ok := meta[key].([]any)
	if !ok {
		t.Fatalf("meta has no list %q", key)
	}
	out := make([]int, len(a))
	for i, v := range a {
		out[i] = int(v.(float64))
	}
	return out
}

// checkConfig compares what Detect read from the tensors with the case's meta.
func checkConfig(t *testing.T, rc refCase, cfg *upscale.Config) {
	t.Helper()
	if string(cfg.Arch) != rc.meta["arch"].(string) || cfg.Scale != num(t, rc.meta, "scale") || cfg.Features != num(t, rc.meta, "num_feat") {
		t.Fatalf("detected %s; meta says %v", cfg, rc.meta)
	}
	switch cfg.Arch {
	case upscale.RRDBNet:
		if cfg.Blocks != num(t, rc.meta, "num_block") || cfg.Growth != num(t, rc.meta, "num_grow_ch") {
			t.Fatalf("detected %s; meta says %v", cfg, rc.meta)
		}
	case upscale.SRVGGNetCompact:
		if cfg.Convs != num(t, rc.meta, "num_conv") {
			t.Fatalf("detected %s; meta says %v", cfg, rc.meta)
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

// checkU8 compares a picture with output_u8 (HWC, the case's channels) within limit levels.
func checkU8(t *testing.T, what string, got *image.NRGBA, want []uint8, channels, limit int) {
	t.Helper()
	n := got.Rect.Dx() * got.Rect.Dy()
	if n*channels != len(want) {
		t.Fatalf("%s: %v picture, want %d values", what, got.Rect, len(want))
	}
	worst, off := 0, 0
	for i := 0; i < n; i++ {
		for c := 0; c < channels; c++ {
			d := int(got.Pix[4*i+c]) - int(want[i*channels+c])
			if d < 0 {
				d = -d
			}
			if d > 0 {
				off++
			}
			worst = max(worst, d)
		}
	}
	if worst > limit {
		t.Fatalf("%s: output_u8 differs by up to %d levels (%d values differ), want ≤ %d", what, worst, off, limit)
	}
	t.Logf("%s: output_u8 within %d level(s), %d of %d values differ", what, worst, off, len(want))
}

// TestGoldenCPU runs every case's every weight file on the CPU backend: the detected geometry is
// the meta's, the network output matches output_f32, the picture output_u8, and the files of one
// case give the same picture.
func TestGoldenCPU(t *testing.T) {
	for _, rc := range refCases(t) {
		t.Run(rc.name, func(t *testing.T) {
			var first *image.NRGBA
			for file, layout := range rc.files {
				m, err := upscale.Open(cpu.New(), file)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				checkConfig(t, rc, m.Config())
				if m.Config().Layout != layout {
					t.Fatalf("%s: detected the %s layout, meta says %s", file, m.Config().Layout, layout)
				}
				what := filepath.Base(file)
				in := inputPlanes(rc.input)
				if u := max(1, m.Config().Unshuffle); in.H%u == 0 && in.W%u == 0 {
					out, err := m.Run(context.Background(), in, upscale.Tiling{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					checkF32(t, what, out, rc.outF32, rc.outShape)
				}
				pic, err := m.Picture(context.Background(), rc.input, upscale.Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkU8(t, what, pic, rc.outU8, rc.channels, 1)
				if first == nil {
					first = pic
				} else if string(first.Pix) != string(pic.Pix) {
					t.Fatalf("%s gives another picture than the case's other weight files", what)
				}
			}
		})
	}
}
